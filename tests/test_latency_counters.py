"""Latency counters that stay bounded (issue 25, section 2; docs/fabric.md, "Latency
counters"): a run's latencies are counted in bins that are exact below 4096 cycles and
logarithmic above, so a wavelet queued a million cycles ahead costs a few thousand bins,
not a million entries; the counts reach Python only when asked for; a latency past 2^32
cycles does not wrap."""

import dataclasses
import math

import numpy as np
import pytest

import wafersim as ws
from wafersim import _core

Counts = _core.fabric.LatencyCounts


def _bins_in(stats):
    return stats.latency._c.nbins


# ---- the bins ----------------------------------------------------------------------------


def test_bins_are_exact_below_4096_and_at_most_1_in_256_wide_above():
    assert Counts.EXACT == 4096
    for lat in range(4096):
        b = Counts.bin_of(lat)
        assert b == lat and Counts.bin_low(b) == Counts.bin_high(b) == lat
    rng = np.random.default_rng(1)
    lats = [4096, 4097, 8191, 8192, 2**32 - 1, 2**32, 2**32 + 5, 2**63, 2**64 - 1]
    lats += [int(v) for v in rng.integers(4096, 2**62, 2000, dtype=np.int64)]
    for lat in lats:
        b = Counts.bin_of(lat)
        lo, hi = Counts.bin_low(b), Counts.bin_high(b)
        assert lo <= lat <= hi
        assert (hi - lo + 1) * 256 <= lo  # width at most 1/256 of the smallest latency in it
    # bins tile the latencies without gaps, up to the largest 64-bit value
    low, high = Counts.edges(Counts.bin_of(2**64 - 1) + 1)
    assert low[0] == 0 and np.all(low[1:] == high[:-1] + 1) and int(high[-1]) == 2**64 - 1


def test_counts_add_merge_and_compare_like_a_hand_count():
    a, b = Counts(), Counts()
    for lat in (3, 3, 7, 5000):
        a.add(lat)
    b.add(7, 2)
    b.add(2**40)
    a.merge(b)
    assert a.count == 7 and a.max == 2**40 and a.sum == 3 + 3 + 7 + 5000 + 14 + 2**40
    h = ws.LatencyHistogram(a)
    got = h.bins()
    assert got["count"].tolist() == [2, 3, 1, 1]
    assert got["low"][:2].tolist() == [3, 7] and got["low"][2] <= 5000 <= got["high"][2]
    assert h.mean == pytest.approx((3 + 3 + 7 + 5000 + 14 + 2**40) / 7)
    c = Counts()
    for lat in (3, 3, 7, 7, 7, 5000, 2**40):
        c.add(lat)
    assert c == a and c != Counts()


# ---- on the fabric -----------------------------------------------------------------------


def test_latency_and_queue_delay_of_a_queued_stream_match_a_hand_count():
    """Five wavelets released together at one port, three hops to the off-ramp: the port
    lets one in per cycle, so they wait 0..4 cycles and arrive 4..8 cycles after release
    (a wavelet on the on-ramp in cycle t reaches the off-ramp h hops on in t + h + 1)."""
    w = ws.Wafer(1, 4)
    w.route(1, [(0, 0), (0, 1), (0, 2), (0, 3)])
    w.inject((0, 0), 1, data=np.arange(5))
    w.inject((0, 0), 1, data=9, cycle=50)  # released later, when the port is free: no wait
    s = w.run()
    assert s.latency_histogram.tolist() == [0, 0, 0, 0, 2, 1, 1, 1, 1]
    assert s.queue_delay.dense().tolist() == [2, 1, 1, 1, 1]
    assert s.mean_latency == (4 + 5 + 6 + 7 + 8 + 4) / 6 and s.max_latency == 8
    assert s.latency_percentile(50) == 5 and s.latency_percentile(100) == 8
    assert w.collect().latency.tolist() == [4, 5, 6, 7, 8, 4]


def test_wavelets_a_compute_element_sends_wait_nowhere():
    """A CE stamps what it puts on the on-ramp in that cycle: its wavelets count no
    queue delay, and only host ports add to RunStats.queue_delay."""
    w = ws.Wafer(1, 2)
    w.pe(0, 0).load(".data\nout: .dsd fabric_out, color=4, length=3, sw=1\n"
                    ".code\n.task main, 40\nmain: lddwds D[0], out\n mov16.t D[0], #7")
    w.route(4, [(0, 0), (0, 1)])
    w.launch("main")
    s = w.run()
    assert s.delivered == 3 and s.latency.count == 3 and s.queue_delay.count == 0
    assert s.latency_histogram.tolist() == [0, 0, 3]  # one hop: t + 2


def deep_queue_run(n=120_000, slice_cycles=20_000):
    """n wavelets queued at once at one port (the way fit queues an epoch), run in slices
    as the Trainer runs; returns the stats of every slice and what arrived."""
    w = ws.Wafer(1, 2)
    w.route(0, [(0, 0), (0, 1)])
    w.inject((0, 0), 0, data=np.arange(n) % 2**32)
    slices, arrived = [], []
    while True:
        s = w.run(max_cycles=slice_cycles)
        slices.append(s)
        arrived.append(w.collect())
        if s.quiescent:
            return slices, arrived


def test_a_deep_queue_keeps_the_counters_small_and_exact_where_promised():
    slices, arrived = deep_queue_run()
    last, lat = slices[-1], arrived[-1].latency
    assert lat.max() > 100_000  # these waited at the port for over 100,000 cycles
    assert _bins_in(last) < 4096 + 6 * 256  # the dense form had lat.max() + 1 entries
    # count, sum, mean and max are exact; against the arrivals' own per-wavelet latencies
    assert last.latency.count == len(lat) and last.latency.total == int(lat.sum())
    assert last.mean_latency == pytest.approx(lat.mean(), rel=1e-15)
    assert last.max_latency == int(lat.max())
    # a percentile is the top of the true value's bin, at most 1/256 above it
    srt = np.sort(lat)
    for q in (1, 50, 90, 99.9, 100):
        true = int(srt[math.ceil(q / 100 * len(srt)) - 1])
        got = last.latency_percentile(q)
        assert true <= got <= true + true // 256 and got <= last.max_latency
    # the queue delay: each wavelet waited its position in the queue, one per cycle
    waits = sum(s.queue_delay.total for s in slices)
    assert waits == sum(range(120_000))
    assert sum(s.queue_delay.count for s in slices) == 120_000


def test_the_dense_histogram_of_long_latencies_raises_a_clear_error():
    slices, _ = deep_queue_run(n=30_000, slice_cycles=40_000)
    s = slices[-1]
    with pytest.raises(ws.ConfigError, match=r"below 4096 cycles.*longest is \d+.*bins\(\)"):
        s.latency_histogram
    with pytest.raises(ws.ConfigError, match="0..100"):
        s.latency_percentile(101)
    with pytest.raises(ws.ConfigError, match="0..100"):
        s.latency.percentile("50")


def test_run_stats_do_not_carry_the_histogram_unless_asked():
    """RunStats holds the core's counts object, not an array: nothing the size of the
    latencies is copied into Python per run. The arrays come when a method asks."""
    slices, _ = deep_queue_run(n=60_000)
    s = slices[-1]
    assert type(s.latency) is ws.LatencyHistogram and type(s.latency._c) is Counts
    assert type(s.queue_delay._c) is Counts
    for f in dataclasses.fields(s):
        v = getattr(s, f.name)
        assert not isinstance(v, np.ndarray) or v.size <= 16, f.name  # the hop histogram: 2
    bins = s.latency.bins()
    assert isinstance(bins["count"], np.ndarray) and bins["count"].sum() == s.latency.count


# ---- past 2^32 cycles --------------------------------------------------------------------


def test_latencies_past_2_32_cycles_do_not_wrap():
    """Without running 2^32 cycles: the counters take 64-bit latencies, and the stamp rule
    a host port applies (fabric/wavelet.hpp) keeps a latency from wrapping. A wavelet
    carries 32 bits of stamp, so a wait longer than 2^31 cycles counts as 2^31 in the
    latency (RunStats.queue_delay has it exactly)."""
    c = Counts()
    c.add(2**32 + 5)
    c.add(2**64 - 1, 3)
    assert c.max == 2**64 - 1 and c.count == 4
    assert c.sum == 2**32 + 5 + 3 * (2**64 - 1)  # 128-bit sum
    b = Counts.bin_of(2**32 + 5)
    assert 2**32 <= Counts.bin_low(b) <= 2**32 + 5 <= Counts.bin_high(b)
    assert ws.LatencyHistogram(c).percentile(20) >= 2**32

    stamp, since = _core.fabric.entry_stamp, _core.fabric.latency_since
    cap = _core.fabric.MAX_STAMPED_WAIT
    assert cap == 2**31
    # released 2^32 + 5 cycles before it enters: the latency 3 cycles later counts the
    # wait as 2^31, not as 5 (a wrap would give 8)
    assert since(stamp(0, 2**32 + 5), 2**32 + 8) == 2**31 + 3
    # waits up to the cap are exact, also when the cycles cross 2^32 or 2^33
    assert since(stamp(2**32 - 10, 2**32 + 2), 2**32 + 7) == 17
    assert since(stamp(5, 5 + 2**31), 5 + 2**31 + 9) == 2**31 + 9
    assert since(stamp(2**33 + 1, 2**33 + 1), 2**33 + 1 + 2**31 + 2**30) == 2**31 + 2**30
