"""What a reverse-checkpoint policy saves and costs on a trained plan
(``TrainStats.checkpoint``; docs/training.md, "Reverse checkpoint").

The bytes come from the mapping's layout (``mapping.checkpoint.activation_memory``), and,
for the plan's own policy, from its programs (``layout_*``: ``Plan.memory``'s
``activation_bytes``; a plan mapped with ``checkpoint=`` runs the recompute, and its
``cycles_per_sample`` are measured with it; the cost is that against the same run
without RCP, as ``benchmarks/bench_train.py --rcp`` measures). For another policy the
cycles are an estimate from what the run measured: the recompute of a segment (kept
layer k, discarding layers k+1 .. m-1) replays the forward pass of layers k .. m-2 for
the sample [0653], so

* ``extra_busy_per_sample``: the forward-pass busy cycles of those layers' PEs per
  forwarded sample (the CE work a replay repeats);
* ``extra_latency_per_sample`` (one sample in flight, ``Trainer(timeline=True)``): the
  cycles between layer k and layer m - 1 getting a sample's inputs in the forward pass,
  summed over segments: with one sample in flight the recompute lies on the critical
  path of the backward pass, so each trained sample would take about that much longer.
"""

from __future__ import annotations

import numpy as np

from ..mapping.checkpoint import checkpoint_memory, recompute_segments

__all__ = ["checkpoint_report"]


def checkpoint_report(stats, policy=None) -> dict:
    """``policy``'s bytes (per PE, peak, total, saved) on ``stats.plan`` and its estimated
    cycles from the runs ``stats`` measured (NaN where the run did not measure them).
    ``policy`` None: the plan's own (``ws.map(checkpoint=)``), whose bytes in the
    programs' layout are ``layout_per_pe`` / ``layout_peak`` / ``layout_total``."""
    plan = stats.plan
    own = policy is None
    if own:
        policy = [l for l, k in enumerate(plan.keeps) if k]
    mem = checkpoint_memory(plan, policy)
    segments = recompute_segments(mem["keeps"])
    replayed = {l for k, gone in segments for l in range(k, gone[-1])}
    fwd = stats.busy("forward")
    busy = sum(int(fwd[b.at(r, c)]) for b in plan.layers if b.index in replayed
               for r in range(b.rows) for c in range(b.cols))
    seen = stats.samples_forwarded       # every forward pass streamed (training or not)
    starts = stats.stage_times()
    latency = float("nan")
    if segments and all(k in starts and gone[-1] in starts for k, gone in segments):
        n = min(len(starts[l]) for k, gone in segments for l in (k, gone[-1]))
        if n:
            lat = sum(starts[gone[-1]][:n] - starts[k][:n] for k, gone in segments)
            latency = float(np.mean(lat))
    elif not segments:
        latency = 0.0
    out = dict(mem)
    if own:
        lay = {p: m["activation_bytes"] for p, m in plan.memory().items() if p in plan.specs}
        out.update(layout_per_pe=lay, layout_peak=max(lay.values()),
                   layout_total=sum(lay.values()), recomputes=bool(segments))
    out.update(segments=segments,
               extra_busy_per_sample=busy / seen if seen else float("nan"),
               extra_latency_per_sample=latency,
               cycles_per_sample=stats.cycles_per_sample)
    return out
