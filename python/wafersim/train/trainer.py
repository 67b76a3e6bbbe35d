"""``ws.Trainer``: trains a mapped network on the wafer.

    tr = ws.Trainer(plan, algo="sgd", lr=0.05)        # or "minibatch", batch_size=8
    hist = tr.fit(X, y, epochs=5)                     # a tqdm bar with the running loss
    tr.evaluate(X_test, y_test); tr.predict(X)
    out, losses = tr.step(x_batch, y_batch)           # one optimizer step over a batch
    tr.forward(x); tr.delta(target); tr.chain()       # one pass at a time
    tr.weights(); tr.stats()

Every multiply, add, activation, derivative, delta and update runs as CE instructions on
PE memories in the cycle-level simulator; the host streams samples and targets in through
edge ports and reads outputs, losses and weights out. A whole epoch is queued at once: the
wafer gates admission itself (a PE takes the next sample's activations only when it has a
free activation slot and, in SGD, after its own update [0622]; in mini-batch mode after the
batch's update [0623]).
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from ..mapping import runtime_words as W
from ..mapping import task_ids as T
from ..mapping.plan import DTYPES, Plan
from ..nn.sequential import Sequential
from .cpgd_stats import clear_cpgd_words, read_staleness
from .cpgd_trainer import check_cpgd_batches, check_cpgd_trainer, cpgd_stream_end
from .checks import (MAX_BATCH, as_bool, as_inputs, as_targets, as_validation, positive_int,
                     positive_number)
from .run_stats import TrainStats
from .streams import completion_cycles, decode_outputs, input_streams, target_streams

__all__ = ["Trainer", "History"]

ALGOS = ("sgd", "minibatch", "cpgd")
NUMERICS = ("fp32", "fp16", "fp16-sr")
#: FP control register: round to nearest even; stochastic rounding with 3 random bits
#: [0672], [0681] (fields in docs/isa.md).
FPC = {"fp32": 0, "fp16": 0, "fp16-sr": (2 << 10) | 5}


@dataclass
class History:
    """Per epoch: mean training loss (computed on the wafer), training accuracy (from the
    outputs read back), emulated cycles and wall seconds; ``val_*`` when validation data
    were given."""

    loss: list = field(default_factory=list)
    accuracy: list = field(default_factory=list)
    cycles: list = field(default_factory=list)
    seconds: list = field(default_factory=list)
    val_loss: list = field(default_factory=list)
    val_accuracy: list = field(default_factory=list)

    def __repr__(self) -> str:
        last = (f", last loss {self.loss[-1]:.4g}, accuracy {self.accuracy[-1]:.3f}"
                if self.loss else "")
        return f"History({len(self.loss)} epochs{last})"


class Trainer:
    """Trains ``plan``'s network on its wafer, with the loss and the optimizer the plan
    was compiled with (``ws.map(model, loss=..., optimizer=...)``).

    * ``algo``: "sgd" (an update after every sample), "minibatch" (``batch_size``) or
      "cpgd" (continuous propagation, FIG. 27C: SGD's in-place updates with up to
      ``window`` samples in flight per PE; a plan mapped with ``cpgd=True``).
    * ``window``: CPGD's samples in flight per PE, 1..plan.slots (default: the plan's
      slots, 2 x layers unless ``ws.map(slots=)`` says otherwise); 1 is SGD exactly.
    * ``batch_size``: under "minibatch" the batch (default 8); under "cpgd" (default 1)
      B > 1 is CPGD with mini-batches [0636]: each PE applies the mean of a batch's B
      gradients at its own end of the batch while the next batch's samples are already
      in flight (no drain); window <= B + 1 keeps every forward pass at most one batch
      update behind; window 1 is the mini-batch algorithm exactly.
    * ``dp_weights``: which weights a sample's delta pass uses under CPGD [0634]: None
      (the plan's: ``ws.map(..., dp_weights=)``), "current" or "forward" (the weights of
      the sample's own forward pass; needs a plan mapped with dp_weights="forward").
    * ``lr``: the learning rate; None takes the plan's optimizer's.
    * ``numerics``: "fp32" (an fp32 plan), "fp16" or "fp16-sr" (an fp16 plan; stochastic
      rounding of every result [0661]-[0672]).
    * ``seed`` seeds the shuffling and the PEs' random-number generators; ``timeline``
      records when every layer starts each sample (``stats().stage_times()``; traces the
      CEs, which costs some host time).

    A Trainer trains the weights the plan holds now: the model's after ``ws.map``, or the
    ones an earlier ``fit`` left, which the model given to ``ws.map`` then holds too (as a
    torch model does). Optimizer state (velocities; Adam's moments, step count and bias
    corrections) starts at zero with each Trainer, as a new torch optimizer's does.
    """

    def __init__(self, plan: Plan, algo: str = "sgd", lr: float | None = None,
                 batch_size: int | None = None, loss=None, numerics: str | None = None,
                 seed: int = 0, progress: bool = True, timeline: bool = False,
                 window: int | None = None, dp_weights: str | None = None):
        if not isinstance(plan, Plan):
            raise ConfigError(f"Trainer takes the Plan that ws.map returned, got {type(plan).__name__}")
        if not isinstance(algo, str) or algo not in ALGOS:
            raise ConfigError(f"algo must be one of {', '.join(ALGOS)}, got {algo!r}")
        self.plan = plan
        self.algo = algo
        self.lr = plan.optimizer.lr if lr is None else positive_number(lr, "lr")
        if batch_size is None:
            batch_size = 8 if algo == "minibatch" else 1
        self.batch_size = positive_int(batch_size, "batch_size", MAX_BATCH)
        if algo == "sgd" and self.batch_size != 1:
            raise ConfigError("algo='sgd' updates after every sample (batch_size=1); use "
                              "algo='minibatch' for batches")
        self.window = check_cpgd_trainer(plan, algo, window, dp_weights)
        if algo == "cpgd":
            check_cpgd_batches(plan, self.batch_size, self.window)
        self.dp_weights = plan.dp_weights if dp_weights is None else dp_weights
        if loss is not None and not _same_loss(loss, plan.loss):
            raise ConfigError(f"loss={loss!r}: the loss is compiled into the plan ({plan.loss!r}); "
                              "pass it to ws.map(model, loss=...) instead")
        self.loss = plan.loss
        if numerics is None:
            numerics = plan.dtype
        if not isinstance(numerics, str) or numerics not in NUMERICS:
            raise ConfigError(f"numerics must be one of {', '.join(NUMERICS)}, got {numerics!r}")
        if (numerics == "fp32") != (plan.dtype == "fp32"):
            raise ConfigError(f"numerics={numerics!r} needs a plan mapped with dtype="
                              f"{'fp32' if numerics == 'fp32' else 'fp16'} (this one is {plan.dtype})")
        self.numerics = numerics
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
        self.seed = int(seed)
        self.progress = as_bool(progress, "progress")
        timeline = as_bool(timeline, "timeline")
        self._rng = np.random.default_rng(self.seed)
        self._t = DTYPES[plan.dtype]
        self._opt = plan.optimizer_lowering
        self._check_update_words()
        self._pending = None          # a forward() waiting for delta()
        self._grad_dirty = False      # delta() ran, chain() did not
        self.stats_ = TrainStats(plan)
        if timeline:
            plan.wafer.ce_trace = True
        self._configure_numerics()
        self._clear_gradients(state=True)
        if plan.cpgd:
            clear_cpgd_words(plan)

    def __repr__(self) -> str:
        window = f", window={self.window}" if self.window is not None else ""
        return (f"Trainer({self.plan!r}, algo={self.algo!r}, lr={self.lr}, "
                f"batch_size={self.batch_size}{window}, numerics={self.numerics!r})")

    # ---- configuration of the PE programs' runtime words (runtime_words.py) ----------
    def _configure_numerics(self) -> None:
        p, w = self.plan, self.plan.wafer
        p.write_word(W.V_FPC, FPC[self.numerics])
        for k, pt in enumerate(p.pes()):
            w.memcpy_h2d(W.V_SEED.name, np.array([(self.seed * 7919 + 1 + k) % 65535 + 1],
                                                 np.uint16), rect=pt)
        self._config(T.CONFIG)
        for name, value in self.plan.loss_lowering.host_words(p.n_out):
            p.write_word(name, value)

    def _update_words(self, batch: int, last: int) -> list[tuple[str, float, str]]:
        """(word, value, what the user set) of the optimizer for batches of ``batch``
        samples and a last batch of ``last``."""
        return self._opt.host_words(self.lr, batch, last)

    def _check_update_words(self) -> None:
        """The numbers the update needs must fit the plan's format (fp16: lr = 1e6
        overflows, lr = 1e-9 rounds to 0): ConfigError before any cycle runs."""
        B = self.batch_size
        for last in {B, 1}:
            for _, value, what in self._update_words(B, last):
                self.plan.representable(what, value)

    def _words(self, *, train: bool, accumulate: bool, k: int, batch: int = 1,
               last: int = 1) -> None:
        p = self.plan
        p.write_word(W.V_MODE, 1 if train else 0)
        p.write_word(W.V_CPM, 1 if accumulate else 0)
        p.write_word(W.V_K, k)
        if p.cpgd:      # CPGD: the end of a sample's update does not hold the next one
            p.write_word("v_pipe", 1 if train and self.algo == "cpgd" else 0)
        if train:
            p.write_word(W.V_N1, batch)
            for name, value, _ in self._update_words(batch, last):
                p.write_word(name, value)
        self._config()

    def _config(self, task: int = T.SETUP) -> None:
        """Runs a configuration task on every PE: SETUP (chain-pass variant and -lr from
        the words just written) or CONFIG (FP control and RNG seed). A few cycles."""
        self.plan.launch_all(task)
        self.stats_.add_run(self.plan.wafer.run())

    # ---- data checks ---------------------------------------------------------------------
    def _inputs(self, X, what: str = "X") -> np.ndarray:
        return as_inputs(X, self.plan.n_in, self._t, self.plan.dtype, what)

    def _targets(self, y, n: int, what: str = "y") -> tuple[np.ndarray, np.ndarray | None]:
        """(targets (n, n_out) in the plan's dtype, class labels or None)."""
        return as_targets(y, n, self.plan.n_out, self._t, self.plan.dtype, what)

    def _check_idle(self, what: str) -> None:
        if self._pending is not None:
            raise ConfigError(f"{what}: a forward() is waiting for its delta(); call delta() "
                              "first")

    # ---- streaming -----------------------------------------------------------------------
    def _stream(self, X: np.ndarray, Y: np.ndarray | None, batch_ends=None, bar=None,
                losses: bool = True):
        """Queues every sample, runs until the outputs of all have come back, returns
        (outputs, losses or None, cycles)."""
        p, w = self.plan, self.plan.wafer
        n = X.shape[0]
        a0 = p.colors["A0"]
        for (d, i, c), port in zip(input_streams(X, p.layers[0].in_groups, p.dtype, batch_ends),
                                   p.input_ports):
            w.inject(port, a0, d, index=i, ctrl=c)
        if Y is not None:
            jt = p.target_color
            for d, port in zip(target_streams(Y, p.layers[-1].out_groups, p.dtype), p.output_ports):
                w.inject(port, jt, d)
        out_color = p.output_color
        ports = p.output_ports
        parts = []
        start = w.cycle
        seen = 0
        slice_ = 20000
        # Per slice, only that slice's arrivals are looked at (the work per slice stays flat
        # however many samples are queued): closeouts counted per port as they come, and
        # the loss shown at most twice a second.
        closed = [0] * len(ports)
        show_loss_at = 0.0
        while True:
            st = w.run(max_cycles=slice_)
            self.stats_.add_run(st, training=Y is not None)
            arr = w.collect()
            if len(arr):
                parts.append(arr)
                for k, (r, _) in enumerate(ports):
                    closed[k] += int(((arr.row == r) & (arr.color == out_color) & arr.ctrl).sum())
            done = min(closed)
            if bar is not None and done > seen:
                bar.update(done - seen)
                seen = done
                if losses and Y is not None and (time.monotonic() >= show_loss_at or st.quiescent):
                    show_loss_at = time.monotonic() + 0.5
                    _, ls, _ = decode_outputs(_concat(parts), ports, out_color, n, p.n_out, p.dtype)
                    if ls is not None:
                        bar.set_postfix(loss=f"{ls[:done].mean():.4f}")
            if st.quiescent:
                break
        self.stats_.samples_forwarded += n
        arr = _concat(parts)
        out, ls, done = decode_outputs(arr, ports, out_color, n, p.n_out, p.dtype)
        if done != n:
            raise ConfigError(f"internal: {done} of {n} samples came back")  # pragma: no cover
        self.stats_.completions = completion_cycles(arr, ports, out_color, n) - start
        return out, ls, w.cycle - start

    # ---- training ------------------------------------------------------------------------
    def _schedule(self, n: int):
        """(accumulate into G, samples in flight per PE, batch size, last batch size, batch
        ends or None) for an epoch of ``n`` samples. SGD with an optimizer that cannot
        update in place (momentum, weight decay) runs as mini-batches of one sample."""
        if self.algo == "minibatch":
            B = self.batch_size
            return True, min(B, self.plan.slots), B, n % B or B, True
        if self.algo == "cpgd" and self.batch_size > 1:   # [0636]: G accumulates, each
            # PE's update task at its end of every batch, the next batch already in flight
            B = self.batch_size
            return True, self.window, B, n % B or B, True
        if self.algo == "cpgd":      # window samples in flight [0625]: in place, or (an
            # optimizer with state) an update task at the end of every sample, per PE
            stateful = not self._opt.in_place
            return stateful, self.window, 1, 1, stateful
        if self._opt.in_place:
            return False, 1, 1, 1, False
        return True, 1, 1, 1, True

    def fit(self, X, y, epochs: int = 1, shuffle: bool = True, validation=None) -> History:
        """Trains for ``epochs`` passes over (X, y): y holds class labels (one-hot targets)
        or target vectors. Returns the :class:`History`. Afterwards the model given to
        ``ws.map`` holds the trained parameters."""
        self._check_idle("fit")
        X = self._inputs(X)
        Y, labels = self._targets(y, X.shape[0])
        epochs = positive_int(epochs, "epochs")
        shuffle = as_bool(shuffle, "shuffle")
        validation = as_validation(validation)
        if validation is not None:
            Xv = self._inputs(validation[0], "validation X")
            Yv, lv = self._targets(validation[1], Xv.shape[0], "validation y")
        n = X.shape[0]
        acc, k, B, last, batched = self._schedule(n)
        for lst in {last}:
            for _, value, what in self._update_words(B, lst):
                self.plan.representable(what, value)
        self._clear_gradients()
        if self.plan.cpgd:
            clear_cpgd_words(self.plan)
        self._words(train=True, accumulate=acc, k=k, batch=B, last=last)
        hist = History()
        bar_cls = _tqdm() if self.progress else None
        for ep in range(epochs):
            order = self._rng.permutation(n) if shuffle else np.arange(n)
            ends = None
            if self.algo == "cpgd" and not all(self.plan.keeps):
                ends = cpgd_stream_end(n)      # (an optimizer with state: every sample
            elif batched:                      #  updates without a mark, sample_update)
                ends = np.zeros(n, bool)
                ends[B - 1::B] = True
                ends[-1] = True
            t0 = time.perf_counter()
            bar = bar_cls(total=n, desc=f"epoch {ep + 1}/{epochs}", unit="sample",
                          leave=True) if bar_cls else None
            try:
                out, ls, cycles = self._stream(X[order], Y[order], ends, bar)
            finally:
                if bar is not None:
                    bar.close()
            hist.loss.append(float(ls.mean()))
            hist.accuracy.append(_accuracy(out, labels[order] if labels is not None else None,
                                           Y[order]))
            hist.cycles.append(int(cycles))
            hist.seconds.append(time.perf_counter() - t0)
            self.stats_.samples_trained += n
            if self.plan.cpgd:
                self.stats_.add_staleness(read_staleness(self.plan), cpgd=self.algo == "cpgd",
                                          batch_size=self.batch_size)
            if validation is not None:
                m = self._evaluate(Xv, Yv, lv)
                hist.val_loss.append(m["loss"])
                hist.val_accuracy.append(m["accuracy"])
                self._words(train=True, accumulate=acc, k=k, batch=B, last=last)
        self._sync_model()
        return hist

    def step(self, X, y, *, sync: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """One optimizer step over the batch (X, y), as torch's ``optimizer.step()`` after
        a mean loss: every sample streams through the pipeline with the same weights, the
        mean of their gradients is applied once, by the plan's optimizer (its state, the
        velocities, carries over from earlier steps and fits). Whatever ``algo`` and
        ``batch_size`` say, the batch is all of X, in order (one sample: one SGD step).
        Returns (the outputs of the step's forward passes, each sample's loss), computed
        on the wafer. ``sync``: copy the parameters into the model given to ``ws.map``
        afterwards, as ``fit`` does (False leaves it to ``plan.sync_model()``)."""
        self._check_idle("step")
        X = self._inputs(X)
        Y, _ = self._targets(y, X.shape[0])
        n = positive_int(X.shape[0], "the samples of a step", MAX_BATCH)
        sync = as_bool(sync, "sync")
        for _, value, what in self._update_words(n, n):
            self.plan.representable(what, value)
        self._clear_gradients()
        self._words(train=True, accumulate=True, k=min(n, self.plan.slots), batch=n, last=n)
        ends = np.zeros(n, bool)
        ends[-1] = True
        out, ls, _ = self._stream(X, Y, ends, losses=False)
        self.stats_.samples_trained += n
        if sync:
            self._sync_model()
        return out, ls

    def _clear_gradients(self, state: bool = False) -> None:
        """G = 0 (and, with ``state``, the optimizer's state: velocities, moments, step
        counts), as a new torch optimizer starts."""
        p = self.plan
        names = [("g", "gb")] + (list(self._opt.state_buffers()) if state else [])
        for b in p.layers:
            for r in range(b.rows):
                for c in range(b.cols):
                    s = p.specs[b.at(r, c)]
                    if s.single:        # G in the records (mapping/single_weights.py)
                        rec = p.wafer.memcpy_d2h("rec", rect=b.at(r, c)).ravel()
                        p.wafer.memcpy_h2d("rec", s.layout().without_gradients(rec), rect=b.at(r, c))
                    for wname, bname in names:
                        n = s.nin * s.ncols if wname == "g" else s.weight_count
                        p.wafer.memcpy_h2d(wname, np.zeros(n, self._t), rect=b.at(r, c))
                        if r == c and s.bias:
                            p.wafer.memcpy_h2d(bname, np.zeros(s.nout, self._t), rect=b.at(r, c))
        if state:
            for name in self._opt.state_words():
                p.write_word(name, 0.0)
        p.write_word(W.V_GCNT, 0)
        self._grad_dirty = False

    def _sync_model(self) -> None:
        """The trained parameters into the model given to ws.map (as torch keeps them in
        its model)."""
        self.plan.sync_model()

    # ---- inference -----------------------------------------------------------------------
    def predict(self, X) -> np.ndarray:
        """Outputs of the network for every sample (forward passes on the wafer)."""
        self._check_idle("predict")
        X = self._inputs(X)
        self._words(train=False, accumulate=False, k=1)
        out, _, _ = self._stream(X, None)
        self.stats_.samples_inferred += X.shape[0]
        return out

    def _evaluate(self, X, Y, labels) -> dict:
        self._words(train=False, accumulate=False, k=1)
        out, _, _ = self._stream(X, None)
        self.stats_.samples_inferred += X.shape[0]
        loss = self.plan.loss_lowering.host_loss(out, Y)
        return {"loss": loss, "accuracy": _accuracy(out, labels, Y)}

    def evaluate(self, X, y) -> dict:
        """{"loss": the plan's loss, "accuracy": share of argmax hits (labels, or the
        argmax of target vectors)} over (X, y), from the outputs the wafer computes (the
        host averages the loss of the outputs it reads back)."""
        self._check_idle("evaluate")
        X = self._inputs(X)
        Y, labels = self._targets(y, X.shape[0])
        return self._evaluate(X, Y, labels)

    # ---- one pass at a time ------------------------------------------------------------
    def forward(self, x) -> np.ndarray:
        """The forward pass of one sample; its activations stay in the PEs for delta()."""
        self._check_idle("forward")
        X = self._inputs(x, "x")
        if X.shape[0] != 1:
            raise ConfigError(f"forward() takes one sample, got {X.shape[0]}")
        self._words(train=True, accumulate=True, k=1)
        out = self._stream_forward_only(X)
        self._pending = X
        return out[0]

    def _stream_forward_only(self, X):
        p, w = self.plan, self.plan.wafer
        a0 = p.colors["A0"]
        for (d, i, c), port in zip(input_streams(X, p.layers[0].in_groups, p.dtype), p.input_ports):
            w.inject(port, a0, d, index=i, ctrl=c)
        st = w.run()
        self.stats_.add_run(st)
        self.stats_.pass_cycles["forward"] = int(st.cycles)
        self.stats_.samples_forwarded += X.shape[0]
        out, _, done = decode_outputs(w.collect(), p.output_ports, p.output_color,
                                      X.shape[0], p.n_out, p.dtype)
        return out

    def delta(self, y) -> list[np.ndarray]:
        """The delta pass (with the chain pass's gradients accumulated, not applied) of the
        sample forward() left in the PEs; returns each layer's delta (read from the
        finalizers' memories)."""
        if self._pending is None:
            raise ConfigError("delta() needs a forward() first")
        y = np.asarray(y)
        Y, _ = self._targets(y.reshape(1) if y.ndim == 0 else y.reshape(1, -1), 1, "target")
        p, w = self.plan, self.plan.wafer
        jt = p.target_color
        for d, port in zip(target_streams(Y, p.layers[-1].out_groups, p.dtype), p.output_ports):
            w.inject(port, jt, d)
        st = w.run()
        self.stats_.add_run(st)
        self.stats_.pass_cycles["delta"] = int(st.cycles)
        self.stats_.samples_trained += 1
        w.collect()
        self._pending = None
        self._grad_dirty = True
        return self._deltas()

    def _deltas(self) -> list[np.ndarray]:
        p = self.plan
        out = []
        for b in p.layers:
            dl = np.zeros(b.dense.n_out, dtype=np.float32)
            for c in range(b.cols):
                s = p.specs[b.finalizer(c)]
                dl[s.o0:s.o0 + s.nout] = p.wafer.memcpy_d2h("delta", rect=b.finalizer(c)).ravel()
            out.append(dl)
        return out

    def chain(self) -> None:
        """Applies the gradients delta() accumulated: W -= lr * G, b -= lr * Gb (an update
        task launched on every PE)."""
        self._check_idle("chain")
        if not self._grad_dirty:
            raise ConfigError("chain() needs a delta() first")
        p, w = self.plan, self.plan.wafer
        self._words(train=True, accumulate=True, k=1)
        p.launch_all(T.APPLY)
        st = w.run()
        self.stats_.add_run(st)
        self.stats_.pass_cycles["chain"] = int(st.cycles)
        self._grad_dirty = False
        self._sync_model()

    # ---- results ---------------------------------------------------------------------------
    def weights(self) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """(W, b) per layer, read back from the PE memories."""
        return self.plan.read_weights()

    def model(self) -> Sequential:
        """A copy of the plan's model with the trained parameters."""
        m = self.plan.model.copy()
        for d, (Wt, b) in zip(m.dense_layers(), self.weights()):
            d.linear.weight = Wt
            if b is not None:
                d.linear.bias = b
        return m

    def stats(self) -> TrainStats:
        """Cycles, busy time per PE and pass, traffic per color, skipped zeros, memory."""
        return self.stats_


def _same_loss(a, b) -> bool:
    """Two loss descriptions that compile the same (type and settings)."""
    return type(a) is type(b) and vars(a) == vars(b)


def _accuracy(out: np.ndarray, labels, Y) -> float:
    want = labels if labels is not None else np.argmax(Y, axis=1)
    return float(np.mean(np.argmax(out, axis=1) == want))


def _concat(parts):
    from ..stats import Arrivals

    if not parts:
        e = np.zeros(0, np.int64)
        return Arrivals(row=e, col=e, port=e, color=e, data=e.astype(np.uint32), index=e,
                        ctrl=e.astype(bool), hops=e, injected=e, arrived=e)
    if len(parts) == 1:
        return parts[0]
    fields = ("row", "col", "port", "color", "data", "index", "ctrl", "hops", "injected", "arrived")
    return Arrivals(**{f: np.concatenate([getattr(a, f) for a in parts]) for f in fields})


def _tqdm():
    from tqdm.auto import tqdm

    return tqdm
