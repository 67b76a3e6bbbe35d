"""The stage-level pipeline model of seed 004 and the intervals it predicts."""

import random

import pytest

import wafersim as ws
from wafersim.balance import Buffer, Load, PipelineGraph, Stage, examples

B = ws.balance


def test_fig11_unbalanced_batches_finish_at_3_5_7_9_0157():
    run = B.simulate(examples.fig11(), batches=4)
    assert run.fire_times["stage2"] == [3, 5, 7, 9]
    assert run.completion == [3, 5, 7, 9]
    assert run.stalls["buff1B"] > 0 and run.stalls["buff1A"] == 0   # back pressure [0156]


def test_fig11_balanced_batches_finish_at_3_4_5_6_0159():
    run = B.simulate(examples.fig11(balanced=True), batches=4)
    assert run.fire_times["stage2"] == [3, 4, 5, 6]
    assert all(n == 0 for n in run.stalls.values())                 # never back pressure [0158]


def test_the_pass_turns_fig11a_into_fig11b_0153_0159():
    res = B.balance(examples.fig11())
    assert res.tuned == {"buff1B": 1} and not res.inserted          # Buff 1Bal + Buff 2Bal
    assert res.graph == examples.fig11(balanced=True)
    assert B.simulate(res.graph, batches=4).completion == [3, 4, 5, 6]
    assert res.join_interval == {"stage2": 1.0}


@pytest.mark.parametrize("long", range(1, 7))
@pytest.mark.parametrize("short", range(1, 7))
def test_steady_interval_is_max_1_long_over_short_0157_0159(long, short):
    g = examples.fork_join(long, short)
    law = max(1.0, long / short)
    assert B.simulate(g, batches=120).interval == pytest.approx(law, abs=0.05)
    assert float(B.join_intervals(g)["join"]) == pytest.approx(law)
    assert B.steady_interval(g) == pytest.approx(law, abs=1e-6)
    res = B.balance(g)
    assert B.simulate(res.graph, batches=60).interval == pytest.approx(1.0)
    assert res.depths["short"] == max(long, short)                  # equal total depth [0180]


def test_simulated_interval_matches_the_marked_graph_prediction_on_random_graphs():
    for seed in range(30):
        rng = random.Random(seed)
        g = B.random_graph(rng.randint(3, 8), seed=seed, loads=rng.choice([1, 2]),
                           join_prob=0.6, fanout_prob=0.4, reach=3,
                           max_latency=rng.choice([1, 2, 3]))
        assert B.simulate(g, batches=160).interval == pytest.approx(B.steady_interval(g), abs=0.05)
        for mode in ("equal", "capacity"):
            balanced = B.balance(g, mode=mode).graph
            assert B.simulate(balanced, batches=60).interval == pytest.approx(1.0)


def test_cycle_through_two_joins_counts_in_the_steady_interval():
    # two loads crossing into two joins over long and short paths: each join alone looks
    # fine (its inputs share no ancestor), the cycle through both halves the rate
    g = B.from_text("""
        load L1
        load L2
        buffer a L1 -> A depth=1
        buffer a2 A -> J1 depth=1
        buffer s1 L2 -> J1 depth=1
        buffer b L2 -> Bs depth=1
        buffer b2 Bs -> J2 depth=1
        buffer s2 L1 -> J2 depth=1
    """)
    assert B.join_intervals(g) == {"J1": 1, "J2": 1}
    assert B.steady_interval(g) == pytest.approx(2.0)
    assert B.simulate(g, batches=80).interval == pytest.approx(2.0, abs=0.05)
    assert B.simulate(B.balance(g, mode="capacity").graph, batches=60).interval == 1.0


def test_a_load_starts_after_its_offset_0141():
    g = PipelineGraph([Load("early"), Load("late", offset=2), Stage("join")],
                      [Buffer("p1", "early", ("join",), 5), Buffer("p2", "late", ("join",), 3)])
    run = B.simulate(g, batches=3)
    assert run.fire_times["late"][0] == 3 and run.fire_times["early"][0] == 1
    assert run.fire_times["join"] == [4, 5, 6]


def test_stage_latency_delays_the_output_and_limits_a_shallow_buffer():
    g = PipelineGraph([Load("src"), Stage("slow", latency=3), Stage("sink")],
                      [Buffer("in", "src", ("slow",), 1), Buffer("out", "slow", ("sink",), 1)])
    run = B.simulate(g, batches=30)
    assert run.fire_times["sink"][0] == 5                 # src 1, slow 2, readable at 5
    assert run.interval == pytest.approx(3.0)             # one slot holds 3 steps in flight
    res = B.balance(g)
    assert res.depths["out"] == 3                         # a buffer holds what is in flight
    assert B.simulate(res.graph, batches=30).interval == pytest.approx(1.0)


def test_fan_out_buffer_frees_a_slot_only_when_every_consumer_read_it():
    g = B.from_text("""
        load src
        buffer f src -> fast,slow1 depth=1
        buffer s slow1 -> slow2 depth=1
        buffer j1 fast -> out depth=1
        buffer j2 slow2 -> out depth=1
    """)
    run = B.simulate(g, batches=40)
    assert run.peak["f"] == 1
    assert run.interval == pytest.approx(B.steady_interval(g), abs=0.05)


def test_simulate_rejects_bad_arguments():
    with pytest.raises(ws.ConfigError, match="batches"):
        B.simulate(examples.fig11(), batches=0)
    with pytest.raises(ws.ConfigError, match="PipelineGraph"):
        B.simulate("fig11")
