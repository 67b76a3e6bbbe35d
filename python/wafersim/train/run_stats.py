"""What a Trainer measured (docs/training.md, "Statistics"): emulated cycles, busy cycles
per PE and pass, task runs, skipped zeros, traffic per color, PE memory."""

from __future__ import annotations

import numpy as np

from ..mapping import task_ids as T
from ..mapping.program import PASSES

__all__ = ["TrainStats"]

_CLOSEOUTS = (T.F_CLOSE, T.F_CLOSE_END)


class TrainStats:
    """Accumulates the statistics of every run a Trainer makes.

    * ``cycles``: emulated cycles of all runs; ``train_cycles`` / ``samples_trained``
      gives cycles per trained sample (``cycles_per_sample``);
    * ``busy(pass_)``: (rows, cols) busy cycles per PE of "forward", "delta", "chain" or
      "control" (bookkeeping between samples), from the CEs' per-instruction profile;
      ``mac_busy()``: the forward multiply-accumulate task's share (neuron smearing);
    * ``pass_cycles``: emulated cycles of the last forward(), delta() and chain() runs
      (one sample, one pass at a time);
    * ``skipped()``: per layer, activations and deltas that were zero and never sent
      [0400], [0408]; ``sparsity()``: per layer and pass, wavelets not sent (zeros, and
      activations under a threshold, EC411) and the busy cycles that saved;
    * ``traffic()``: link traversals per color role; ``memory()``: bytes per PE;
    * ``stage_times()``: with ``Trainer(timeline=True)``, per layer, the cycle at which it
      had each sample's inputs (its first finalizer's closeout task started);
    * ``completions``: for the samples of the last ``fit`` epoch, ``evaluate`` or
      ``predict`` stream, the cycle (since the stream started) at which each sample's last
      output reached the host; ``steady_interval()``: cycles per sample in the steady
      state of that stream.
    """

    def __init__(self, plan):
        self.plan = plan
        self.cycles = 0
        self.train_cycles = 0
        self.runs = 0
        self.samples_trained = 0
        self.samples_forwarded = 0
        self.samples_inferred = 0
        self.pass_cycles: dict[str, int] = {}
        self.completions = np.zeros(0, dtype=np.int64)
        self._stage_starts: dict[int, list[int]] = {}
        self._busy: dict[tuple[int, int], np.ndarray] = {}     # per PE: busy per pass
        self._tasks: dict[tuple[int, int], dict] = {}
        self._pcs: dict[tuple[int, int], np.ndarray] = {}
        self._staleness: dict[int, np.ndarray] = {}
        self._staleness_batch = 1

    def add_run(self, st, training: bool = False) -> None:
        self.cycles += int(st.cycles)
        if training:
            self.train_cycles += int(st.cycles)
        self.runs += 1
        for pe, s in st.pes.items():
            tasks = self._tasks.setdefault(pe, {})
            for k, v in s["tasks_started"].items():
                tasks[k] = tasks.get(k, 0) + v
            spans = s.get("task_spans")
            spec = self.plan.specs.get(pe)
            if spans is not None and spec is not None and spec.row == 0 and spec.col == 0:
                starts = self._stage_starts.setdefault(spec.layer, [])
                starts.extend(int(b) for tid, _how, b, _e in spans if tid in _CLOSEOUTS)
            prof = s.get("busy_by_pc")
            if prof is not None and pe in self.plan.specs:
                acc = self._pcs.get(pe)
                self._pcs[pe] = prof.astype(np.int64) if acc is None else acc + prof

    def add_staleness(self, hist: dict[int, np.ndarray], cpgd: bool = True,
                      batch_size: int = 1) -> None:
        """Adds the staleness histograms read from the PEs after a CPGD epoch; with
        ``batch_size`` > 1 (CPGD with mini-batches) they count batch updates."""
        if not cpgd:
            return
        self._staleness_batch = batch_size
        for layer, h in hist.items():
            old = self._staleness.get(layer)
            self._staleness[layer] = h.copy() if old is None else old + h

    def staleness(self) -> list[dict]:
        """Per layer, over the CPGD epochs trained so far: ``histogram`` (k -> how many
        updates of the layer's PEs were k updates behind the weights the sample's forward
        pass read there, counted on the PEs [0648]; the last bin also holds larger values,
        which a window <= slots never gives), ``updates``, ``mean`` and ``max``. Under CPGD
        with mini-batches (``batch_size`` > 1) an update is a batch's update, so k counts
        batches: the batch updates at this PE between the sample's activation closeout and
        its own backward pass there (at most 1, [0636])."""
        out = []
        for layer, h in sorted(self._staleness.items()):
            n = int(h.sum())
            k = np.arange(len(h))
            out.append({"layer": layer, "histogram": h.copy(), "updates": n,
                        "batch_size": self._staleness_batch,
                        "mean": float((h * k).sum() / n) if n else float("nan"),
                        "max": int(k[h > 0].max()) if n else 0})
        return out

    # ---- derived ---------------------------------------------------------------------------
    @property
    def cycles_per_sample(self) -> float:
        return self.train_cycles / self.samples_trained if self.samples_trained else float("nan")

    def stage_times(self) -> dict[int, np.ndarray]:
        """Layer -> the cycles at which it had each sample's inputs, in order (needs
        ``Trainer(timeline=True)``; every sample the trainer streamed since)."""
        return {k: np.sort(np.array(v, dtype=np.int64)) for k, v in sorted(self._stage_starts.items())}

    def steady_interval(self, warmup: float = 0.5) -> float:
        """Cycles per sample of the last stream, measured between the completions of the
        sample after the first ``warmup`` share and the last one (the pipeline is full
        then; the first samples also pay for filling it)."""
        n = len(self.completions)
        k = int(n * warmup)
        if n - 1 - k < 1:
            return float("nan")
        return float(self.completions[-1] - self.completions[k]) / (n - 1 - k)

    def busy(self, pass_: str | None = None) -> np.ndarray:
        """(rows, cols) busy cycles per PE in ``pass_`` (None: all passes)."""
        w = self.plan.wafer
        out = np.zeros((w.rows, w.cols), dtype=np.int64)
        want = None if pass_ is None else PASSES.index(pass_)
        for pe, prof in self._pcs.items():
            m = self.plan.pass_of_pc(pe)[:len(prof)]
            out[pe] = prof.sum() if want is None else prof[m == want].sum()
        return out

    def mac_busy(self) -> np.ndarray:
        """(rows, cols) busy cycles per PE of its forward multiply-accumulate task, f_act
        (a received activation times the PE's weight row: the local compute of its neuron
        portions [0476]), from the profile; the rest of "forward" is combining and
        bookkeeping (partial-sum chain, closeouts, the finalizer's work)."""
        w = self.plan.wafer
        out = np.zeros((w.rows, w.cols), dtype=np.int64)
        for pe, prof in self._pcs.items():
            sym = self.plan.programs[pe].symbols
            if "f_act" in sym and "f_close_end" in sym:
                out[pe] = prof[sym["f_act"].address:sym["f_close_end"].address].sum()
        return out

    def busy_by_pass(self) -> dict[str, int]:
        """Busy cycles of the whole wafer per pass."""
        return {p: int(self.busy(p).sum()) for p in PASSES}

    def tasks(self, pe, task) -> int:
        """How many times ``task`` (an id) started on PE ``pe``."""
        return int(self._tasks.get(tuple(pe), {}).get(int(task), 0))

    def _count_at(self, pe, prefix: str) -> int:
        """Executions of the one-cycle instructions labelled ``prefix``... (the profile
        counts cycles per address)."""
        prof = self._pcs.get(tuple(pe))
        if prof is None:
            return 0
        prog = self.plan.programs[tuple(pe)]
        return int(sum(prof[sym.address] for name, sym in prog.symbols.items()
                       if name.startswith(prefix) and sym.kind == "code"))

    def skipped(self) -> list[dict]:
        """Per layer: activations into it and deltas out of it, sent and skipped (zeros)."""
        p = self.plan
        out = []
        fwd = self.samples_forwarded
        for b in p.layers:
            spec0 = p.specs[b.at(0, 0)]
            got = sum(self.tasks(b.at(r, 0), spec0.a_in) for r in range(b.rows))
            d_sent = sum(self._count_at(b.finalizer(c), "dnz") for c in range(b.cols))
            d_total = self.samples_trained * b.dense.n_out
            out.append({"layer": b.index, "activations_sent": got,
                        "activations_skipped": fwd * b.dense.n_in - got,
                        "deltas_sent": d_sent, "deltas_skipped": d_total - d_sent})
        return out

    def _task_cost(self, pe, first: str, end: str, task: int) -> float:
        """Busy cycles per run of the task whose code lies between labels ``first`` and
        ``end`` on PE ``pe`` (its start, its instructions and their iterations, from the
        profile), or nan if it never ran."""
        prof = self._pcs.get(tuple(pe))
        runs = self.tasks(pe, task)
        if prof is None or not runs:
            return float("nan")
        sym = self.plan.programs[tuple(pe)].symbols
        return float(prof[sym[first].address:sym[end].address].sum()) / runs

    def sparsity(self) -> list[dict]:
        """Per layer and pass: wavelets not sent, and the busy cycles that saved.

        * "forward": the activations into layer l (from layer l - 1's finalizers, from
          the host for layer 0): ``sent``, ``not_sent`` (zeros, and with an activation
          threshold t of the sending layer every |a| <= t; EC411), ``threshold`` (of the
          sending layer, None without one); ``cycles_saved``: not-sent activations times
          the busy cycles one received activation costs each PE of its row (its f_act
          task, measured per PE), summed over the C PEs it would have reached.
        * "delta": the deltas of layer l's outputs: ``sent``, ``not_sent`` (zeros);
          ``cycles_saved``: not-sent deltas times the busy cycles one costs each other PE
          of its column (b_delta: delta and chain pass, measured), summed (the
          finalizer's own pass of its deltas is not counted)."""
        p = self.plan
        fwd, out = self.samples_forwarded, []
        for b in p.layers:
            spec0 = p.specs[b.at(0, 0)]
            t = p.activation_thresholds[b.index - 1] if b.index > 0 else None
            sent = not_sent = 0
            saved = 0.0
            for r, (_i0, n) in enumerate(b.in_groups):
                got = self.tasks(b.at(r, 0), spec0.a_in)
                miss = fwd * n - got
                sent, not_sent = sent + got, not_sent + miss
                saved += miss * sum(np.nan_to_num(self._task_cost(
                    b.at(r, c), "f_act", "f_close_end", spec0.a_in)) for c in range(b.cols))
            out.append({"layer": b.index, "pass": "forward", "sent": sent,
                        "not_sent": not_sent, "threshold": t, "cycles_saved": round(saved)})
            sent = not_sent = 0
            saved = 0.0
            for c, (_o0, n) in enumerate(b.out_groups):
                d_sent = self._count_at(b.finalizer(c), "dnz")
                miss = self.samples_trained * n - d_sent
                sent, not_sent = sent + d_sent, not_sent + miss
                saved += miss * sum(np.nan_to_num(self._task_cost(
                    b.at(r, c), "b_delta", "b_close_end", spec0.d_col))
                    for r in range(b.rows) if r != c)
            out.append({"layer": b.index, "pass": "delta", "sent": sent, "not_sent": not_sent,
                        "threshold": None, "cycles_saved": round(saved)})
        return out

    def bound(self) -> dict:
        """An analytic lower bound of the emulated cycles of one trained sample (one sample
        in flight): per layer, the largest number of multiply-accumulates one PE must do,
        over the SIMD width, in the forward pass and in the delta + chain passes, plus one
        cycle per hop of the partial-sum chains and of the link to the next block.

        Per layer l with a block of R x C PEs, PE (r, c) holding |I_r| x |O_c| weights:

        * forward:  ceil(max_r |I_r| * rho_a * max_c |O_c| / S) + R + C
        * backward: ceil(max_c |O_c| * rho_d * max_r |I_r| * k / S) + R + C, k = 2 (delta
          and chain pass) after the first layer, 1 in it (chain pass only)

        rho_a, rho_d: the measured share of nonzero activations into, and deltas of, the
        layer (zeros are never sent, so they cost no multiply [0408]); S: the SIMD width of
        the dtype (1 for fp32, 4 for fp16 [0502]). Returns {"cycles": total, "layers":
        [(forward, backward) per layer]}."""
        p = self.plan
        S = 1 if p.dtype == "fp32" else 4
        layers = []
        for b, sk in zip(p.layers, self.skipped()):
            nin = max(n for _, n in b.in_groups)
            nout = max(n for _, n in b.out_groups)
            fed = sk["activations_sent"] + sk["activations_skipped"]
            rho_a = sk["activations_sent"] / fed if fed else 1.0
            dd = sk["deltas_sent"] + sk["deltas_skipped"]
            rho_d = sk["deltas_sent"] / dd if dd else 1.0
            k = 2 if b.index > 0 else 1
            fw = int(np.ceil(nin * rho_a * nout / S)) + b.rows + b.cols
            bw = int(np.ceil(nout * rho_d * nin * k / S)) + b.rows + b.cols
            layers.append((fw, bw))
        return {"cycles": sum(f + b for f, b in layers), "layers": layers}

    def checkpoint(self, policy=None) -> dict:
        """What the reverse-checkpoint ``policy`` (as ``ws.map(checkpoint=)`` takes it;
        None: the plan's own) saves on this plan: activation bytes per PE with and
        without, peak, total, saved per PE; for the plan's own policy the bytes of its
        programs' layout (``layout_*``) and the measured ``cycles_per_sample``; for
        another, the forward busy cycles it would replay per sample and, with
        ``Trainer(timeline=True)`` and one sample in flight, the added cycles per sample,
        estimated from these runs (train/checkpoint_stats.py)."""
        from .checkpoint_stats import checkpoint_report

        return checkpoint_report(self, policy)

    def traffic(self) -> dict[str, int]:
        """Link traversals per color role since the plan was loaded (wavelets x hops)."""
        t = self.plan.wafer.counters().color_traffic
        by_color = {}
        for color, count in zip(t["color"], t["count"]):
            by_color[int(color)] = by_color.get(int(color), 0) + int(count)
        return {role: by_color.get(c, 0) for role, c in self.plan.colors.items()}

    def memory(self) -> np.ndarray:
        """(rows, cols) data bytes each PE's program uses."""
        w = self.plan.wafer
        out = np.zeros((w.rows, w.cols), dtype=np.int64)
        for pe, m in self.plan.memory().items():
            out[pe] = m["data_bytes"]
        return out

    def summary(self) -> str:
        lines = [f"{self.samples_trained} samples trained in {self.train_cycles} emulated cycles "
                 f"({self.cycles_per_sample:.0f} per sample); {self.cycles} cycles in all"]
        bp = self.busy_by_pass()
        total = sum(bp.values()) or 1
        lines.append("busy cycles by pass: " + ", ".join(
            f"{k} {v} ({100 * v / total:.0f}%)" for k, v in bp.items()))
        if self.pass_cycles:
            lines.append("one sample, one pass at a time: " + ", ".join(
                f"{k} {v} cycles" for k, v in self.pass_cycles.items()))
        if any(t is not None for t in self.plan.activation_thresholds):
            for s in self.sparsity():
                what = ("activations" if s["pass"] == "forward" else "deltas")
                why = ("zero" if s["threshold"] is None else f"|a| <= {s['threshold']:g}")
                lines.append(f"layer {s['layer']} {s['pass']}: {s['not_sent']} {what} "
                             f"({why}) not sent of {s['sent'] + s['not_sent']}, "
                             f"{s['cycles_saved']} busy cycles saved")
        else:
            for s in self.skipped():
                lines.append(f"layer {s['layer']}: {s['activations_skipped']} zero activations and "
                             f"{s['deltas_skipped']} zero deltas not sent")
        if self.samples_trained:
            bd = self.bound()["cycles"]
            lines.append(f"analytic bound: {bd} cycles per sample; measured / bound = "
                         f"{self.cycles_per_sample / bd:.2f}")
        for s in self.staleness():
            unit = "batches" if s["batch_size"] > 1 else "updates"
            lines.append(f"layer {s['layer']} CPGD staleness: mean {s['mean']:.2f}, max "
                         f"{s['max']} {unit} behind ({s['updates']} updates)")
        mem = self.memory()
        lines.append(f"peak PE memory: {int(mem.max())} data bytes")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"TrainStats({self.cycles} cycles, {self.samples_trained} samples trained, "
                f"{self.samples_inferred} inferred)")
