"""Train an MLP (64-32-10, ReLU) on scikit-learn's digits entirely on the emulated wafer:
every multiply, add, activation, delta and weight update runs as compute-element
instructions in the cycle-level simulator; the host streams images and targets in and
reads outputs, losses and weights out (docs/training.md).

    python examples/train_digits.py                  # SGD, fp32, 6 epochs
    python examples/train_digits.py --algo minibatch --batch-size 8
    python examples/train_digits.py --numerics fp16-sr --epochs 3
    python examples/train_digits.py --loss cross-entropy --lr 0.02 --momentum 0.5
                                     # a softmax head on the wafer, SGD with momentum

The last line printed is the test accuracy.
"""

from __future__ import annotations

import argparse

from wafersim.train.cli_train import add_arguments, report, train_digits


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(ap)
    args = ap.parse_args(argv)
    report(train_digits(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
