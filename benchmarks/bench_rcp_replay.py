"""Reverse checkpoint: what the kept layer's replay loop (mapping/program/recompute.py)
costs on a PE, measured, against the forward pass's ``f_act`` tasks it repeats.

64-64-64-10 ReLU (the network of ``bench_train.py --rcp``; blocks chosen automatically),
digits inputs, fp32. For each chain-start worker of the layers that recompute under
checkpoint=2 (layers 0 and 2; f_act and the replay are the same code on every PE of a
layer, only the row's inputs differ), the PE's own mapped program (with the replay added) runs on one PE: the sample's
inputs of its row stream in as in the forward pass (busy cycles of ``f_act``, one task per
nonzero input, and of the closeout ``f_close``, which issues the chain hop), then the replay runs from the slot they were stored in (busy cycles of
``r_replay``: a loop over every stored input, skipping zeros, and the issue of the
chain hop). The sums the replay's hop sends equal the forward pass's, bit for bit
(checked here too). Emulated cycles are deterministic.

The replay is only the first step of a recompute: the finalizers' sums, a = f(z) and
sends, and the discarding layers' ``f_act`` follow as in the forward pass (the whole
recompute on the wafer: ``bench_train.py --rcp``; docs/training.md, "Reverse
checkpoint").

    python benchmarks/bench_rcp_replay.py [--samples 20]
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import wafersim as ws  # noqa: E402
from wafersim.mapping import task_ids as T  # noqa: E402
from wafersim.mapping.program import pe_source  # noqa: E402
from wafersim.train.datasets import digits  # noqa: E402


def measure(spec, W, inputs) -> tuple[list[int], list[int]]:
    """(f_act + f_close busy cycles, r_replay busy cycles) per sample on one PE running ``spec``'s
    program; ``W``: the PE's weights (nout x nin); ``inputs``: its row's inputs per sample."""
    s = replace(spec, recomputes=True)
    pe = ws.pe.LonePE()
    pe.load(pe_source(s))
    blk = np.zeros((s.nin, s.nout + s.slots), dtype=np.float32)
    blk[:, :s.nout] = W.T
    pe.write("w", blk.ravel())
    pe.launch("main")
    pe.launch("config")
    pe.run()
    pe.write("v_mode", np.array([1], np.uint16))
    pe.write("v_k", np.array([s.slots], np.uint16))
    where = {n: pe.program.symbols[n].address for n in ("v_fpsl", "v_bpsl", "v_infl")}
    fwd, rep = [], []
    for a in inputs:
        slot = pe.read_memory(where["v_fpsl"], 2).view(np.uint16)[0]
        pe.reset_stats()
        nz = np.flatnonzero(a)
        start = pe.cycle + 1
        pe.inject(s.a_in, a[nz], dtype="fp32", index=s.i0 + nz, start=start)
        pe.close(s.a_in, T.F_CLOSE, start=start + len(nz))
        pe.run()
        busy = pe.stats()["busy_by_task"]
        fwd.append(int(busy.get(s.a_in, 0)) + int(busy.get(T.F_CLOSE, 0)))
        sent = pe.output_values(s.p_out, "fp32")[-s.nout:]
        pe.write_memory(where["v_bpsl"], np.array([slot], np.uint16))
        pe.reset_stats()
        pe.launch("r_replay")
        pe.run()
        rep.append(int(pe.stats()["busy_by_task"].get(T.RECOMPUTE, 0)))
        again = pe.output_values(s.p_out, "fp32")[-s.nout:]   # the replay's hop
        assert np.array_equal(again.view(np.uint32), sent.view(np.uint32))
        # the sample's backward pass would end here: clear the slots, and keep the PE
        # admitting (v_infl back to 0)
        pe.write("w", blk.ravel())
        pe.write_memory(where["v_infl"], np.array([0], np.uint16))
    return fwd, rep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=20)
    args = ap.parse_args()
    X = digits()[0][:args.samples]
    ws.nn.manual_seed(0)
    model = ws.nn.Sequential(ws.nn.Linear(64, 64), ws.nn.ReLU(), ws.nn.Linear(64, 64),
                             ws.nn.ReLU(), ws.nn.Linear(64, 64), ws.nn.ReLU(),
                             ws.nn.Linear(64, 10))
    plan = ws.map(model, slots=2)
    dense = model.dense_layers()
    acts = [X.astype(np.float32)]
    for d in dense[:-1]:
        z = acts[-1] @ d.linear.weight.T.astype(np.float32) + d.linear.bias.astype(np.float32)
        acts.append(np.maximum(z, 0).astype(np.float32))
    shapes = ", ".join(f"{b.rows}x{b.cols}" for b in plan.layers)
    print(f"replay loop vs. forward f_act and f_close tasks, 64-64-64-10 ReLU, blocks {shapes}, fp32, "
          f"{len(X)} digits samples (busy cycles per PE per sample)")
    print(f"  {'layer':5s} {'PEs':>4s} {'inputs':>7s} {'nonzero':>8s} {'f_act+f_close':>16s} "
          f"{'replay':>16s} {'ratio':>6s}")
    for l in (0, 2):
        b = plan.layers[l]
        W = dense[l].linear.weight.astype(np.float32)
        fwd_all, rep_all, nnz = [], [], []
        starts = [plan.specs[b.at(r, c)] for r in range(b.rows) for c in range(b.cols)]
        starts = [s for s in starts if not s.final and s.p_in is None]
        for s in starts:
            ins = acts[l][:, s.i0:s.i0 + s.nin]
            f, rp = measure(s, W[s.o0:s.o0 + s.nout, s.i0:s.i0 + s.nin], ins)
            fwd_all += f
            rep_all += rp
            nnz.append(np.count_nonzero(ins) / len(ins) / s.nin)
        f, rp = np.array(fwd_all), np.array(rep_all)
        print(f"  {l:5d} {len(starts):4d} {np.mean([s.nin for s in starts]):7.1f} "
              f"{np.mean(nnz):8.2f} {np.median(f):6.0f} [{f.min()}, {f.max()}] "
              f"{np.median(rp):6.0f} [{rp.min()}, {rp.max()}] "
              f"{np.median(rp) / np.median(f):6.2f}")
    print("  (median [min, max] over PEs and samples; nonzero: fraction of the row's inputs "
          "that are nonzero)")


if __name__ == "__main__":
    main()
