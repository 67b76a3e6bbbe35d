"""What makes one PE's program: its place in the layer's block, its colors, and the
lowerings (activation, loss, optimizer) whose code it carries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the lowerings import the program's idioms, not this module
    from ..lowering.activation import ActivationLowering
    from ..lowering.loss import LossLowering
    from ..lowering.optimizer import OptimizerLowering

__all__ = ["PeSpec"]


@dataclass(frozen=True)
class PeSpec:
    """Everything that makes one PE's program."""

    layer: int
    last: bool              # the output layer (its finalizers apply the loss)
    row: int                # in the block
    col: int
    rows: int
    cols: int
    i0: int                 # first input of I_r
    nin: int
    o0: int                 # first output of O_c
    nout: int
    act: "ActivationLowering"
    bias: bool
    dtype: str              # "fp32" or "fp16"
    slots: int              # samples in flight this PE can hold
    n_out_layer: int        # outputs of the whole layer (the loss divides by it)
    qcap: int               # input queue capacity of a CE: the size of a send round
    optimizer: "OptimizerLowering"
    # colors
    a_in: int               # activations into this row (a task color)
    d_col: int              # deltas down this column (a task color)
    p_out: int | None       # forward partial sums toward the finalizer (None at F)
    p_in: int | None        # forward partial sums from the far neighbour (None at a chain start)
    h_out: int | None       # delta partial sums west (None in layer 0)
    h_in: int | None        # delta partial sums from the east (None at the east end)
    loss: "LossLowering | None" = None  # F of the output layer: the loss it applies
    a_out: int | None = None    # F: activations out (None: branch f's last layer, whose
                                # output goes dense to the join on skip_out instead)
    j_in: int | None = None     # F: delta partial sums of the next layer (or targets)
    d_send: bool = False        # F: the column has other PEs to send deltas to
    p_low: int | None = None    # F: partial sums from the rows below (None in row 0)
    p_high: int | None = None   # F: partial sums from the rows above (None in the top row)
    skip_out: int | None = None     # F before a residual block (or ending branch f of a
                                    # two-branch block): its activations to the join
    skip_in: int | None = None      # F of a join: x (residual) or f(x) (two-branch) arrives
    skip_depth: int = 0             # F of a join: skip vectors its FIFO holds
    skip_back: int | None = None    # F of a join: dL/dy back to the block's first layer
                                    # (two-branch: to branch f's last finalizers)
    skip_grad_in: int | None = None  # east end of a residual's first layer: dL/dy arrives
                                     # (two-branch: branch g's dL/dx)
    athr: bool = False          # F: its activations are sent only when |a| > the runtime
                                # word c_athr (EC411); False: exact zeros are skipped
    cpgd: bool = False          # CPGD bookkeeping: staleness counters (program/cpgd.py)
    order_log: int = 0          # CPGD: entries of the order log (0: none; tests)
    dp_snapshot: bool = False   # CPGD, dp_weights="forward": the delta pass reads a snapshot
                                # of W per slot (program/cpgd_snapshot.py)
    keep: tuple[int, ...] | None = None  # weight sparsity: the outputs of O_c (local indices,
                                         # ascending) whose weights this PE stores; None:
                                         # all (dense). Pruned outputs cost no memory and no
                                         # cycles here (mapping/weight_sparsity.py)
    wmask: tuple[tuple[bool, ...], ...] | None = None  # single-weight sparsity: the block's
                                # mask (nout rows of nin), True = kept; the kept weights are
                                # stored by row and by column records
                                # (mapping/single_weights.py); None: not used
    recomputes: bool = False    # a reverse checkpoint's kept layer: it replays a sample's
                                # forward pass from its stored inputs (recompute.py)
    discards: str | None = None  # a discarding layer: "pass" (the recompute goes on east)
                                 # or "end" (the segment's last layer); None: it keeps
    rc: int | None = None       # the recompute trigger's color (a task color) at a PE of a
                                # segment; None: started by a local id only (tests)
    rc_source: bool = False     # F_0 of a segment's last layer: it sends the trigger
    one_out_slot: bool = False  # F whose outputs the next layer discards (reverse checkpoint):
                                # one slot of outputs, not ``slots`` (recompute.py)
    stream_end: bool = False    # CPGD with a reverse checkpoint: an epoch's last sample marks
                                # the stream's end (v_bfull), which each PE clears when the
                                # epoch has ended there (recompute.stream_done)
    one_slot: bool = False      # a discarding layer (reverse checkpoint): one slot of inputs
                                # (and a finalizer's outputs); ``slots`` still counts the
                                # samples in flight (slot indices, flags)

    def lowerings(self) -> list:
        """The plug-ins whose code and data this PE carries."""
        parts = [self.act] if self.final else []
        parts.append(self.optimizer)
        if self.final and self.last:
            parts.append(self.loss)
        return parts

    # ---- roles -------------------------------------------------------------------------------
    @property
    def activation(self) -> str:
        return self.act.name

    @property
    def join(self) -> bool:
        return self.skip_in is not None

    @property
    def final(self) -> bool:
        return self.row == self.col

    @property
    def sends_replay(self) -> bool:
        """A finalizer that finalizes and sends replayed sums (recompute.py)."""
        return self.final and (self.recomputes or self.discards == "pass")

    @property
    def in_slots(self) -> int:
        """Stored slots of inputs beside the weight rows."""
        return 1 if self.one_slot else self.slots

    @property
    def out_slots(self) -> int:
        """A finalizer's stored slots of outputs (``aslots``)."""
        return 1 if self.one_out_slot else self.slots

    @property
    def rc_gate(self) -> bool:
        """A discarding layer's finalizer: its backward pass (``dfin``) waits for the
        recompute's closeout (``r_close``), since f' and its own block pass read the
        recomputed activations (recompute.py)."""
        return self.final and self.discards is not None

    @property
    def has_dp(self) -> bool:
        return self.layer > 0

    # ---- number format --------------------------------------------------------------------
    @property
    def esize(self) -> int:
        return 4 if self.dtype == "fp32" else 2

    @property
    def sparse(self) -> bool:
        return self.keep is not None

    @property
    def single(self) -> bool:
        return self.wmask is not None

    def layout(self):
        """The single-weight storage of this PE's block (mapping/single_weights.py)."""
        from ..single_weights import SingleWeightLayout
        return SingleWeightLayout(self.wmask, self.row_bytes)

    @property
    def ncols(self) -> int:
        """Stored weight columns per input row: every output (dense), or the kept ones (at
        least one: a PE that keeps none stores one zero column that nothing reads; single
        weights: that one column, the values being in records)."""
        if self.wmask is not None:
            return 1
        return self.nout if self.keep is None else max(len(self.keep), 1)

    @property
    def weight_count(self) -> int:
        """Stored weights (and optimizer state per weight): nin x ncols, or the kept
        weights under single-weight sparsity (at least one record)."""
        if self.wmask is not None:
            return max(sum(map(sum, self.wmask)), 1)
        return self.nin * self.ncols

    @property
    def weight_operands(self) -> tuple[str, str, list[str]]:
        """(G descriptor, W descriptor, the lines that load W's XDSR) of the update over
        every stored weight: the 4D view of W, or the records (single weights)."""
        if self.wmask is not None:
            return "d_sgall", "d_swall", []
        return "d_gall", "d_wall", ["        ldxds   X[2], x_wall"]

    def position(self, j: int) -> int | None:
        """Stored column of local output j (None: pruned here)."""
        if self.keep is None:
            return j
        return self.keep.index(j) if j in self.keep else None

    def runs(self) -> list[tuple[int, int, int]]:
        """(first local output, its stored column, length) of every run of consecutive
        kept outputs: one vector operation each in the forward pass."""
        keep = range(self.nout) if self.keep is None else self.keep
        out: list[list[int]] = []
        for p, j in enumerate(keep):
            if out and out[-1][0] + out[-1][2] == j:
                out[-1][2] += 1
            else:
                out.append([j, p, 1])
        return [tuple(r) for r in out]

    @property
    def snapshot(self) -> bool:
        """This PE keeps the delta pass's weight snapshots (a layer with a delta pass). Not
        in a discarding layer of a reverse checkpoint: its delta pass follows the recompute
        with no update between at the PE (the recompute queue), so W is what the
        recompute, the forward pass whose activations it uses, read (cpgd_snapshot.py)."""
        return self.dp_snapshot and self.has_dp and not self.discards

    @property
    def row_bytes(self) -> int:
        """A stored row: W's columns, the activation slots (one when the layer discards
        under a reverse checkpoint), then (snapshot) a copy of the W row per slot (never
        in a discarding layer: ``snapshot``)."""
        snap = self.slots * self.ncols if self.snapshot else 0
        return (self.ncols + self.in_slots + snap) * self.esize

    @property
    def FX(self) -> str:
        """Suffix of the arithmetic instructions: fadds / faddh."""
        return "s" if self.dtype == "fp32" else "h"

    @property
    def MV(self) -> str:
        """The move of one element."""
        return "mov32" if self.dtype == "fp32" else "mov16"
