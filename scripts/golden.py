"""Golden runs: record what a build computes, then check that another build computes the
same thing bit for bit (results, cycle counts, per-PE statistics, traces, printed output).

    python scripts/golden.py record DIR [--only NAME ...]
    python scripts/golden.py check DIR [--only NAME ...]
    python scripts/golden.py list

Cases: every example script's printed output (wall-clock times masked), conformance
programs 2 and 3 with traces and per-PE statistics, training runs (weights and cycles),
random structured vector programs and random instruction words on the lone-PE bench, and
runs stopped and resumed mid-operation. Goldens live outside the repository (DIR); record
them from an unmodified build, check with the changed one.
"""

from __future__ import annotations

import argparse
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # ce_bench: the random-program bench of the CE tests

# ---- canonical form ------------------------------------------------------------------------


def canon(v):
    """Plain, comparable data: numpy arrays keep dtype and shape, containers recurse."""
    if isinstance(v, np.ndarray):
        return ("ndarray", str(v.dtype), v.shape, v.tobytes())
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.floating,)):
        return ("float", np.float64(v).tobytes())
    if isinstance(v, float):
        return ("float", np.float64(v).tobytes())
    if isinstance(v, dict):
        return {str(k): canon(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [canon(x) for x in v]
    fields = getattr(type(v), "FIELDS", None)  # ws.layout.Topology, a core object: its fields
    if isinstance(fields, tuple):
        return canon({f: getattr(v, f) for f in fields})
    if hasattr(v, "__dict__") and not isinstance(v, type):
        return canon({k: x for k, x in vars(v).items() if not k.startswith("_")})
    return v


def digest(snaps):
    """A long list of snapshots kept as its hash plus the last snapshot in full: the goldens
    stay small, and a difference still shows where the final state differs."""
    import hashlib

    h = hashlib.sha256(pickle.dumps(canon(snaps), protocol=4)).hexdigest()
    return {"count": len(snaps), "sha256": h, "last": snaps[-1] if snaps else None}


def diff(a, b, path="", out=None, limit=20):
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'new' if k in b else 'golden'}")
            else:
                diff(a[k], b[k], f"{path}/{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            diff(x, y, f"{path}[{i}]", out, limit)
    elif a != b:
        sa, sb = repr(a), repr(b)
        out.append(f"{path}: golden {sa[:300]} != new {sb[:300]}")
    return out


# ---- example scripts -----------------------------------------------------------------------

EXAMPLE_ARGS = {
    "stochastic_rounding.py": [["--steps", "300"]],
    "int8_cnn_tensor_unit.py": [["--size", "12"]],
    "dense_matvec.py": [["--rows", "8", "--cols", "8"], []],
    "throttled_pipeline.py": [["--items", "40", "--work", "5"], []],
    "fifo_pipeline.py": [["--items", "16"], []],
    "forward_layer_fig11.py": [["--inputs", "8", "--outputs", "6"], []],
    "matvec_wafer.py": [["--layout", "grid", "--size", "3", "--block", "4"],
                        ["--layout", "row", "--pes", "4"],
                        ["--layout", "grid", "--size", "4", "--block", "16", "--dtype", "fp32"]],
    "tensor_dense_layer_on_pe.py": [["--batch", "2", "--inputs", "16", "--outputs", "8"]],
    "noc_diagonal_channels.py": [["--size", "5", "--window", "150"]],
    "balance_residual.py": [["--train", "40", "--test", "20"]],
    "balance_pipeline.py": [["--batches", "10"]],
    "train_digits.py": [["--samples", "120", "--epochs", "1", "--no-progress"],
                        ["--samples", "60", "--epochs", "1", "--no-progress",
                         "--numerics", "fp16-sr"],
                        ["--samples", "64", "--epochs", "1", "--no-progress", "--algo",
                         "minibatch", "--numerics", "fp16"]],
}
# Wall-clock figures vary from run to run: mask the numbers on lines that report them.
_TIMING = re.compile(r"(\d+(\.\d+)?\s*(s|ms|us|seconds|M?\s*(cycles|PE-cycles|steps|"
                     r"element-ops|wavelets|router-cycles)/s)\b|wall|per sample|x real)")


def _mask(text: str) -> str:
    lines = []
    wall_end = None  # in a table with a right-aligned "wall s" column: where its cells end
    for line in text.splitlines():
        if not line.strip():
            wall_end = None
        elif wall_end is not None:  # a row of that table: only its wall-clock cell varies
            cell = next((m for m in re.finditer(r"\d[\d,.]*", line) if m.end() == wall_end), None)
            if cell is not None:
                line = line[:cell.start()] + "#" * len(cell.group()) + line[cell.end():]
        if "wall s" in line:
            wall_end = line.index("wall s") + len("wall s")
        if _TIMING.search(line):
            line = re.sub(r"\d+(\.\d+)?", "#", line)
        lines.append(line)
    return "\n".join(lines)


def example_cases():
    cases = {}
    for script in sorted((ROOT / "examples").rglob("*.py")):
        for k, args in enumerate(EXAMPLE_ARGS.get(script.name, [[]])):
            def run(script=script, args=args):
                env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1")
                with_tmp = Path(os.environ.get("TMPDIR", "/tmp"))
                out = subprocess.run([sys.executable, str(script), *args], cwd=with_tmp, env=env,
                                     capture_output=True, text=True, timeout=1800)
                return {"rc": out.returncode, "stdout": _mask(out.stdout)}
            cases[f"example/{script.stem}/{k}"] = run
    return cases


# ---- conformance programs on the wafer -----------------------------------------------------


def _pe_stats(stats):
    return {f"{r},{c}": s for (r, c), s in sorted(stats.pes._by_pe.items())}


def _run_stats(s):
    return {"cycles": s.cycles, "quiescent": s.quiescent, "moves": s.moves,
            "injected": s.injected, "delivered": s.delivered,
            "router_cycles": s.router_cycles, "latency": s.latency_histogram,
            "hops": s.hop_histogram, "pes": _pe_stats(s)}


def matvec_cases():
    from wafersim.kernels import matvec

    cases = {}
    ce = {"trace": True, "profile": True}

    def grid(size, block, dtype, density, threads):
        def run():
            r = matvec.run_grid(size, block, dtype, density=density, seed=size + block,
                                ce=ce, threads=threads, parallel_min_routers=1)
            w = r["wafer"]
            return {"y": r["y"], "stats": _run_stats(r["stats"]),
                    "a": [w.pe(0, c).read("psum") for c in range(size)]}
        return run

    for size, block, dtype, density, threads in [(3, 4, "fp16", 1.0, 1), (4, 16, "fp16", 0.7, 1),
                                                 (4, 8, "fp32", 1.0, 1), (5, 8, "fp16", 1.0, 2),
                                                 (2, 32, "fp32", 0.5, 2), (8, 16, "fp16", 1.0, 2)]:
        cases[f"matvec/grid/{size}x{block}/{dtype}/{density}/t{threads}"] = grid(
            size, block, dtype, density, threads)

    def row(pes, dtype):
        def run():
            r = matvec.run_row(16, 8 * pes, pes, dtype, ce=ce)
            return {"y": r["y"], "stats": _run_stats(r["stats"])}
        return run

    for pes, dtype in [(1, "fp16"), (4, "fp16"), (3, "fp32")]:
        cases[f"matvec/row/{pes}/{dtype}"] = row(pes, dtype)

    def stopped():
        # A run stopped every few cycles: the state at each stop is part of the result.
        from wafersim.kernels.matvec import FINISH, X, _load_row_programs
        from wafersim.wafer import Wafer

        rng = np.random.default_rng(5)
        R = C = 2
        blk = 16
        w = Wafer(R, C, ce=ce)
        for r in range(R):
            _load_row_programs(w, r, blk, blk, "fp16", bias=False)
        for r in range(R):
            for c in range(C):
                w.router(r, c).set_route(X, rx=["N"], tx=["RAMP"] + (["S"] if r > 0 else []))
        a = rng.uniform(-1, 1, (R * blk, C * blk)).astype(np.float16)
        x = rng.uniform(-1, 1, C * blk).astype(np.float16)
        w.memcpy_h2d("a", a.reshape(R, blk, C, blk).transpose(0, 2, 3, 1).reshape(R, C, blk * blk))
        w.launch("main")
        for c in range(C):
            w.stream((R, c), X, x[c * blk:(c + 1) * blk], dtype="fp16",
                     index=np.arange(blk))
            w.close((R, c), X, FINISH)
        snaps = []
        for k in range(400):
            s = w.run(max_cycles=int(rng.integers(1, 7)))
            snaps.append({"cycle": w.cycle, "psum": [w.pe(r, c).read("psum") for r in range(R)
                                                     for c in range(C)],
                          "gpr": [[w.pe(r, c).gpr(i) for i in range(16)] for r in range(R)
                                  for c in range(C)],
                          "stats": _pe_stats(s)})
            if s.quiescent:
                break
        return {"snaps": digest(snaps)}

    cases["matvec/stopped"] = stopped
    return cases


# ---- training ------------------------------------------------------------------------------


def training_cases():
    cases = {}

    def train(algo, numerics, batch, sizes=(12, 9, 7, 4), samples=12, epochs=2):
        def run():
            import wafersim as ws

            rng = np.random.default_rng(0)
            X = rng.uniform(-1, 1, (samples, sizes[0])).astype(np.float32)
            X[X < 0] = 0
            Y = rng.uniform(-1, 1, (samples, sizes[-1])).astype(np.float32)
            layers = []
            for i in range(len(sizes) - 1):
                layers.append(ws.nn.Linear(sizes[i], sizes[i + 1], seed=30 + i))
                if i < len(sizes) - 2:
                    layers.append(ws.nn.ReLU())
            model = ws.nn.Sequential(*layers)
            plan = ws.map(model, blocks=[(4, 3), (3, 2), (2, 2)],
                          dtype="fp32" if numerics == "fp32" else "fp16")
            tr = ws.Trainer(plan, algo=algo, lr=0.05, batch_size=batch, numerics=numerics,
                            seed=1, progress=False)
            h = tr.fit(X, Y, epochs=epochs, shuffle=False)
            out = tr.forward(X[0])
            return {"weights": tr.weights(), "loss": list(h.loss), "cycles": list(h.cycles),
                    "forward": out, "stats": canon(tr.stats())}
        return run

    cases["train/sgd/fp32"] = train("sgd", "fp32", None)
    cases["train/minibatch/fp32"] = train("minibatch", "fp32", 4)
    cases["train/sgd/fp16"] = train("sgd", "fp16", None)
    cases["train/sgd/fp16-sr"] = train("sgd", "fp16-sr", None)
    return cases


# ---- random programs on the lone-PE bench --------------------------------------------------

FP_OPS = {"fp16": ["faddh", "fsubh", "fmulh", "fmach", "fmaxh", "fminh", "fnegh", "fabsh",
                   "reluh", "movh"],
          "fp32": ["fadds", "fsubs", "fmuls", "fmacs", "fmaxs", "fmins", "fnegs", "fabss",
                   "relus", "mov32"]}


def _random_vector_program(rng, dtype, ops):
    """A task that sets an FP mode, loads three memory vectors (or a register / immediate
    source) and runs a few vector operations over them, some in place, some overlapping."""
    es = 2 if dtype == "fp16" else 4
    n = int(rng.integers(1, 70))
    lines = [".data", f"x: .space {dtype}, 256", f"y: .space {dtype}, 256", f"z: .space {dtype}, 256"]
    descs = []
    for k in range(6):
        base = ["x", "y", "z"][int(rng.integers(0, 3))]
        off = int(rng.integers(0, 40)) * es
        stride = es * int(rng.choice([1, 1, 1, 2, -1, 0]))
        if stride < 0:
            off += (n - 1) * es
        lines.append(f"d{k}: .dsd mem1d, base={base}+{off}, length={n}, stride={stride}")
        descs.append(f"d{k}")
    mode = int(rng.integers(0, 6))
    sub = int(rng.integers(0, 3)) if rng.random() < 0.3 else 0
    sat = int(rng.integers(0, 4)) if rng.random() < 0.2 else 0
    nbits = int(rng.integers(0, 8))
    fpc = mode | (sub << 3) | (sat << 5) | (nbits << 7)
    lines += [".export x, y, z", ".code", ".task t, 1", f"t: li r9, {fpc & 0x1FF}",
              f"  movhi r9, {fpc >> 6}" if fpc >= 512 else "  nop", "  setfpc r9"]
    for k in range(int(rng.integers(1, 6))):
        op = ops[int(rng.integers(0, len(ops)))]
        d, s0, s1 = (descs[int(i)] for i in rng.integers(0, 6, 3))
        lines += [f"  lds0wds S0[{k % 3}], {s0}", f"  lds1wds S1[{k % 3}], {s1}",
                  f"  lddwds D[{k % 3}], {d}"]
        if op.startswith(("fneg", "fabs", "relu", "mov")):
            lines.append(f"  {op} D[{k % 3}], S1[{k % 3}]")
        else:
            lines.append(f"  {op} D[{k % 3}], S0[{k % 3}], S1[{k % 3}]")
    lines.append("  term")
    return "\n".join(lines)


def _snapshot(pe, names=("x", "y", "z")):
    out = {"cycle": pe.cycle, "stats": pe.stats(),
           "gpr": [pe.gpr(i) for i in range(16)],
           "dsr": {k: [pe.dsr(k, i) for i in range(12)] for k in ("s0", "s1", "d")},
           "flag": pe.flag}
    for n in names:
        try:
            out[n] = pe.read(n)
        except Exception as e:  # noqa: BLE001
            out[n] = repr(e)
    return out


def random_program_cases(count=60):
    cases = {}

    def vector(seed):
        def run():
            import wafersim as ws

            rng = np.random.default_rng(seed)
            dtype = "fp16" if seed % 2 == 0 else "fp32"
            src = _random_vector_program(rng, dtype, FP_OPS[dtype])
            pe = ws.pe.LonePE(trace=True, profile=True, rng_seed=seed)
            try:
                pe.load(src)
            except ws.WaferError as e:
                return {"load_error": str(e)}
            t = np.float16 if dtype == "fp16" else np.float32
            vals = rng.standard_normal(256 * 3) * np.exp2(rng.integers(-20, 12, 256 * 3))
            vals[rng.random(256 * 3) < 0.05] = 0
            vals = vals.astype(t)
            for i, nm in enumerate(("x", "y", "z")):
                pe.write(nm, vals[i * 256:(i + 1) * 256])
            pe.launch("t")
            snaps = []
            try:
                if seed % 3 == 0:  # stop and look every few cycles
                    while not pe.idle and pe.cycle < 5000:
                        pe.run(int(rng.integers(1, 9)))
                        snaps.append(_snapshot(pe))
                else:
                    pe.run()
            except ws.WaferError as e:
                snaps.append({"error": str(e)})
            snaps.append(_snapshot(pe))
            return {"src": src, "snaps": digest(snaps)}
        return run

    for seed in range(count):
        cases[f"random/vector/{seed}"] = vector(seed)

    def words(seed):
        def run():
            import wafersim as ws
            from ce_bench import random_bench
            from wafersim.asm import isa

            spec = isa()
            rng = np.random.default_rng(1000 + seed)
            ops = sorted(spec.ops.values(), key=lambda o: o.mnemonic)
            ws_ = []
            for _ in range(int(rng.integers(4, 24))):
                op = ops[int(rng.integers(0, len(ops)))]
                fam = spec.families[op.family]
                word = fam.put(fam.put(0, "prefix", int(fam.prefix, 2)), "opcode", op.opcode)
                for name, (hi, lo) in fam.fields.items():
                    if name in ("prefix", "opcode", "reserved"):
                        continue
                    word = fam.put(word, name, int(rng.integers(0, 1 << (hi - lo + 1))))
                ws_.append(word)
            pe = random_bench(ws_, rng, trace=True)
            err = None
            try:
                pe.run(400)
            except ws.WaferError as e:
                err = str(e)
            return {"err": err, "mem": pe.read_memory(0, 8192 - 2048), "stats": pe.stats(),
                    "gpr": [pe.gpr(i) for i in range(16)],
                    "dsr": {k: [pe.dsr(k, i) for i in range(12)] for k in ("s0", "s1", "d")},
                    "out2": pe.output(2), "wait": pe.describe_wait()}
        return run

    for seed in range(count * 2):
        cases[f"random/words/{seed}"] = words(seed)

    def bench_loops(name, src, cycles, step):
        def run():
            import wafersim as ws

            pe = ws.pe.LonePE(profile=True)
            pe.load(src)
            rng = np.random.default_rng(3)
            pe.write("x", rng.uniform(-1, 1, 64).astype(np.float16 if "fp16" in src else np.float32))
            pe.launch("t")
            snaps = []
            while pe.cycle < cycles:
                pe.run(step)
                snaps.append(_snapshot(pe, ("x",)))
            return {"snaps": digest(snaps)}
        return run

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_ce  # noqa: E402

    for t, s, op in (("fp16", 2, "fmach"), ("fp32", 4, "fmacs"), ("fp16", 2, "faddh")):
        src = bench_ce.VECTOR_LOOP.format(t=t, s=s, op=op).replace(
            "x: .space", ".export x\nx: .space")
        for step in (7, 1000):
            cases[f"bench/{op}/{step}"] = bench_loops(op, src, 3000, step)
    return cases


def fabric_vector_cases():
    """Vector operations with fabric operands, microthreads and sends next to memory-only
    ones: the existing CE tests' kernels, run to completion on the lone-PE bench."""
    cases = {}

    def fifo_and_fabric(seed):
        def run():
            import wafersim as ws

            rng = np.random.default_rng(seed)
            src = """
.data
buf:  .space fp16, 64
acc:  .space fp16, 64
out:  .space fp16, 64
.export buf, acc, out
din:  .dsd fabric_in, length=32, sw=2, sc=1, ch=0, utid=3, ue=1, ac=5
dbuf: .dsd mem1d, base=buf, length=32, stride=2
dacc: .dsd mem1d, base=acc, length=32, stride=2
dout: .dsd fabric_out, color=9, length=32, sw=2
dsend: .dsd fabric_out, color=9, length=32, sw=2
.code
.task t, 1
.task done, 5
t:   block 3
     lds1wds S1[0], din
     lddwds D[0], dbuf
     mov16 D[0], S1[0]
     lds0wds S0[1], dacc
     lds1wds S1[1], dacc
     lddwds D[1], dacc
     faddh D[1], S0[1], S1[1]
     fmach D[1], S0[1], S1[1]
     term
done: lds0wds S0[2], dbuf
     lds1wds S1[2], dacc
     lddwds D[2], dout
     faddh D[2], S0[2], S1[2]
     lds0wds S0[3], dacc
     lds1wds S1[3], dbuf
     lddwds D[3], dacc
     fmulh.t D[3], S0[3], S1[3]
"""
            pe = ws.pe.LonePE(trace=True, profile=True)
            pe.load(src)
            pe.write("acc", rng.uniform(-2, 2, 64).astype(np.float16))
            pe.set_gpr(2, int(np.float16(rng.uniform(-1, 1)).view(np.uint16)))
            pe.inject(3, rng.uniform(-1, 1, 32).astype(np.float16), dtype="fp16", sw=2,
                      start=int(rng.integers(0, 30)), interval=int(rng.integers(1, 5)))
            pe.launch("t")
            snaps = []
            while not pe.idle and pe.cycle < 3000:
                pe.run(int(rng.integers(1, 6)))
                snaps.append(_snapshot(pe, ("buf", "acc")))
            return {"snaps": digest(snaps), "out": pe.output(9)}
        return run

    for seed in range(6):
        cases[f"fabric/fifo/{seed}"] = fifo_and_fabric(seed)
    return cases


def all_cases():
    cases = {}
    for f in (matvec_cases, training_cases, random_program_cases, fabric_vector_cases,
              example_cases):
        cases.update(f())
    return cases


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["record", "check", "list"])
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--only", nargs="*", default=None, help="case name prefixes")
    args = ap.parse_args()
    cases = all_cases()
    names = [n for n in cases if not args.only or any(n.startswith(p) for p in args.only)]
    if args.mode == "list":
        print("\n".join(names))
        return 0
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    bad = 0
    for name in names:
        try:
            got = canon(cases[name]())
        except Exception as e:  # noqa: BLE001  (a failure is a result too)
            got = {"exception": f"{type(e).__name__}: {e}"}
        f = d / (name.replace("/", "__") + ".pkl")
        if args.mode == "record":
            f.write_bytes(pickle.dumps(got))
            print(f"recorded {name}", flush=True)
            continue
        if not f.exists():
            print(f"MISSING {name}", flush=True)
            bad += 1
            continue
        gold = pickle.loads(f.read_bytes())
        d_ = diff(gold, got)
        if d_:
            bad += 1
            print(f"DIFFERS {name}:\n  " + "\n  ".join(d_), flush=True)
        else:
            print(f"same    {name}", flush=True)
    if args.mode == "check":
        print(f"{len(names) - bad} same, {bad} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
