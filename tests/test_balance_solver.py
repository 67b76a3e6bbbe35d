"""The balancing pass of seed 004 against the seed's examples, the greedy foil and the
brute-force oracle."""

import random

import numpy as np
import pytest
from scipy.optimize import Bounds, LinearConstraint, milp

import wafersim as ws
from wafersim.balance import Buffer, Load, PipelineGraph, Stage, examples
from wafersim.balance.formulation import LevelProblem
from wafersim.balance.options import BalanceOptions

B = ws.balance


# ---- FIG. 12: why a global solver ---------------------------------------------------------
def test_fig12_greedy_order_leaves_j2_unbalanced_0170():
    bad = B.greedy(examples.fig12(), order=["J2", "J1"])
    assert bad.depths == {"b1": 5, "b2": 5, "b3": 4} and bad.unbalanced == ["J2"]
    good = B.greedy(examples.fig12(), order=["J1", "J2"])               # the order of [0169]
    assert good.depths == {"b1": 5, "b2": 5, "b3": 5} and good.unbalanced == []


@pytest.mark.parametrize("dpp", [1, 2, 3, 4, 5])
def test_fig12_solver_balances_every_join_at_no_higher_cost_than_greedy_0169_0171(dpp):
    res = B.balance(examples.fig12(), block_bytes=dpp)
    assert B.unbalanced_joins(res.graph) == []
    for order in (["J2", "J1"], ["J1", "J2"]):
        assert res.blocks_added <= B.greedy(examples.fig12(), order, block_bytes=dpp).blocks_added


# ---- FIG. 14: PMU cost across depth per block ---------------------------------------------
# Blocks added by the optimum, by depth per block (digest 004 section 7, computed there by
# brute force; our own brute force must agree).
FIG14_OPTIMUM = {1: 2, 2: 1, 3: 1, 4: 1, 5: 0}


@pytest.mark.parametrize("dpp", [1, 2, 3, 4, 5])
def test_fig14_optimum_matches_its_brute_force_table_0193_0194(dpp):
    res = B.balance(examples.fig14(), block_bytes=dpp)
    oracle = B.brute_force(examples.fig14(), block_bytes=dpp, window=6)
    assert res.blocks_added == oracle.blocks_added == FIG14_OPTIMUM[dpp]
    assert res.status == "optimal" and res.lower_bound == res.blocks_after
    assert B.balance(examples.fig14(), block_bytes=dpp, solver="milp").blocks_added == FIG14_OPTIMUM[dpp]


@pytest.mark.parametrize("dpp", [1, 2, 3, 4, 5])
def test_fig14_patent_solutions_are_balanced_and_never_cheaper_0188_0192(dpp):
    g = examples.fig14()
    sol1 = g.rewritten(depths={"b2": 5, "b3": 5})                                  # [0189]
    sol2 = g.rewritten(depths={"b2": 5}, inserts=[B.InsertedBuffer("b3", "J2", 1)])  # [0192]
    best = B.balance(g, block_bytes=dpp).blocks_added
    for sol in (sol1, sol2):
        assert B.unbalanced_joins(sol) == []
        assert B.graph_blocks(sol, dpp) - B.graph_blocks(g, dpp) >= best


def test_fig14_optimum_feeds_the_joins_at_different_levels_with_one_block_per_batch():
    # one block per batch: tune b2 3 -> 4 (J2 at 4) and insert depth 1 on b2 -> J1 (J1 at 5)
    res = B.balance(examples.fig14(), block_bytes=1)
    assert res.tuned == {"b2": 1}
    assert [(i.buffer, i.consumer, i.depth) for i in res.inserted] == [("b2", "J1", 1)]
    assert (res.levels["J1"], res.levels["J2"]) == (5, 4)


# ---- optimality against the brute force -----------------------------------------------------
def _oracle_window(graph, levels, mode):
    """Per node, how far the brute force searches above the level its inputs force (a
    load: above its offset): at least 2, and far enough to hold the solver's answer, so
    that the oracle's optimum can only be cheaper or equal."""
    window = {}
    for v in graph.order:
        if graph.inputs[v]:
            low = max(levels[graph.producer(b)] + max(graph.latency(graph.producer(b)),
                                                       graph.capacity(b, v) if mode == "equal" else 0)
                      for b in graph.inputs[v])
        else:
            low = graph.nodes[v].offset if mode == "equal" else 0
        window[v] = max(2, levels[v] - low)
    return window


def _random_cases(count, mode, first_seed=0):
    """Seeded small DAGs: 1-2 loads and 3-6 stages, reconvergent joins, fan-out buffers,
    depths 1-6, 1-4 bytes per batch in 4-byte blocks (4, 2, 1.33 or 1 batches per block),
    stage latencies 1-2, some without insertion or with load delays."""
    seed = first_seed
    while count:
        rng = random.Random(seed)
        g = B.random_graph(rng.randint(3, 6), seed=seed, loads=rng.choice([1, 1, 2]),
                           bytes_per_batch=(1, 2, 3, 4), join_prob=0.6, fanout_prob=0.4,
                           reach=3, max_latency=rng.choice([1, 1, 2]))
        opts = dict(mode=mode, block_bytes=4, delay_loads=rng.random() < 0.3,
                    insert=rng.random() < 0.8)
        seed += 1
        yield seed - 1, g, opts
        count -= 1


def _check_against_brute_force(g, opts, seed):
    try:
        res = B.balance(g, solver="milp", **opts)
    except B.InfeasibleError:   # nothing near the lowest levels either
        assert B.brute_force(g, window=3, **opts) is None, seed
        return True
    window = _oracle_window(g, res.levels, opts["mode"])
    if max(window.values()) > 8:      # too wide to search exhaustively: not counted
        return False
    oracle = B.brute_force(g, window=window, below=res.blocks_added + 1, **opts)
    assert oracle is not None and oracle.blocks_added == res.blocks_added, (seed, opts)
    if opts["mode"] == "equal":
        assert B.unbalanced_joins(res.graph) == [], seed
    assert B.full_rate(res.graph, res.levels), seed
    return True


def test_optimal_like_the_brute_force_on_200_random_small_dags_0171():
    checked = 0
    for seed, g, opts in _random_cases(215, "equal"):
        checked += _check_against_brute_force(g, opts, seed)
        if checked == 200:
            break
    assert checked == 200


def test_capacity_mode_optimal_like_the_brute_force_and_never_dearer_than_equal():
    for seed, g, opts in _random_cases(40, "capacity", first_seed=1000):
        assert _check_against_brute_force(g, opts, seed)
        try:
            equal = B.balance(g, **dict(opts, mode="equal"))
        except B.InfeasibleError:
            continue
        assert B.balance(g, **opts).blocks_added <= equal.blocks_added


def test_pieces_glue_to_the_monolithic_optimum():
    # the solver splits the formulation into biconnected blocks; one MIP over the whole
    # formulation must find the same optimum
    for seed in range(4):
        g = B.random_graph(40, seed=seed, loads=2, bytes_per_batch=(1, 2, 3, 4), max_latency=2)
        for mode in ("equal", "capacity"):
            opts = BalanceOptions(mode=mode, block_bytes=4)
            p = LevelProblem(g, opts, "blocks")
            whole = milp(p.objective_vector(), integrality=np.ones(len(p.var_lb)),
                         bounds=Bounds(p.var_lb, p.var_ub),
                         constraints=LinearConstraint(p.matrix(), p.lb, p.ub),
                         options={"mip_rel_gap": 0.0})
            res = B.balance(g, mode=mode, block_bytes=4, solver="milp")
            fixed = B.graph_blocks(g, 4) - sum(B.blocks(b.depth, b.bytes_per_batch, 4)
                                                for b in g.buffers.values())
            assert res.blocks_after == round(whole.fun) + fixed, (seed, mode)


def test_mip_and_lp_agree_where_the_cost_is_linear():
    for seed in range(20):
        g = B.random_graph(30, seed=seed, bytes_per_batch=(2, 4, 8), max_latency=2)
        lp = B.balance(g, block_bytes=2, solver="lp")
        mip = B.balance(g, block_bytes=2, solver="milp")
        assert lp.status == mip.status == "optimal"
        assert lp.blocks_after == mip.blocks_after
        assert mip.solver in ("milp", "lp (cross-check)")
        assert B.balance(g, block_bytes=2).solver == "lp"          # auto: the exact LP


def test_lp_on_rounded_costs_is_a_heuristic_never_below_the_mip():
    g = B.random_graph(30, seed=3, bytes_per_batch=(1, 2, 3, 4))
    lp = B.balance(g, block_bytes=4, solver="lp")
    mip = B.balance(g, block_bytes=4)
    assert lp.status == "heuristic" and "rounding" in lp.notes[0]
    assert mip.solver == "milp" and lp.blocks_after >= mip.blocks_after >= mip.lower_bound


# ---- load offsets ---------------------------------------------------------------------------
def test_delaying_the_second_load_by_2_balances_depths_5_and_3_at_no_cost_0177():
    res = B.balance(examples.two_loads(5, 3), delay_loads=True)
    assert res.blocks_added == 0 and res.delays == {"load2": 2} and not res.tuned
    assert res.graph.nodes["load2"].offset == 2
    assert B.unbalanced_joins(res.graph) == []


def test_without_delays_or_with_a_shared_load_buffers_are_needed_0164():
    assert B.balance(examples.two_loads(5, 3)).tuned == {"path2": 2}
    shared = B.balance(examples.two_loads(5, 3, shared=True), delay_loads=True)
    assert shared.delays == {} and shared.tuned == {"path2": 2} and shared.blocks_added == 2


# ---- budget, infeasibility, pure output -----------------------------------------------------
def test_budget_below_the_minimum_raises_with_the_shortfall_and_changes_nothing():
    g = examples.fig14()
    before = g.to_text()
    with pytest.raises(B.BudgetError, match="needs at least 2 more memory block.* 1 short") as e:
        B.balance(g, block_bytes=1, budget=1)
    assert (e.value.needed, e.value.budget, e.value.shortfall) == (2, 1, 1)
    assert isinstance(e.value, ws.ConfigError) and g.to_text() == before
    assert B.balance(g, block_bytes=1, budget=2).blocks_added == 2


def test_bad_options_raise_config_errors():
    g = examples.fig14()
    for kw, needle in [({"budget": -1}, "budget must be an integer >= 0 or None, got -1"),
                       ({"mode": "fast"}, "mode"),
                       ({"block_bytes": 0}, "block_bytes"), ({"solver": "cbc"}, "solver"),
                       ({"budget": 1.5}, "budget must be an integer")]:
        with pytest.raises(ws.ConfigError, match=needle):
            B.balance(g, **kw)
    with pytest.raises(ws.ConfigError, match="PipelineGraph"):
        B.balance("fig14")


def test_a_join_that_cannot_be_balanced_is_named():
    with pytest.raises(B.InfeasibleError, match="join 'J1'.*tune=False.*insert=False") as e:
        B.balance(examples.fig12(), tune=False, insert=False)
    assert e.value.node == "J1" and {"b1", "b2"} <= set(e.value.involved)
    with pytest.raises(B.InfeasibleError, match="join 'join'.*load2.*delay_loads=False"):
        B.balance(examples.two_loads(), tune=False, insert=False)
    fixed = PipelineGraph([Load("src"), Stage("mid"), Stage("J")],
                          [Buffer("long", "src", ("mid",), 2), Buffer("tail", "mid", ("J",), 2),
                           Buffer("short", "src", ("J",), 1, tunable=False)])
    with pytest.raises(B.InfeasibleError, match="join 'J'.*fixed buffer.*short"):
        B.balance(fixed, insert=False)
    assert B.balance(fixed).inserted[0].name == "short>J"         # inserting is allowed


def test_the_pass_changes_only_depths_insertions_and_load_times():
    g = B.random_graph(25, seed=7, loads=2, bytes_per_batch=(1, 3))
    before = g.to_text()
    res = B.balance(g, block_bytes=2, delay_loads=True)
    assert g.to_text() == before and res.original is g            # the input is untouched
    new = res.graph
    assert list(new.nodes) == list(g.nodes) and list(new.buffers) == list(g.buffers)
    for name, b in g.buffers.items():
        nb = new.buffers[name]
        assert (nb.producer, nb.consumers, nb.bytes_per_batch) == (b.producer, b.consumers,
                                                                   b.bytes_per_batch)
        assert nb.depth >= b.depth                                 # only ever grows (claim 3)
    assert all(new.nodes[v].offset >= g.nodes[v].offset for v in g.loads)
    assert res.blocks_added == sum(res.blocks.values()) - B.graph_blocks(g, 2)
    assert set(res.join_interval) == set(g.joins)


def test_an_already_balanced_graph_needs_nothing():
    res = B.balance(examples.fig11(balanced=True))
    assert res.blocks_added == 0 and not res.tuned and not res.inserted
    assert "nothing to change" in res.summary()
