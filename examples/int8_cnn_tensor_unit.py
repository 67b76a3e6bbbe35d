"""A small quantized CNN on the seed-002 tensor unit, checked bit for bit against numpy.

conv 3x3 (3 -> 16 channels) -> ReLU + quantize to u8 -> 2x2 max-pool -> conv 3x3 (16 -> 10)
-> ReLU + quantize. Prints each layer's cycles, utilization of the 96 x 96 array and stalls.
Run: python examples/int8_cnn_tensor_unit.py [--size 32] [--plot utilization.png]
"""

from __future__ import annotations

import argparse

import numpy as np

import wafersim as ws
from wafersim.reference import int8_net


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=32, help="input height and width")
    ap.add_argument("--plot", default=None, help="save a utilization bar chart to this file")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (3, args.size, args.size), dtype=np.uint8)
    layers = [
        {"w": rng.integers(-128, 128, (16, 3, 3, 3)).astype(np.int8),
         "bias": rng.integers(-20000, 20000, 16).astype(np.int32), "scale": 5, "shift": 12, "pool": (2, 2)},
        {"w": rng.integers(-128, 128, (10, 16, 3, 3)).astype(np.int8),
         "bias": rng.integers(-20000, 20000, 10).astype(np.int32), "scale": 3, "shift": 13, "pool": None},
    ]
    tu = ws.TensorUnit()
    y, stats = x, []
    for i, layer in enumerate(layers):
        y = tu.conv2d(y, layer["w"], layer["bias"], scale=layer["scale"], shift=layer["shift"],
                      pool=layer["pool"])
        s = tu.stats
        stats.append(s)
        print(f"layer {i}: out {y.shape}, {s['cycles']:,} cycles, {s['macs']:,} MACs, "
              f"utilization {s['utilization']:.1%}, stalls {s['stalls']}")
    want = int8_net.forward(x, layers)
    assert np.array_equal(y, want), "tensor unit differs from the numpy reference"
    print("bit-exact against wafersim.reference.int8_net: yes")
    if args.plot:
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.bar([f"layer {i}" for i in range(len(stats))], [s["utilization"] * 100 for s in stats])
        ax.set_ylabel("array utilization (%)")
        fig.tight_layout()
        fig.savefig(args.plot)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
