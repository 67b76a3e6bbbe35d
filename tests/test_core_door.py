"""The package's structure: one door to the C++ core, no reach into other modules' private
members, and no import cycles (issue 25, section 4).

The extension ``wafersim._core`` is loaded by ``wafersim/_extension.py`` alone; every other
module takes it from there. No module imports names from the package ``__init__`` (or an
ancestor package's), which would make imports run back up the layers. A module touches only
its own private members (``_name``): the scan flags ``obj._name`` (``obj`` not ``self`` or
``cls``), ``from .x import _name`` and ``f(_name=...)`` when ``_name`` is not defined in the
module itself. A module defining a private name of the same spelling hides a reach of that
name from the scan, so private names are best kept distinct.

mapping/ and train/ are left out of the scan while they are rewritten (their remaining
reaches go when the lead switches them to public members; docs/decisions.md, "Package
structure").
"""

from __future__ import annotations

import ast
import concurrent.futures
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "wafersim"
DOOR = PACKAGE / "_extension.py"
NOT_SCANNED = ()
SUBPACKAGES = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists())


def _modules(skip=NOT_SCANNED) -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py")
                  if not any(part in skip for part in p.relative_to(PACKAGE).parts))


def _dotted(path: Path) -> str:
    parts = ("wafersim",) + path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path: Path) -> str:
    """The package a module's relative imports start from."""
    name = _dotted(path)
    return name if path.name == "__init__.py" else name.rsplit(".", 1)[0]


def _is_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module or subpackage of wafersim (a file on disk)."""
    rel = Path(*dotted.split(".")[1:]) if "." in dotted else Path()
    return (PACKAGE / rel).with_suffix(".py").exists() or (PACKAGE / rel / "__init__.py").exists() \
        or dotted == "wafersim._core"


def _resolve(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module name of ``from <node.module> import ...``."""
    if node.level == 0:
        return node.module or ""
    base = _package_of(path).split(".")
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _defined_here(tree: ast.AST) -> set[str]:
    """Private names a module defines: functions, classes, parameters, assigned names and
    attributes it stores (``self._x = ...``), and names it imports under its own alias."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            out.add(node.attr)
        elif isinstance(node, ast.alias):
            out.add(node.asname or node.name.split(".")[0])
    return {n for n in out if _private(n)}


def _own(node: ast.AST) -> bool:
    """``self``, ``cls`` or ``super()``: the object's own members."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "super")


def _violations(path: Path, source: str | None = None) -> list[str]:
    tree = ast.parse(path.read_text() if source is None else source, filename=str(path))
    here = _defined_here(tree)
    own_packages = []   # this module's package and its ancestors: their __init__ is off limits
    parts = _package_of(path).split(".")
    for k in range(len(parts), 0, -1):
        own_packages.append(".".join(parts[:k]))
    rel = path.relative_to(PACKAGE.parent)
    out = []

    def bad(node, what):
        out.append(f"{rel}:{node.lineno}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "wafersim" or a.name.startswith("wafersim."):
                    bad(node, f"imports {a.name} absolutely (through the package __init__)")
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(path, node)
            for a in node.names:
                target = f"{source}.{a.name}"
                if (source == "wafersim._core" or target == "wafersim._core") and path != DOOR:
                    bad(node, "imports the extension wafersim._core (take `core` from "
                              "wafersim._extension)")
                elif node.level == 0 and (source == "wafersim" or source.startswith("wafersim.")):
                    bad(node, f"imports from {source} absolutely")
                elif source in own_packages and not _is_module(target) and path.name != "__init__.py":
                    bad(node, f"imports {a.name!r} from the __init__ of {source}")
                elif _private(a.name) and not _is_module(target):
                    bad(node, f"imports the private name {a.name} from {source}")
        elif isinstance(node, ast.Attribute) and _private(node.attr) and not _own(node.value):
            if node.attr not in here:
                bad(node, f"reaches into another module's private member .{node.attr}")
        elif isinstance(node, ast.keyword) and node.arg and _private(node.arg):
            if node.arg not in here:
                bad(node, f"passes another module's private parameter {node.arg}=")
    return out


def test_only_the_door_module_loads_the_core_and_no_module_reaches_into_private_members():
    found = [v for p in _modules() for v in _violations(p)]
    assert found == [], "\n".join(found)


def test_the_scan_catches_each_kind_of_reach():
    """The scan itself: every kind of violation in a made-up module is reported."""
    source = ("from .. import _core\n"
              "from .. import Wafer\n"
              "from ..wafer import _RAMP\n"
              "import wafersim\n"
              "from wafersim.layout import Rect\n"
              "def f(w):\n"
              "    w._fabric_color(3)\n"
              "    return g(_core_engine=1)\n")
    found = _violations(PACKAGE / "kernels" / "made_up.py", source)
    kinds = ["imports the extension", "from the __init__ of wafersim", "private name _RAMP",
             "imports wafersim absolutely", "from wafersim.layout absolutely",
             "private member ._fabric_color", "private parameter _core_engine"]
    for kind in kinds:
        assert any(kind in v for v in found), (kind, found)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports when it is loaded (module level only)."""
    graph = {}
    for path in _modules(skip=()):
        name = _dotted(path)
        deps = set()
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in tree.body:   # imports inside functions run later, not at load
            stmts = [node]
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                continue         # annotations only: never imported when the module loads
            if isinstance(node, (ast.If, ast.Try)):
                stmts = list(ast.walk(node))
            for st in stmts:
                if isinstance(st, ast.ImportFrom):
                    source = _resolve(path, st)
                    for a in st.names:
                        target = f"{source}.{a.name}"
                        deps.add(target if _is_module(target) else source)
                elif isinstance(st, ast.Import):
                    deps.update(a.name for a in st.names)
        graph[name] = {d for d in deps if d.startswith("wafersim") and d != name
                       and _is_module(d)}
    return graph


def test_the_package_has_no_import_cycle_below_its_init():
    """Tarjan's strongly connected components over module-level imports: none has two
    modules (the package __init__ aside, which only re-exports)."""
    graph = _import_graph()
    graph = {k: {d for d in v if d != "wafersim"} for k, v in graph.items() if k != "wafersim"}
    index, low, stack, on, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            # a subpackage __init__ importing its own modules is not a cycle by itself
            real = [m for m in comp if not any(m.startswith(p + ".") for p in comp if p != m)]
            if len(real) > 1:
                cycles.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == []


_BARE_IMPORT = """
import importlib, importlib.util, sys
spec = importlib.util.find_spec("wafersim")
package = importlib.util.module_from_spec(spec)   # the package, its __init__ not run
sys.modules["wafersim"] = package
importlib.import_module(sys.argv[1])
"""


def _import_first(module: str) -> tuple[str, int, str]:
    env = dict(os.environ, MPLBACKEND="Agg")
    r = subprocess.run([sys.executable, "-c", _BARE_IMPORT, module], capture_output=True,
                       text=True, env=env, timeout=300)
    return module, r.returncode, r.stderr[-2000:]


def _import_each_first(modules: list[str]) -> None:
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        failed = [r for r in pool.map(_import_first, modules) if r[1] != 0]
    assert failed == [], "\n\n".join(f"{m}:\n{err}" for m, _, err in failed)


def test_each_subpackage_imports_first_in_a_fresh_interpreter():
    """Each subpackage (and the door) imported first, before the package __init__ has run
    (it does not run at all): a cycle, or a name taken from the package __init__, fails."""
    _import_each_first(["wafersim._extension"] + [f"wafersim.{s}" for s in SUBPACKAGES])


@pytest.mark.slow
def test_each_module_imports_first_in_a_fresh_interpreter():
    _import_each_first([_dotted(p) for p in _modules(skip=())
                        if p.name != "__main__.py" and _dotted(p) != "wafersim"])
