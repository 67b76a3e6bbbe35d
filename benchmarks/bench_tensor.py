"""Matrix-array throughput: an int8 matmul on the emulated 96 x 96 array.

Prints the emulated cycles (which equal the analytic count of the output-stationary dataflow,
checked in tests/test_matrix_array.py), the array utilization, wall-clock MACs per second of
the emulator (fast mode), and the ratio to the baseline numpy int32 matmul of the same shapes.
Run: python benchmarks/bench_tensor.py [--n 1024] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import wafersim as ws
from timing import best_of  # benchmarks/timing.py


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1024, help="M = N = K of the matmul")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    n = args.n
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (n, n), dtype=np.uint8)
    b = rng.integers(-128, 128, (n, n)).astype(np.int8)
    ma = ws.tensor.MatrixArray(96, 96)
    t_emu = best_of(lambda: ma.matmul(a, b), args.repeat)
    out = ma.matmul(a, b)
    a32, b32 = a.astype(np.int32), b.astype(np.int32)
    t_np = best_of(lambda: a32 @ b32, max(1, args.repeat - 1))
    assert np.array_equal(out, a32 @ b32)
    macs = n ** 3
    s = ma.stats
    print(f"int8 matmul {n}x{n}x{n} on a 96x96 array (OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '-')})")
    print(f"emulated cycles        {s['cycles']:>14,d}   (tiles {s['tiles']}, utilization {s['utilization']:.3f})")
    print(f"emulator (fast mode)   {macs / t_emu / 1e9:>10.2f} GMAC/s wall clock   ({t_emu * 1e3:.1f} ms)")
    print(f"baseline numpy int32   {macs / t_np / 1e9:>10.2f} GMAC/s wall clock   ({t_np * 1e3:.1f} ms)")
    print(f"ratio emulator / numpy int32 matmul: {t_np / t_emu:.1f}x")
    a_f, b_f = a.astype(np.float32), b.astype(np.float32)
    t_blas = best_of(lambda: a_f @ b_f, args.repeat)
    print(f"(for scale: numpy float32 BLAS matmul {macs / t_blas / 1e9:.2f} GMAC/s, "
          f"ratio emulator / BLAS {t_blas / t_emu:.2f}x)")


if __name__ == "__main__":
    main()
