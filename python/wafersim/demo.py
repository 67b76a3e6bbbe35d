"""The main demonstration job (``wafersim demo``): training on the wafer, then a short tour
of the emulator.

0. Training (seed 000 FP / DP / CP): an MLP 64-32-10 learns scikit-learn's digits entirely
   on the emulated wafer (every multiply, add and update a compute-element instruction);
   test accuracy, emulated cycles and the hardware statistics.
1. A program on the wafer: y = A x on a grid of compute elements (conformance program 3,
   ``wafersim.kernels.matvec``), x broadcast down columns, partial sums reduced along rows;
   checked bit for bit against an exact once-rounded reference and against float64.
2. The fabric with diagonal channels (seed 003): zero-load hop counts and latencies on the
   patent's delay model, and the same route measured cycle by cycle on the fabric.
3. The tensor unit (seed 002): an int8 matrix product on the 96 x 96 matrix array, equal to
   numpy's int32 product, with its emulated cycles and utilization.
4. Numerics (seed 000 [0661]-[0662]): small fp16 updates accumulated with
   round-to-nearest-even and with the data path's stochastic rounding.

Every section prints its check; the job fails (exit status 1) when one does not hold.
"""

from __future__ import annotations

import time

import numpy as np

from . import noc, numerics
from .kernels import matvec
from .tensor import TensorUnit
from .wafer import Wafer


def _heat_row(values: np.ndarray) -> str:
    """One row of a text heat map: the share of the maximum as a shade."""
    shades = " .:-=+*#%@"
    top = max(int(values.max()), 1)
    return "".join(shades[min(9, int(9 * v / top + 0.5))] * 2 for v in values)


def training_section(epochs: int, samples: int | None) -> bool:
    from .train.cli_train import build_model, parse_blocks
    from .train.datasets import digits
    from .mapping import map_model
    from .train import Trainer

    Xtr, ytr, Xte, yte = digits()
    if samples:
        Xtr, ytr = Xtr[:samples], ytr[:samples]
    plan = map_model(build_model("64-32-10", "relu", 0), blocks=parse_blocks(None))
    tr = Trainer(plan, algo="sgd", lr=0.1, progress=False)
    t0 = time.perf_counter()
    hist = tr.fit(Xtr, ytr, epochs=epochs)
    wall = time.perf_counter() - t0
    acc = tr.evaluate(Xte, yte)["accuracy"]
    st = tr.stats()
    shapes = ", ".join(f"{b.rows}x{b.cols}" for b in plan.layers)
    print(f"[0] training on the wafer: MLP 64-32-10 (ReLU), SGD, fp32, on {len(plan.pes())} PEs "
          f"(blocks {shapes})")
    print(f"    {epochs} epoch(s) of {len(Xtr)} digits: loss {hist.loss[0]:.4f} -> "
          f"{hist.loss[-1]:.4f}; test accuracy {acc:.3f} ({wall:.1f} s wall clock)")
    print(f"    {st.cycles_per_sample:.0f} emulated cycles per sample (analytic bound "
          f"{st.bound()['cycles']}); busy cycles by pass: "
          + ", ".join(f"{k} {v}" for k, v in st.busy_by_pass().items()))
    sk = st.skipped()
    print(f"    zero activations not sent: {sum(s['activations_skipped'] for s in sk)}; zero "
          f"deltas not sent: {sum(s['deltas_skipped'] for s in sk)}; peak PE memory "
          f"{int(st.memory().max())} bytes")
    return bool(hist.loss[-1] < hist.loss[0]) and acc > (0.5 if samples else 0.93)


def wafer_section(size: int, block: int) -> bool:
    n = size * block
    r = matvec.run_grid(size, block, "fp16", seed=3)
    s = r["stats"]
    exact = bool(np.array_equal(r["y"], r["reference"]))
    err = float(np.max(np.abs(r["y"].astype(np.float64) - r["numpy"])))
    busy = s.pes.array("busy_cycles")
    print(f"[1] y = A x, {n} x {n} fp16, on a {size} x {size} grid of compute elements")
    print(f"    {s.cycles} cycles, {s.pes.total('element_ops')} vector element operations, "
          f"{s.delivered} wavelets delivered ({r['seconds'] * 1e3:.0f} ms wall clock)")
    print(f"    bit-exact against the once-rounded reference: {exact}; "
          f"max |y - float64| = {err:.3g}")
    print(f"    busy cycles per PE (max {busy.max()}):")
    for row in busy:
        print(f"      |{_heat_row(row)}|")
    return exact


def noc_section(n: int) -> bool:
    c = noc.compare("uniform", n)
    corner_mesh = noc.fabric_cycles("corner", 4, topology="mesh")
    corner_diag = noc.fabric_cycles("corner", 4, topology="mesh+diag")
    w = Wafer(4, 4, topology="mesh+diag")
    w.route(0, path=[(0, 0), (1, 1), (2, 2), (3, 3)])
    w.inject((0, 0), 0, data=7)
    w.run()
    got = w.collect((3, 3))
    measured = int(got.latency[0]) if len(got) else -1
    print(f"[2] diagonal channels (seed 003), zero-load, uniform traffic on {n} x {n}:")
    print(f"    mean hops {c.mesh.hops:.2f} -> {c.diag.hops:.2f}, latency cut "
          f"{100 * c.latency_cut:.1f}% (router + wire delay model)")
    print(f"    corner to corner on 4 x 4: {corner_mesh:.0f} -> {corner_diag:.0f} routers; "
          f"measured on the fabric along the diagonal: {measured} cycles")
    return measured == int(corner_diag) and c.latency_cut > 0


def tensor_section(positions: int, depth: int, channels: int) -> bool:
    rng = np.random.default_rng(5)
    data = rng.integers(0, 256, (positions, depth), dtype=np.uint8)
    weights = rng.integers(-128, 128, (depth, channels), dtype=np.int8)
    unit = TensorUnit()
    t0 = time.perf_counter()
    out = unit.matmul(data, weights)
    wall = time.perf_counter() - t0
    want = data.astype(np.int32) @ weights.astype(np.int32)
    equal = bool(np.array_equal(out, want))
    st = unit.stats
    print(f"[3] tensor unit (seed 002): u8 ({positions} x {depth}) x s8 ({depth} x {channels}) "
          f"on the 96 x 96 matrix array")
    print(f"    {st['cycles']} cycles, {st['macs']} MACs, utilization {100 * st['utilization']:.1f}% "
          f"of peak; equal to numpy int32: {equal} ({wall * 1e3:.1f} ms wall clock)")
    return equal


def accumulate(increments: np.ndarray, mode: str, seed: int = 0) -> float:
    """Adds ``increments`` one at a time into an fp16 accumulator starting at 1.0."""
    bank = numerics.LfsrBank(4, seed)
    one = np.array([1.0], np.float16)
    acc = one.copy()
    for inc in increments.astype(np.float16):
        acc = numerics.fma(acc, one, np.array([inc], np.float16), "fp16", mode, rng=bank)
    return float(acc[0])


def numerics_section(steps: int) -> bool:
    rng = np.random.default_rng(7)
    increments = rng.uniform(0.0, 6e-4, steps).astype(np.float16)
    exact = 1.0 + float(np.sum(increments.astype(np.float64)))
    rne = accumulate(increments, "rne")
    sr = accumulate(increments, "stochastic", seed=1)
    print(f"[4] numerics: {steps} fp16 updates of about 3e-4 (a third of an fp16 ULP at 1.0)")
    print(f"    exact {exact:.4f}; round-to-nearest-even {rne:.4f} (error {rne - exact:+.4f}); "
          f"stochastic rounding {sr:.4f} (error {sr - exact:+.4f})")
    return abs(sr - exact) < abs(rne - exact)


def run_demo(quick: bool = False) -> int:
    checks = [
        training_section(2, 300) if quick else training_section(3, None),
        wafer_section(3, 8) if quick else wafer_section(8, 16),
        noc_section(8),
        tensor_section(64, 96, 96) if quick else tensor_section(512, 512, 192),
        numerics_section(500 if quick else 4000),
    ]
    failed = [i for i, ok in enumerate(checks) if not ok]
    print("all checks hold" if not failed else f"checks failed in sections {failed}")
    return 0 if not failed else 1
