"""Loads a script of the repository (an example, a kernel, a generator) as a module, so
tests can call its functions: scripts are not part of the installed package."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_script(relative_path: str):
    """The module of ``ROOT / relative_path`` (e.g. "examples/kernels/dense_matvec.py")."""
    path = ROOT / relative_path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
