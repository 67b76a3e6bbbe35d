"""CPGD bookkeeping of a PE (continuous propagation, FIG. 27C, [0624]-[0649]): compiled
only into plans mapped with ``ws.map(..., cpgd=True)``, so that SGD and mini-batch
programs keep their instructions and cycles.

CPGD itself needs no new code: it is per-sample SGD with the weights updated in place
delta by delta [0617], with up to ``window`` samples in flight per PE (the admission word
``v_k``); the next forward pass reads whatever weights are stored when its activations
arrive [0625], [0647] (seed 001, claims 3-4). What this part adds is measurement, all as
CE instructions on PE memory:

* **Staleness** [0648]: ``v_upd`` counts the weight updates this PE has completed (its
  delta closeout, after every column of the sample is updated). The activation closeout
  stores ``v_upd`` in the sample's slot of ``v_fver``; the delta closeout of the same
  sample takes the difference (the updates that happened here between the sample's
  forward pass and its own update) and counts it in the histogram ``v_shist`` (the last
  bin collects larger values; with ``window`` samples in flight it stays below window).
* **Order log** (``order_log=N``, for tests): the exact interleaving of forward reads and
  updates on this PE, so that a reference can replay it bit for bit. ``v_nact`` counts
  ``f_act`` tasks (each reads one row of W); every ``b_delta`` (updates one column) and
  every own block pass of a finalizer (updates all of its columns in one task) writes the
  current ``v_nact`` into ``olog``. A finalizer also writes, at each activation closeout
  (the task that adds the bias to its sums), how many bias updates it has done
  (``v_bupd``) into ``blog``. With a reverse checkpoint, every PE of a segment writes,
  when its recompute of a sample starts (the kept layer's ``r_replay``, a discarding
  layer's ``r_mode``), how many ``olog`` entries came before it into ``rlog``: the
  weights the recompute reads ([0615]); a discarding layer's ``f_act`` tasks of the
  recompute are kept out of ``v_nact`` (saved in ``v_rnact`` at the start, restored by
  ``r_close``), so that ``olog`` counts forward reads only. Each log keeps its first N
  entries.

CPGD with mini-batches ([0636]; ``Trainer(algo="cpgd", batch_size=B)``): the chain pass
accumulates G (``v_cpm`` = 1) and each PE applies the batch's mean in its update task at
its own end of the batch's last backward pass, while samples of the next batch are
already in flight (``v_pipe`` = 1). Then the update task, not the chain pass, changes W:
the setup task stores ``v_inpl`` = 1 - ``v_cpm``, the delta closeout adds it to
``v_upd`` (so it counts nothing there), the update task counts the update, logs it and
counts the bias update, and the chain pass's log entries are skipped (``v_cpm`` = 1), so
the log has one entry per update task, as with an optimizer with state; the staleness
histogram then counts batch updates (docs/training.md, "CPGD with mini-batches").

With an optimizer that does not update in place (momentum, weight decay, Nesterov, Adam)
the chain pass accumulates G and every sample ends with the update task (``ap``, a
mini-batch of one: the optimizer's rule on every weight and bias of the PE, as under
SGD), run at this PE's end of the sample's backward pass without waiting for any other
PE. The runtime word ``v_pipe`` (1 under ``algo="cpgd"``) keeps that end of a "mini-batch"
from holding the next sample's activations (``v_bfull``), so samples stay in flight. The
order log then has one entry per update task (all of the PE's columns), and ``v_bupd``
counts update tasks.
"""

from __future__ import annotations

from .. import runtime_words as W
from . import cpgd_snapshot
from .idioms import bump
from .spec import PeSpec

__all__ = ["words", "descriptors", "buffers", "bodies", "act_counted", "forward_closed", "delta_logged",
           "own_logged", "update_done", "bias_done", "pipelined", "applied", "recompute_logged",
           "recompute_uncounted", "setup_counting", "V_UPD", "V_INPL", "V_FVER", "V_SHIST",
           "OLOG", "BLOG", "RLOG", "V_NACT", "V_OCNT", "V_BUPD", "V_BCNT", "V_RNACT", "V_RCNT", "V_PIPE"]

V_UPD = W.add(W.Word("v_upd", "u16", "all", "program", "f_close, b_close (CPGD)",
                     "weight updates completed at this PE (CPGD)"))
V_PIPE = W.add(W.Word("v_pipe", "u16", "all", "Trainer (algo='cpgd')", "fp_count (CPGD)",
                      "1: the end of a sample's update batch does not hold the next sample"))
V_INPL = W.add(W.Word("v_inpl", "u16", "all", "setup (1 - v_cpm; CPGD, in-place optimizers)",
                      "b_close (CPGD)",
                      "1: the chain pass updates W and the delta closeout counts it"))
V_NACT = W.add(W.Word("v_nact", "u16", "all", "program", "b_delta, own (CPGD order log)",
                      "f_act tasks run (CPGD order log)"))
V_OCNT = W.add(W.Word("v_ocnt", "u16", "all", "program", "b_delta, own (CPGD order log)",
                      "entries written to olog"))
V_BUPD = W.add(W.Word("v_bupd", "u16", "finalizers", "program", "f_close (CPGD order log)",
                      "bias updates done (CPGD order log)"))
V_BCNT = W.add(W.Word("v_bcnt", "u16", "finalizers", "program", "f_close (CPGD order log)",
                      "entries written to blog"))
V_FVER = W.add(W.Word("v_fver", "buffer", "all", "program", "b_close (CPGD)",
                      "per slot: v_upd at the sample's activation closeout", elem="u16"))
V_SHIST = W.add(W.Word("v_shist", "buffer", "all", "program", "TrainStats.staleness",
                       "histogram of the staleness of this PE's updates", elem="u16"))
OLOG = W.add(W.Word("olog", "buffer", "all", "program", "tests (CPGD order log)",
                    "v_nact at each column update (b_delta) or own block pass", elem="u16"))
BLOG = W.add(W.Word("blog", "buffer", "finalizers", "program", "tests (CPGD order log)",
                    "v_bupd at each activation closeout", elem="u16"))
V_RNACT = W.add(W.Word("v_rnact", "u16", "segment PEs", "rc_try (CPGD order log)", "r_close",
                       "v_nact when a recompute started (its f_act tasks are not counted)"))
V_RCNT = W.add(W.Word("v_rcnt", "u16", "segment PEs", "program", "rc_try (CPGD order log)",
                      "entries written to rlog"))
RLOG = W.add(W.Word("rlog", "buffer", "segment PEs", "program", "tests (CPGD order log)",
                    "v_ocnt at each recompute's start (reverse checkpoint)", elem="u16"))


def _recomputes(s: PeSpec) -> bool:
    """A PE of a reverse checkpoint's segment, with the order log."""
    return bool(s.cpgd and s.order_log and s.rc is not None)


def words(s: PeSpec) -> list[str]:
    """The u16 counters (they must sit in the first 512 bytes, where ld16 / st16 reach)."""
    if not s.cpgd:
        return []
    L = [W.declare(V_UPD), W.declare(V_PIPE)]
    if not _at_apply(s):
        L.append(W.declare(V_INPL))
    if s.order_log:
        L += [W.declare(V_NACT), W.declare(V_OCNT)]
        if s.final and s.bias:
            L += [W.declare(V_BUPD), W.declare(V_BCNT)]
        if _recomputes(s):
            L += [W.declare(V_RNACT), W.declare(V_RCNT)]
    return L + cpgd_snapshot.words(s)


def descriptors(s: PeSpec) -> list[str]:
    """One-element u16 stores with WLI (r4 = byte offset), after the u16 words (DSR loads
    reach 1024 bytes)."""
    if not s.cpgd:
        return []
    L = ["d_fverw:  .dsd mem1d, base=v_fver, length=1, stride=2, wli=1",
         "d_shistw: .dsd mem1d, base=v_shist, length=1, stride=2, wli=1"]
    if s.order_log:
        L.append("d_ologw:  .dsd mem1d, base=olog, length=1, stride=2, wli=1")
        if s.final and s.bias:
            L.append("d_blogw:  .dsd mem1d, base=blog, length=1, stride=2, wli=1")
        if _recomputes(s):
            L.append("d_rlogw:  .dsd mem1d, base=rlog, length=1, stride=2, wli=1")
    return L + cpgd_snapshot.descriptors(s)


def buffers(s: PeSpec) -> tuple[list[str], list[str]]:
    """(declarations, exports) of the per-slot versions, the histogram and the logs."""
    if not s.cpgd:
        return [], []
    L = [W.declare(V_FVER, count=s.slots), W.declare(V_SHIST, count=s.slots)]
    names = ["v_upd", "v_pipe", "v_fver", "v_shist"] + ([] if _at_apply(s) else ["v_inpl"])
    if s.order_log:
        L.append(W.declare(OLOG, count=s.order_log))
        names += ["v_nact", "v_ocnt", "olog"]
        if s.final and s.bias:
            L.append(W.declare(BLOG, count=s.order_log))
            names += ["v_bupd", "v_bcnt", "blog"]
        if _recomputes(s):
            L.append(W.declare(RLOG, count=s.order_log))
            names += ["v_rcnt", "rlog"]
    snap, snap_names = cpgd_snapshot.buffers(s)
    return L + snap + [".align 4"], names + snap_names


def _log(counter: str, value: str, dsd: str, limit: int, skip: str) -> list[str]:
    """log[counter] = value while counter < limit; counter += 1 (it counts every entry,
    so a log that filled shows). Uses r0 and r4 only."""
    return [f"        ld16 r4, {counter}",
            f"        li r0, {limit}",
            "        lt16 r4, r0",
            f"        bf {skip}",
            "        add16 r4, r4, r4",
            f"        ld16 r0, {value}",
            f"        lddwds  D[11], {dsd}",
            "        mov16 D[11], r0",
            f"{skip}:",
            f"        ld16 r0, {counter}",
            "        addi r0, 1",
            f"        st16 r0, {counter}"]


def act_counted(s: PeSpec) -> list[str]:
    """In f_act, before its last instruction: one more row of W read (order log)."""
    return bump("v_nact", 1) if s.cpgd and s.order_log else []


def forward_closed(s: PeSpec) -> list[str]:
    """In the activation closeout (all of the sample's f_act tasks have run here): the
    updates completed so far, into the sample's slot of v_fver; at a finalizer with the
    order log, the bias updates done (this task adds the bias to the sums next)."""
    return ["        jmp cpfc", "cpfcr:"] if s.cpgd else []


def _forward_closed_body(s: PeSpec) -> list[str]:
    L = [";@pass control",
         "cpfc:   ld16 r4, v_fpsl",
         "        add16 r4, r4, r4",
         "        ld16 r0, v_upd",
         "        lddwds  D[11], d_fverw",
         "        mov16 D[11], r0                ; updates done when this forward pass closed [0648]"]
    if s.order_log and s.final and s.bias:
        L += _log("v_bcnt", "v_bupd", "d_blogw", s.order_log, "cpbl0")
    L += cpgd_snapshot.closeout_body(s, _log)   # dp_weights="forward": unread rows
    return L + ["        jmp cpfcr"]


def _at_apply(s: PeSpec) -> bool:
    """W changes in the update task, not in the chain pass (an optimizer with state)."""
    return not s.optimizer.in_place


def delta_logged(s: PeSpec) -> list[str]:
    """At the start of b_delta (r4 = j, kept in r5): log the f_act count (order log)."""
    return ["        jmp cpdl", "cpdlr:"] if s.cpgd and s.order_log and not _at_apply(s) else []


def _in_place_only(skip: str) -> list[str]:
    """Skip to ``skip`` unless the chain pass updates W in place (v_cpm = 0): with
    mini-batches (v_cpm = 1) the update task changes W, and logs it. Uses r0."""
    return ["        ld16 r0, v_cpm",
            "        eq16 r0, #0",
            f"        bf {skip}                       ; accumulating: the update task logs"]


def _delta_logged_body(s: PeSpec) -> list[str]:
    return (["cpdl:   mov16 r5, r4"] + _in_place_only("cpdl1")
            + _log("v_ocnt", "v_nact", "d_ologw", s.order_log, "cpdl0")
            + ["cpdl1:  mov16 r4, r5", "        jmp cpdlr"])


def own_logged(s: PeSpec, variant: str) -> list[str]:
    """After a finalizer's own block pass (one task: all of its columns updated): log the
    f_act count (order log)."""
    if not (s.cpgd and s.order_log) or _at_apply(s):
        return []
    return (_in_place_only(f"cpom{variant}")
            + _log("v_ocnt", "v_nact", "d_ologw", s.order_log, f"cpol{variant}")
            + [f"cpom{variant}:"])


def applied(s: PeSpec) -> list[str]:
    """In the update task, after the optimizer's rule (every weight and bias of the PE
    updated: an optimizer with state after each sample, or the end of a mini-batch under
    CPGD): one more update done (v_upd, counted here rather than at the delta closeout,
    so that a forward pass between the two sees it as not done); the f_act count and one
    more bias update (order log). With plain SGD the task runs only when G accumulated
    (v_cpm = 1), when the chain pass counted nothing. Keeps r1."""
    if not s.cpgd:
        return []
    L = bump("v_upd", 1)
    if s.order_log:
        L += _log("v_ocnt", "v_nact", "d_ologw", s.order_log, "cpap0")
        L += bump("v_bupd", 1) if s.final and s.bias else []
    return L


def recompute_logged(s: PeSpec) -> list[str]:
    """In rc_try, as a recompute starts at this PE (r_replay or r_mode follows, which set
    every register they read): the olog entries so far into rlog (the updates before
    the recompute's reads of W), and v_nact saved, so that r_close can take the
    recompute's f_act tasks out of it. Uses r0 and r4."""
    if not _recomputes(s):
        return []
    return (["        ld16 r0, v_nact",
             "        st16 r0, v_rnact               ; (order log) forward reads so far"]
            + _log("v_rcnt", "v_ocnt", "d_rlogw", s.order_log, "cprl0"))


def recompute_uncounted(s: PeSpec) -> list[str]:
    """In r_close of a discarding layer: the recompute's f_act tasks were no forward
    reads; v_nact as it was when the recompute started (order log). Uses r5."""
    if not _recomputes(s):
        return []
    return ["        ld16 r5, v_rnact",
            "        st16 r5, v_nact                ; the recompute's reads are in rlog"]


def pipelined(s: PeSpec) -> list[str]:
    """In fp_count, after v_bfull = v_flag (r0 = v_flag, kept): under algo='cpgd'
    (v_pipe = 1) the end of a sample's update batch holds nothing. A plan with a reverse
    checkpoint (``stream_end``) keeps the mark: there it is the epoch's last sample, which
    lets the last recomputes start (recompute.stream_done); an optimizer with state
    updates there at every sample's end without a mark (recompute.sample_update)."""
    if not s.cpgd or s.stream_end:
        return []
    return ["        ld16 r5, v_pipe",
            "        eq16 r5, #0",
            "        bt cpnp",
            "        movi r5, 0",
            "        st16 r5, v_bfull               ; CPGD: samples stay in flight [0625]",
            "cpnp:"]


def setup_counting(s: PeSpec) -> list[str]:
    """In the setup task (r5 = v_cpm): v_inpl = 1 - v_cpm, what the delta closeout adds to
    v_upd (in place: every sample is an update; accumulating: the update task counts).
    Uses r0."""
    if not s.cpgd or _at_apply(s):
        return []
    return ["        movi r0, 1",
            "        sub16 r0, r0, r5",
            "        st16 r0, v_inpl                ; (CPGD) the delta closeout counts updates"]


def update_done(s: PeSpec) -> list[str]:
    """In the delta closeout (every column of the sample is updated here): staleness =
    v_upd - v_fver[slot] into the histogram (clamped to its last bin); v_upd += v_inpl
    (1 in place; 0 with mini-batches, and nothing with an optimizer with state: the
    update task counts then, ``applied``).
    Keeps r5 (the closeout's flag is stored before)."""
    return ["        jmp cpud", "cpudr:"] if s.cpgd else []


def _update_done_body(s: PeSpec) -> list[str]:
    H = s.slots - 1
    # v_upd += v_inpl (in place; with mini-batches or an optimizer with state the update
    # task counts instead), stored before the histogram so that the body has as many
    # instructions, of the same kinds, as the former v_upd += 1 after it: CPGD's timing,
    # and so its interleaving, stays as it was
    count = [] if _at_apply(s) else ["        ld16 r6, v_inpl",    # 0 with mini-batches
                                     "        add16 r6, r6, r4",
                                     "        st16 r6, v_upd"]
    return [";@pass control",
            "cpud:   ld16 r4, v_bpsl",
            "        add16 r4, r4, r4",
            "        li r6, v_fver",
            "        add16 r6, r6, r4",
            "        mov16 r0, [r6]                 ; v_upd at this sample's forward pass",
            "        ld16 r4, v_upd"] + count + [
            "        sub16 r4, r4, r0               ; updates here since then [0648]",
            f"        li r0, {H}",
            "        lt16 r0, r4",
            "        bf cpu0",
            f"        li r4, {H}",
            "cpu0:   add16 r4, r4, r4",
            "        li r6, v_shist",
            "        add16 r6, r6, r4",
            "        mov16 r0, [r6]",
            "        addi r0, 1",
            "        lddwds  D[11], d_shistw",
            "        mov16 D[11], r0",
            "        jmp cpudr"]


def bias_done(s: PeSpec) -> list[str]:
    """After a finalizer's bias update: one more (order log)."""
    if not (s.cpgd and s.order_log and s.final and s.bias) or _at_apply(s):
        return []
    return (["        ld16 r5, v_cpm",
             "        eq16 r5, #0",
             "        bf cpbd0                       ; accumulating: the update task counts"]
            + bump("v_bupd", 1) + ["cpbd0:"])


def bodies(s: PeSpec) -> list[str]:
    """The out-of-line code the hooks above jump to (at the program's end, so that the
    short branches of the other parts keep their reach)."""
    if not s.cpgd:
        return []
    L = _forward_closed_body(s) + _update_done_body(s)
    if s.order_log and not _at_apply(s):
        L += [";@pass control"] + _delta_logged_body(s)
    return L + cpgd_snapshot.bodies(s)
