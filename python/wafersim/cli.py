"""The ``wafersim`` command: ``wafersim info``, ``wafersim demo`` and ``wafersim train``."""

from __future__ import annotations

import argparse
import platform
import sys

from ._extension import WAIT_POLICY, core
from .defaults import DEFAULTS
from .presets import PRESETS

_WAITS = {"passive": "threads wait passively (wafersim's default)",
          "user": "wait policy from OMP_WAIT_POLICY / GOMP_SPINCOUNT / KMP_BLOCKTIME",
          "runtime": "wait policy of a runtime another module started first"}


def _info(_args: argparse.Namespace) -> int:
    build = core.build_info()
    print(f"wafersim {build['version']}")
    print(f"  python      {platform.python_version()} ({sys.executable})")
    print(f"  compiler    {build['compiler']} (C++ {build['cplusplus']})")
    print(f"  openmp      {build['openmp']}, {core.omp_max_threads()} thread(s) available, "
          f"{_WAITS[WAIT_POLICY]}")
    print(f"  sanitizers  {build['sanitizers']}")
    print("default configuration:")
    width = max(len(k) for k in DEFAULTS)
    for key, value in DEFAULTS.items():
        print(f"  {key:<{width}}  {value}")
    print("wafer presets (ws.Wafer.preset(name)):")
    for p in PRESETS.values():
        print(f"  {p.name:<{width}}  {p.describe()}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(quick=args.quick)


def _train(args: argparse.Namespace) -> int:
    from .train.cli_train import main as train_main

    return train_main(args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="wafersim", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="version, compiler, threads and default configuration")
    demo = sub.add_parser("demo", help="run the main end-to-end demonstration")
    demo.add_argument("--quick", action="store_true", help="smaller sizes, for tests")
    from .train.cli_train import add_arguments

    train = sub.add_parser("train", help="train a network on the digits data set, on the wafer")
    add_arguments(train)
    args = parser.parse_args(argv)
    handlers = {"info": _info, "demo": _demo, "train": _train}
    return handlers[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
