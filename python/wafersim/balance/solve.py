"""The balancing pass: solve the level formulation, clean the answer up, verify it.

1. Cost: the MIP (whole blocks, ``scipy.optimize.milp`` with HiGHS) or the LP (cost
   linear in added depth; a network matrix, so its vertex optimum is integral). When the
   cost is linear anyway (every batch fills whole blocks) both apply and, by default, both
   run: a MIP presolve has been seen reporting a worse answer as optimal, and the LP is
   exact there, so the better answer wins and a disagreement is noted.
2. Clean-up: an LP with every buffer capped at what the chosen blocks hold, minimizing the
   added depth and the load delays (the cost cannot change; gratuitous depth in a block's
   spare room and arbitrary load delays go).
3. Verification in plain Python: depths only grew, every join is balanced (path totals,
   :mod:`.paths`), the levels certify one batch per step (:mod:`.interval`). A failure
   here is a bug in wafersim, never a silent partial balancing.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse import diags, vstack

from ..errors import WaferError
from .errors import BudgetError
from .decompose import batches, glue, split
from .formulation import LevelProblem, Levels, actions, linear_cost
from .graph import InsertedBuffer, PipelineGraph, check_graph
from .infeasible import explain_infeasible
from .interval import full_rate
from .memory import block_count, graph_blocks
from .options import BalanceOptions
from .paths import unbalanced_joins
from .result import BalanceResult

__all__ = ["balance"]

_TOL = 1e-6
_BATCH_ROWS_MIP = 200   # rows per solver call: small pieces go together, large ones alone
_BATCH_ROWS_LP = 2000


def balance(graph: PipelineGraph, *, mode: str = "equal", block_bytes: int = 1,
            tune: bool = True, insert: bool = True, delay_loads: bool = False,
            budget: int | None = None, solver: str = "auto", time_limit: float = 60.0,
            cross_check: bool = True) -> BalanceResult:
    """Balance the stage buffer depths of one section cut with the fewest memory blocks.

    * ``mode``: "equal" (default, the seed: every pair of paths into a join has the same
      total depth, load times included [0180]) or "capacity" (every path holds at least
      the latency of every other path into the same join: enough for one batch per step);
    * ``block_bytes``: bytes of one memory block (the seed's PMU); a buffer of depth d
      takes ceil(d * bytes_per_batch / block_bytes) blocks;
    * ``tune`` / ``insert`` / ``delay_loads``: the actions allowed: enlarge existing
      buffers [0153], insert whole buffers on consumer edges [0187], start loads later
      [0177]. Depths only grow (claims 3, 12);
    * ``budget``: the most blocks the pass may add; below the minimum raises
      :class:`BudgetError` with the shortfall;
    * ``solver``: "auto" (the LP where it is exact, i.e. every batch that may be added
      fills whole blocks, else the MIP), "milp" or "lp" (the linear model; a heuristic
      that ignores rounding when batches share blocks); ``time_limit`` in seconds;
      ``cross_check``: when the MIP runs where the LP is exact, run the LP too and keep
      the better answer (a MIP presolve has been seen calling a worse answer optimal).

    Raises :class:`InfeasibleError` naming the join when the options allow no balancing.
    The input graph is not changed; ``result.graph`` is the rewritten one.
    """
    check_graph(graph)
    opts = BalanceOptions(mode=mode, block_bytes=block_bytes, tune=tune, insert=insert,
                          delay_loads=delay_loads, budget=budget, solver=solver,
                          time_limit=time_limit, cross_check=cross_check)
    notes: list[str] = []
    seconds = 0.0

    def timed(fn, *args):
        nonlocal seconds
        t0 = time.perf_counter()
        out = fn(*args)
        seconds += time.perf_counter() - t0
        return out

    linear = linear_cost(graph, opts)
    if opts.solver == "milp" or (opts.solver == "auto" and not linear):
        caps, bound, status, used = _by_milp(graph, opts, linear, timed, notes)
    else:
        caps, bound, status, used = _by_lp(graph, opts, linear, timed, notes)

    tidy = LevelProblem(graph, opts, "tidy", caps)
    tres = timed(_solve, tidy, False, opts.time_limit)
    if tres.x is None:
        raise WaferError(f"internal: the clean-up LP failed ({tres.message})", category="internal")
    result = _decode(graph, opts, tidy, tres.x)
    fixed = graph_blocks(graph, opts.block_bytes) - sum(  # blocks outside the objective
        block_count(b.depth, b.bytes_per_batch, opts.block_bytes) for b in actions(graph, opts)[0])
    return _finish(graph, opts, result, status=status, solver=used, seconds=seconds,
                   lower_bound=math.ceil(bound + fixed - _TOL), notes=notes)


# ---- the cost: which depths to buy ---------------------------------------------------------
def _by_milp(graph, opts, linear: bool, timed, notes: list) -> tuple:
    """(caps, lower bound, status, solver) from the MIP, cross-checked by the LP where the
    LP is exact."""
    prob = LevelProblem(graph, opts, "blocks")
    res = timed(_solve, prob, True, opts.time_limit)
    if res.x is None:
        _no_solution(graph, opts, res)
    caps, cost, bound, status, used = _caps_from_blocks(prob, res.x), res.fun, res.bound, res.status, "milp"
    if opts.cross_check and linear:
        lp = LevelProblem(graph, opts, "bytes")
        lres = timed(_solve, lp, False, opts.time_limit)
        if lres.x is None:
            _no_solution(graph, opts, lres)
        if cost > lres.fun + _TOL:
            notes.append(f"the MIP reported {cost:g} blocks as {status}; the exact LP "
                         f"found {lres.fun:g}: using the LP's answer")
            caps, cost, used, status = _caps_from_levels(lp, lres.x), lres.fun, "lp (cross-check)", "optimal"
        elif lres.fun > cost + _TOL:
            raise WaferError(f"internal: the LP ({lres.fun:g}) is worse than the MIP "
                             f"({cost:g}) on a linear instance", category="internal")
        bound = max(min(bound, cost), lres.fun)
    return caps, bound, status, used


def _by_lp(graph, opts, linear: bool, timed, notes: list) -> tuple:
    """(caps, lower bound, status, solver) from the LP: exact when linear, else a
    heuristic that ignores rounding to blocks."""
    lp = LevelProblem(graph, opts, "bytes")
    res = timed(_solve, lp, False, opts.time_limit)
    if res.x is None:
        _no_solution(graph, opts, res)
    if not linear:
        notes.append("the linear model ignores rounding to whole blocks; "
                      "solver='milp' may need fewer blocks")
    return _caps_from_levels(lp, res.x), res.fun, "optimal" if linear else "heuristic", "lp"


# ---- solver calls -----------------------------------------------------------------------
@dataclass
class _Solved:
    x: np.ndarray | None
    fun: float = 0.0
    bound: float = 0.0
    status: str = "optimal"
    message: str = ""


def _solve(prob: LevelProblem, integer: bool, time_limit: float) -> _Solved:
    """Solve ``prob`` piece by piece (see :mod:`.decompose`) and glue the answers.

    Every piece first gets the LP (for the MIP: its relaxation), in large batches. A MIP
    piece whose relaxed answer is already integral is solved: the relaxation's optimum is
    feasible, so optimal. Only the others go to the MIP, in small batches (its effort
    grows sharply with size).
    """
    deadline = time.perf_counter() + time_limit
    pieces = split(prob)
    answers: list = [None] * len(pieces)
    total = _Solved(None)

    def run(group: list[int], batch, mip: bool) -> str | None:
        left = deadline - time.perf_counter()
        if left <= 0:
            return "time_limit"
        arrays = batch.arrays()
        mask = batch.private_mask()
        res = _milp(*arrays, left, mask) if mip else _linprog(*arrays, left)
        if mip and res.x is not None and not _integral(res.x):
            res = _integral_levels(arrays, mask, res, deadline)
        if res.x is None:
            total.message = res.message
            return {1: "time_limit", 2: "infeasible"}.get(res.status, "failed")
        if mip and res.status != 0:
            total.status = "time_limit"
        c = arrays[0]
        values = [float(c[sl] @ res.x[sl]) for sl in batch.slices]
        if not integer and not _integral(res.x):
            raise WaferError("internal: the LP vertex is not integral", category="internal")
        for k, xk, value in zip(group, batch.answers(res.x), values):
            if mip or not integer or _integral(xk):
                answers[k] = xk
                total.fun += value
                total.bound += 0.0 if mip else value
        if mip:  # what the solver proved for the batch as a whole
            total.bound += float(getattr(res, "mip_dual_bound", None) or res.fun)
        return None

    for group, batch in batches(pieces, prob, _BATCH_ROWS_LP):
        failed = run(group, batch, False)
        if failed:
            return _Solved(None, status=failed, message=total.message)
    if integer:
        todo = [k for k, a in enumerate(answers) if a is None]
        sub = [pieces[k] for k in todo]
        for group, batch in batches(sub, prob, _BATCH_ROWS_MIP):
            failed = run([todo[i] for i in group], batch, True)
            if failed:
                return _Solved(None, status=failed, message=total.message)
    total.x = glue(prob, pieces, answers)
    return total


def _integral_levels(arrays, mask: np.ndarray, res, deadline: float):
    """The MIP with continuous levels came out with fractional levels. Keep its block
    counts and look for integral levels within them (an LP: with the counts fixed, every
    row is a difference of two levels with an integer bound, so its vertex is integral);
    if there are none, solve again with every level integer."""
    c, A, lb, ub, var_lb, var_ub = arrays
    blocks = np.rint(res.x[mask])
    lb, ub, var_lb, var_ub = lb.copy(), ub.copy(), var_lb.copy(), var_ub.copy()
    var_lb[mask] = var_ub[mask] = blocks
    # a block row reads block_bytes * pmu - bytes * depth >= 0; with pmu fixed it becomes
    # depth <= floor(block_bytes * pmu / bytes), a difference of two levels
    block_rows = A[:, mask].tocoo()
    r = block_rows.row
    levels = A @ diags((~mask).astype(float))
    bytes_ = np.asarray(abs(levels[r]).max(axis=1).todense()).ravel()
    scale = np.ones(A.shape[0])
    scale[r] = -1.0 / bytes_
    levels = diags(scale) @ levels
    lb[r] = -np.inf
    ub[r] = np.floor(block_rows.data * blocks[block_rows.col] / bytes_ + 1e-9)
    A = levels
    fixed = _linprog(c, A.tocsr(), lb, ub, var_lb, var_ub, max(deadline - time.perf_counter(), 1e-3))
    if fixed.x is not None and _integral(fixed.x) and abs(fixed.fun - res.fun) < _TOL:
        fixed.status = res.status
        fixed.mip_dual_bound = getattr(res, "mip_dual_bound", None)
        return fixed
    return _milp(*arrays, deadline - time.perf_counter(), np.ones(len(res.x), bool))


def _integral(x: np.ndarray) -> bool:
    return bool(np.max(np.abs(x - np.rint(x)), initial=0.0) <= 1e-6)


def _milp(c, A, lb, ub, var_lb, var_ub, time_limit: float, integer: np.ndarray):
    """Only the block counts need be integer for HiGHS to search (several times faster);
    the levels are a relaxation, exact whenever the answer comes out integral anyway."""
    return milp(c, integrality=integer.astype(float), bounds=Bounds(var_lb, var_ub),
                constraints=LinearConstraint(A, lb, ub),
                options={"time_limit": time_limit, "mip_rel_gap": 0.0, "presolve": True})


def _linprog(c, A, lb, ub, var_lb, var_ub, time_limit: float):
    """Dual simplex, so the answer is a vertex (integral on this network matrix)."""
    eq = lb == ub
    lo = ~eq & np.isfinite(lb)
    hi = ~eq & np.isfinite(ub)
    A_ub = vstack([A[hi], -A[lo]]).tocsr()
    b_ub = np.concatenate([ub[hi], -lb[lo]])
    res = linprog(c, A_ub=A_ub if A_ub.shape[0] else None, b_ub=b_ub if A_ub.shape[0] else None,
                  A_eq=A[eq] if eq.any() else None, b_eq=lb[eq] if eq.any() else None,
                  bounds=[(None if math.isinf(a) else a, None if math.isinf(b) else b)
                          for a, b in zip(var_lb, var_ub)],
                  method="highs-ds", options={"time_limit": time_limit})
    return res


def _no_solution(graph: PipelineGraph, opts: BalanceOptions, res: _Solved) -> None:
    if res.status == "time_limit":
        raise WaferError(f"the solver found no balancing within time_limit={opts.time_limit} s "
                         f"({res.message})", category="usage")
    explain_infeasible(graph, opts)  # raises InfeasibleError naming the join
    raise WaferError(f"internal: the solver reports no solution ({res.message}) but the "
                     f"constraints are feasible", category="internal")


def _caps_from_blocks(prob: LevelProblem, x: np.ndarray) -> dict:
    """Depth each buffer (or inserted buffer) may take in the blocks the MIP chose."""
    bb = prob.options.block_bytes
    g = prob.graph
    return {key: (pmu * bb) // g.buffers[key if isinstance(key, str) else key[0]].bytes_per_batch
            for key, pmu in prob.pmu(x).items()}


def _caps_from_levels(prob: LevelProblem, x: np.ndarray) -> dict:
    lv = prob.decode(x)
    caps = {b.name: lv.x[b.name] - lv.tau[b.producer] for b in prob.tunable}
    caps.update({(b, c): lv.y[(b, c)] - lv.x[b] for b, c in prob.insertable})
    return caps


# ---- decoding and checks ----------------------------------------------------------------
def _decode(graph: PipelineGraph, opts: BalanceOptions, prob: LevelProblem,
            x: np.ndarray) -> tuple[PipelineGraph, Levels, dict, list, dict]:
    lv = prob.decode(x)
    depths = {b.name: lv.x[b.name] - lv.tau[b.producer] for b in prob.tunable}
    inserted = [InsertedBuffer(b, c, lv.y[(b, c)] - lv.x[b]) for b, c in prob.insertable
                if lv.y[(b, c)] > lv.x[b]]
    offsets = {}
    if opts.mode == "equal" and opts.delay_loads:
        offsets = {s: lv.tau[s] for s in graph.loads if lv.tau[s] != graph.nodes[s].offset}
    new = graph.rewritten(depths=depths, inserts=inserted, offsets=offsets)
    return new, lv, depths, inserted, offsets


def _finish(graph, opts, decoded, *, status, solver, seconds, lower_bound, notes) -> BalanceResult:
    new, lv, depths, inserted, offsets = decoded
    grew = all(new.buffers[b].depth >= graph.buffers[b].depth for b in graph.buffers)
    balanced = opts.mode != "equal" or not unbalanced_joins(new)
    if not (grew and balanced and full_rate(new, lv.tau)):
        raise WaferError("internal: the balancing failed its own verification "
                         f"(depths grew: {grew}, joins balanced: {balanced})", category="internal")
    bb = opts.block_bytes
    per_buffer = {b.name: block_count(b.depth, b.bytes_per_batch, bb) for b in new.buffers.values()}
    per_buffer.update({i.name: block_count(i.depth, new.buffers[i.buffer].bytes_per_batch, bb)
                       for i in new.inserts.values()})
    before, after = graph_blocks(graph, bb), sum(per_buffer.values())
    tuned = {b: new.buffers[b].depth - graph.buffers[b].depth for b in graph.buffers
             if new.buffers[b].depth > graph.buffers[b].depth}
    if opts.budget is not None and after - before > opts.budget:
        spent = [f"tune {b} +{t}" for b, t in tuned.items()]
        spent += [f"insert {i.name} depth {i.depth}" for i in inserted]
        spent += [f"delay {s} to {o}" for s, o in offsets.items()]
        proven = "at least " if status == "optimal" else ""
        raise BudgetError(
            f"balancing needs {proven}{after - before} more memory block(s) but the budget is "
            f"{opts.budget}: {after - before - opts.budget} short (cheapest balancing: "
            f"{', '.join(spent)}); nothing was changed", needed=after - before,
            budget=opts.budget)
    return BalanceResult(
        original=graph, graph=new, mode=opts.mode, block_bytes=bb,
        depths={b.name: b.depth for b in new.buffers.values()}, tuned=tuned,
        inserted=tuple(inserted),
        delays={s: o - graph.nodes[s].offset for s, o in offsets.items()},
        levels=dict(lv.tau), blocks=per_buffer, blocks_before=before, blocks_after=after,
        status=status, solver=solver, seconds=seconds, lower_bound=min(lower_bound, after),
        join_interval={j: 1.0 for j in new.joins}, notes=tuple(notes))
