"""Register roles of the mapped PE programs: which general-purpose register holds what,
who sets it and who relies on it. The program parts (``program/``) name the registers that
carry state between tasks by these constants; the ISA gives r2 (r3), r4 and r6 their roles.

A register that one task sets and another reads later must not be written in between by
any task that can run on the same PE: the table says which PEs (workers, finalizers) each
role applies to. ``tests/test_program_parts.py`` checks the rule on generated programs.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Role", "ROLES", "DATA", "DATA_HI", "IDX", "ADDR", "I0", "ROWB", "O0", "CPV", "FSLOT",
           "NEGLR", "ESIZE", "RET", "SENT", "ROUND_LIMIT"]


@dataclass(frozen=True)
class Role:
    reg: str
    name: str
    pes: str          # "all", "workers" or "finalizers": where the role holds
    set_by: str
    read_by: str
    what: str


ROLES = (
    Role("r0", "T0", "all", "any task", "the same task", "scratch: compares, constants"),
    Role("r1", "RET", "all", "the caller", "fp_count, jadmit, ap",
         "return address of shared code entered with a jmp (within one task); the row's "
         "offset in a reverse checkpoint's replay loop (recompute.py)"),
    Role("r2", "DATA", "all", "a picked wavelet [0346]; tasks", "fmac (the scalar), sends",
         "a wavelet's data (low 16 bits); the fused multiply-add's scalar"),
    Role("r3", "DATA_HI", "all", "a picked wavelet [0346]", "32-bit operands with r2",
         "a wavelet's data (high 16 bits)"),
    Role("r4", "IDX", "all", "a picked wavelet [0346]; tasks", "WLI descriptors [0518], [0524]",
         "a wavelet's index; the offset of every WLI descriptor"),
    Role("r5", "T1", "all", "any task", "the same task", "scratch"),
    Role("r6", "ADDR", "all", "any task", "[r6] operands [0591]; the senders",
         "address of the [r6] operand; a sender's position in its vector"),
    Role("r7", "I0", "all", "main", "f_act", "first input of this PE's group I_r (c_i0)"),
    Role("r8", "ROWB", "all", "main", "f_act", "bytes per stored row of W and its slots (c_rowb)"),
    Role("r9", "O0", "all", "main", "b_delta", "first output of this PE's group O_c (c_o0)"),
    Role("r10", "CPV", "workers", "setup", "b_delta",
         "code address of the chain-pass variant: in place (cps) or accumulate (cpa)"),
    Role("r11", "FSLOT", "all", "main (0), fp_end", "f_act, fp_end",
         "byte offset of the forward activation slot within a row"),
    Role("r12", "NEGLR", "workers", "setup", "b_delta (cps)",
         "-lr, the in-place update's scale (fp32: the pair r12:r13)"),
    Role("r12", "SENT", "finalizers", "senders, fin3, own", "the same task",
         "scratch of a finalizer: wavelets staged in a send round, a slot offset, -lr"),
    Role("r13", "-", "all", "(fp32: NEGLR's and SENT's high half)", "-",
         "the high half of an fp32 value in r12; else unused"),
    Role("r14", "ESIZE", "workers", "main", "b_delta", "bytes per element (4 fp32, 2 fp16)"),
    Role("r14", "ROUND_LIMIT", "finalizers", "senders", "senders",
         "wavelets a send round stages before it ends (queue capacity - 1)"),
    Role("r15", "-", "all", "r_replay", "the same task",
         "scratch of a reverse checkpoint's replay loop (recompute.py): the loop's end"),
)

_by_name = {r.name: r.reg for r in ROLES if r.name != "-"}
DATA, DATA_HI, IDX, ADDR = (_by_name[k] for k in ("DATA", "DATA_HI", "IDX", "ADDR"))
I0, ROWB, O0, CPV, FSLOT = (_by_name[k] for k in ("I0", "ROWB", "O0", "CPV", "FSLOT"))
NEGLR, ESIZE, RET, SENT, ROUND_LIMIT = (_by_name[k] for k in ("NEGLR", "ESIZE", "RET", "SENT",
                                                              "ROUND_LIMIT"))
