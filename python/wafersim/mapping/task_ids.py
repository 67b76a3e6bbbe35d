"""Task ids, microthread entries and the fixed layout rules every mapped PE program shares.

Data wavelets start the task of their color [0371]; everything else (closeouts, completions
of asynchronous operations, host launches) starts a *local* id, one at or above the fabric
colors [0096]. The local ids are taken from the top (63 down), so they stay clear of up to
48 routable colors.
"""

from __future__ import annotations

#: Local task ids (control-wavelet indices and activation targets).
MAIN = 63          # host launch: load descriptors and constants
F_CLOSE = 62       # activation closeout: end of a sample's wavefront [0411], [0419]
F_CLOSE_END = 61   # the same, and the sample ends a mini-batch
B_CLOSE = 60       # delta closeout [0420]
B_CLOSE_END = 59   # the same, and the sample ends a mini-batch
F_SENT = 58        # the partial-sum chain operation has sent this PE's sums
FIN2 = 57          # finalizer: the partial sums from below are in
FIN3 = 56          # finalizer: all partial sums are in: bias, activation, transmit
TX = 55            # finalizer: send the next nonzero activation (f_txact:tx [0413])
TX_DONE = 54       # finalizer: the activation closeout is out
H_SENT = 53        # the delta partial-sum chain operation has sent this PE's sums
DFIN = 52          # finalizer: the delta partial sums (or targets) are in
DTX = 51           # finalizer: send the next nonzero delta
DTX_DONE = 50      # finalizer: the delta closeout is out
APPLY = 49         # host launch: apply the accumulated gradients (W += scale * G)
IDLE = 48          # completion target that does nothing
CONFIG = 47        # host launch: load the FP control register from v_fpc
JREAD = 46         # finalizer: read the rest of a delta-sum / target stream (a local id,
                   # never blocked, so its operation resumes under either reading of [0390])
SETUP = 45         # host launch: chain-pass variant and -lr into registers
SK_SENT = 44       # skip source: the sample's activations are on their way to the join
SK_IN = 43         # join: a skip vector is in the FIFO
B_SENT = 42        # join: dL/dy is on its way back along the skip
SK_READ = 41       # join: read the rest of a skip vector (a local id, like JREAD)
RECOMPUTE = 40     # a reverse checkpoint's kept layer: replay a sample's forward pass
R_SENT = 39        # the replay's partial-sum chain operation has sent this PE's sums
R_CLOSE = 38       # closeout of a replayed sample's activations (a discarding layer's r_close)
LOWEST = R_CLOSE

#: Index of the wavelet that carries a sample's loss to the host (data wavelet, not a
#: closeout: bits 15:6 are not all ones [0505]).
LOSS_INDEX = 0x7FFF

#: Microthread (UT State) entries [0362]. An operation with a fabric destination uses the
#: destination's UTID; one that only reads the fabric and names its color with SC uses
#: entry color & 7. So the forward partial-sum colors P0/P1 land on entries 4 and 7, and the
#: delta-sum colors J0/J1 on an entry no other operation of that PE uses.
UT_TX, UT_DTX, UT_PCHAIN, UT_HCHAIN = 0, 1, 2, 3
UT_FREE_FOR_SC = (4, 7)
UT_FOR_J = (5, 6)
#: A residual's join reads its skip color (S) with an SC operation: entry S & 7 must be
#: one no finalizer uses (UT_PCHAIN is a worker's).
UT_SKIP = 2

#: Local queues where a finalizer stages its sparse sends (ids below 32, so that an
#: operation can name them with SC's five bits [0510]; a wafer for a mapping has at most 30
#: routable colors).
STAGE_TX, STAGE_DTX = 31, 30

#: Roles of the fabric colors a mapping uses (see colors.py); a model with residual blocks
#: adds SKIP_ROLES, one with two-branch blocks BRANCH_ROLES.
COLOR_ROLES = ("A0", "A1", "D", "H0", "P0", "H1", "J0", "P1", "J1")
SKIP_ROLES = ("S", "B")
#: A model with two-branch blocks adds these (S shared with residual blocks).
BRANCH_ROLES = ("S", "X", "K", "G")
