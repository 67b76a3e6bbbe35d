"""Runtime words of the mapped PE programs: every variable and buffer that a program keeps
in its memory, with its type, who writes it and who reads it.

The program parts declare their variables from this table, and the host side (``Plan``,
``Trainer``) addresses them through it (``plan.set_word(words.V_MODE, 1)``), so the
coupling between the programs and the host shows in the imports, as ``task_ids`` does for
task ids. ``kind``: "u16" (a 16-bit word the first 512 bytes hold, where ``ld16`` /
``st16`` reach [0603]), "value" (one number in the plan's format, fp32 or fp16) or
"buffer" (a vector whose length depends on the PE). ``where``: the PEs that have it.
``writer``: "host" (the Plan or the Trainer writes it before a run), "assembler" (a
constant of the program), "program" (the PE's own state; the host may reset it).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Word", "WORDS", "by_name", "declare"]


@dataclass(frozen=True)
class Word:
    name: str
    kind: str                # "u16", "value" or "buffer"
    where: str               # "all", "layer0", "not layer0", "finalizers", "output finalizers", "joins"
    writer: str              # "host", "assembler" or "program"
    readers: str             # tasks (and host calls) that read it
    what: str
    init: int = 0            # initial value of a u16 word
    elem: str = "value"      # a buffer's elements: "value" (the plan's format) or "u16"


def _u(name, where, writer, readers, what, init=0):
    return Word(name, "u16", where, writer, readers, what, init)


# -- every PE: modes the Trainer sets ---------------------------------------------------
V_MODE = _u("v_mode", "all", "host", "fp_count, fp_end", "bit 0: keep activations for a backward pass")
V_CPM = _u("v_cpm", "all", "host", "setup, own, bp_end, bias update",
           "chain pass: 0 = update W in place (SGD), 1 = accumulate G")
V_K = _u("v_k", "all", "host", "admit", "samples in flight allowed now (<= slots)", 1)
# -- every PE: the program's own state ----------------------------------------------------
V_INFL = _u("v_infl", "all", "program", "admit", "samples forwarded whose backward pass has not ended")
V_FPBUSY = _u("v_fpbusy", "all", "program", "admit", "between the activation closeout and the chain's end")
V_BFULL = _u("v_bfull", "all", "program", "admit", "the mini-batch is complete: wait for its update")
V_FLAG = _u("v_flag", "all", "program", "fp_count, senders", "the sample being forwarded ends a mini-batch")
V_BFLAG = _u("v_bflag", "all", "program", "bp_end", "the sample being back-propagated ends a mini-batch")
V_GCNT = _u("v_gcnt", "all", "program", "apply; the host resets it",
           "samples accumulated into G since the last update")
V_FPSL = _u("v_fpsl", "all", "program", "f_act (via FSLOT), fin3", "forward slot index")
V_BPSL = _u("v_bpsl", "all", "program", "bp_end, dfin", "backward slot index")
V_N1 = _u("v_n1", "all", "host", "apply", "update scale 1 applies to batches of v_n1 samples", 1)
V_FPC = _u("v_fpc", "all", "host", "config", "FP control register value, the config task loads it ...")
V_SEED = _u("v_seed", "all", "host", "config", "seed of the random-number resource (config task)", 1)
V_RCM = _u("v_rcm", "recomputing finalizers", "program", "fin3, senders",
           "a replay's sums are being finalized (reverse checkpoint, recompute.py)")
V_RCD = _u("v_rcd", "discarding finalizers", "program", "dfin",
           "the recompute's closeout has run for the sample (reverse checkpoint)")
V_RCW = _u("v_rcw", "discarding finalizers", "program", "r_close",
           "the delta pass waits for the recompute (reverse checkpoint)")
V_RCQ = _u("v_rcq", "segment PEs", "program", "rc_try",
           "recompute triggers queued here (reverse checkpoint)")
V_RCB = _u("v_rcb", "segment PEs", "program", "rc_try, bp_end",
           "a recompute started here whose backward pass has not ended (reverse checkpoint)")
# -- every PE: constants of the placement -------------------------------------------------
C_I0 = _u("c_i0", "all", "assembler", "main", "first input of I_r")
C_ROWB = _u("c_rowb", "all", "assembler", "main", "bytes per stored row of W")
C_O0 = _u("c_o0", "all", "assembler", "main", "first output of O_c")
C_OEND = _u("c_oend", "all", "assembler", "-", "end of O_c")
# -- finalizers ---------------------------------------------------------------------------
V_FLAGS = Word("v_flags", "buffer", "finalizers", "program", "fp_count, dfin",
               "per slot: the sample ends a mini-batch", elem="u16")
V_JCNT = _u("v_jcnt", "finalizers", "program", "jadmit",
           "forward passes done whose backward pass has not started")
V_TXP = _u("v_txp", "finalizers", "program", "tx",
           "activation sender: next element, resume point, closeout out")
V_TXPC = _u("v_txpc", "finalizers", "program", "tx", "")
V_TXS = _u("v_txs", "finalizers", "program", "tx", "")
V_DXP = _u("v_dxp", "finalizers", "program", "dx", "delta sender: the same")
V_DXPC = _u("v_dxpc", "finalizers", "program", "dx", "")
V_DXS = _u("v_dxs", "finalizers", "program", "dx", "")
V_DFLAG = _u("v_dflag", "finalizers", "program", "dfin, senders",
           "the back-propagated sample ends a mini-batch")
V_DPBUSY = _u("v_dpbusy", "finalizers", "program", "jadmit", "a backward pass is in progress here")
# -- joins of residual and two-branch blocks -------------------------------------------
V_SKN = _u("v_skn", "joins", "program", "fin3, sk_in", "skip vectors in the FIFO")
V_SKW = _u("v_skw", "joins", "program", "sk_in", "the activations wait for a skip vector")
V_SKIDLE = _u("v_skidle", "joins", "program", "fin3", "the FIFO is full: the skip color is blocked")
V_SKRD = _u("v_skrd", "joins", "program", "fin3", "byte offsets of the FIFO slots to read and to write")
V_SKWR = _u("v_skwr", "joins", "program", "sk_first, sk_read, sk_in", "")
V_BBUSY = _u("v_bbusy", "joins", "program", "jadmit", "dL/dy is being sent back")
# -- numbers in the plan's format -----------------------------------------------------
C_NEGLR = Word("c_neglr", "value", "all", "host", "setup, own, bias update", "-learning rate")
C_S1 = Word("c_s1", "value", "all", "host", "apply", "update scale for batches of v_n1 samples")
C_S2 = Word("c_s2", "value", "all", "host", "apply", "update scale for other batch sizes")
C_ATHR = Word("c_athr", "value", "finalizers", "host", "tx; Plan.set_activation_threshold",
              "activation threshold t: |a| <= t is not sent (EC411; only with one)")
# -- buffers ------------------------------------------------------------------------------
W = Word("w", "buffer", "all", "host", "f_act, b_delta, apply; Plan.read_weights",
     "W[O_c, I_r] transposed: a row of |O_c| weights per input, then the activation slots")
G = Word("g", "buffer", "all", "program", "apply; the host clears it", "accumulated gradient G")
FPSUM = Word("fpsum", "buffer", "all", "program", "f_close", "forward partial sums")
DPSUM = Word("dpsum", "buffer", "not layer0", "program", "b_close", "delta partial sums")
Z = Word("z", "buffer", "finalizers", "program", "fin3", "the column's sums: z = W a + b")
BIAS = Word("bias", "buffer", "finalizers", "host", "fin3, bias update; Plan.read_weights", "b[O_c]")
GB = Word("gb", "buffer", "finalizers", "program", "apply; the host clears it",
     "accumulated bias gradient")
ASLOTS = Word("aslots", "buffer", "finalizers", "program", "fin3, dfin", "activations, one vector per slot")
TOT = Word("tot", "buffer", "finalizers", "program", "dfin", "delta sums (or targets) of a sample")
FPR = Word("fpr", "buffer", "finalizers", "program", "dfin", "f'(a)")
DELTA = Word("delta", "buffer", "finalizers", "program", "dx, own; Trainer.delta", "the sample's deltas")
SKF = Word("skf", "buffer", "joins", "program", "fin3", "the skip FIFO")
YBUF = Word("ybuf", "buffer", "joins", "program", "fin3", "y = f(x) + skip")

WORDS: tuple[Word, ...] = (V_MODE, V_CPM, V_K, V_INFL, V_FPBUSY, V_BFULL, V_FLAG, V_BFLAG,
                           V_GCNT, V_FPSL, V_BPSL, V_N1, V_FPC, V_SEED, V_RCM, V_RCD, V_RCW, V_RCQ,
                           V_RCB, C_I0,
                           C_ROWB, C_O0,
                           C_OEND, V_FLAGS, V_JCNT, V_TXP, V_TXPC, V_TXS, V_DXP, V_DXPC,
                           V_DXS, V_DFLAG, V_DPBUSY, V_SKN, V_SKW, V_SKIDLE, V_SKRD, V_SKWR,
                           V_BBUSY, C_NEGLR, C_S1, C_S2, C_ATHR, W, G, FPSUM, DPSUM, Z, BIAS, GB,
                           ASLOTS, TOT, FPR, DELTA, SKF, YBUF)

by_name = {w.name: w for w in WORDS}


def add(word: Word) -> Word:
    """Registers a word of a plug-in (a loss, an optimizer, an activation): its lowering
    declares it and its host side writes it. Names are unique."""
    old = by_name.get(word.name)
    if old is not None and old != word:
        raise ValueError(f"runtime word {word.name!r} is already registered differently")
    by_name[word.name] = word
    return word


def declare(word: Word, *, init: int | None = None, value_type: str | None = None,
            count: int | None = None) -> str:
    """The data directive of ``word``: a u16 word with its initial value (``init``
    overrides the table's, for constants of the placement), a "value" word as one element
    of ``value_type`` ("fp32" / "fp16"), a buffer as ``count`` elements of it."""
    label = f"{word.name + ':':<10}"
    note = f"  ; {word.what}" if word.what else ""
    if word.kind == "u16":
        return f"{label}.u16 {word.init if init is None else init}{note}"
    if word.kind == "value":
        return f"{label}.space {value_type}, 1{note}"
    return f"{label}.space {'u16' if word.elem == 'u16' else value_type}, {count}{note}"
