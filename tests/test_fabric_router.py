"""Router semantics of seed 000 (FIG. 6, [0299]-[0335]): queues, stall, schedulers, multicast."""

import numpy as np
import pytest

import wafersim as ws


def chain(w, color, row, c0, c1):
    """Routes color along row `row` from column c0 to c1 (ramp to ramp)."""
    step = 1 if c1 >= c0 else -1
    w.route(color, path=[(row, c) for c in range(c0, c1 + step, step)])


def test_wavelet_sparse_and_dense_forms_cross_the_fabric_intact_0422_0430():
    w = ws.Wafer(2, 4)
    chain(w, 3, 0, 0, 3)
    sparse = dict(data=0xBEEF, index=0x1234, ctrl=True)           # index + 16-bit datum
    dense = dict(data=0x3F80_0000, index=0, ctrl=False)            # one fp32 (1.0)
    two_halves = dict(data=(0x3C00 << 16) | 0x4000, index=0, ctrl=False)  # fp16 1.0 and 2.0
    for f in (sparse, dense, two_halves):
        w.inject((0, 0), 3, **f)
    w.run()
    a = w.collect((0, 3))
    assert list(a.data) == [0xBEEF, 0x3F80_0000, (0x3C00 << 16) | 0x4000]
    assert list(a.index) == [0x1234, 0, 0]
    assert list(a.ctrl) == [True, False, False]
    assert set(a.color) == {3}
    # the low 6 index bits are what a control wavelet's task entry uses [0424]
    assert a.index[0] & 0x3F == 0x34


def test_router_queue_holds_two_and_stalls_its_source_when_full_0317_0333():
    w = ws.Wafer(1, 3, watchdog=10**6)
    chain(w, 2, 0, 0, 2)
    w.set_sink((0, 2), capacity=1)      # the sink takes one wavelet, then stalls [0330]
    w.inject((0, 0), 2, data=np.arange(10))
    w.run(60)
    for c in range(3):
        assert w.router(0, c).occupancy(2) == 2       # two entries per color [0317]
        assert w.router(0, c).stalled(2)              # more than depth-1 = 1 queued [0333]
    assert w.pending_injections == 10 - 1 - 6
    assert list(w.collect((0, 2)).data) == [0]
    assert w.queued == 6


def test_queue_depth_is_configurable_and_threshold_follows_it_0317_0333():
    w = ws.Wafer(1, 3, queue_depth=3, watchdog=10**6)
    chain(w, 2, 0, 0, 2)
    w.set_sink((0, 2), capacity=1)
    w.inject((0, 0), 2, data=np.arange(20))
    w.run(80)
    assert [w.router(0, c).occupancy(2) for c in range(3)] == [3, 3, 3]
    assert w.pending_injections == 20 - 1 - 9


def test_stall_check_counts_this_cycles_dequeue_so_streams_run_at_full_rate_0333():
    # If a full-looking queue stalled before counting its own departure, a stream would
    # lose cycles; with [0333]'s rule it moves one wavelet per cycle on every hop.
    w = ws.Wafer(1, 5)
    chain(w, 1, 0, 0, 4)
    w.inject((0, 0), 1, data=np.arange(50))
    w.run()
    a = w.collect((0, 4))
    assert list(a.data) == list(range(50))
    assert np.all(np.diff(a.arrived) == 1)
    assert a.arrived[0] == 5                            # 4 hops + 1: one cycle per router


def test_stalled_color_queues_back_hop_by_hop_while_other_colors_flow_0299_0300_0303():
    w = ws.Wafer(1, 4, watchdog=10**6)
    chain(w, 2, 0, 0, 3)                # color 2 ends at (0,3), whose sink never drains
    chain(w, 4, 0, 0, 3)                # color 4 shares every link and the same off-ramp
    w.set_sink((0, 3), capacity=1)
    w.inject((0, 0), 2, data=np.arange(10))
    w.inject((0, 0), 4, data=np.arange(100, 110))
    w.run(200)
    # color 2 is a queue distributed over the fabric: full at every hop [0300]
    assert [w.router(0, c).occupancy(2) for c in range(4)] == [2, 2, 2, 2]
    assert all(w.router(0, c).stalled(2) for c in range(4))
    # ... while color 4 keeps flowing on the shared links [0303]. Its sink also holds one
    # wavelet per color, so only the first color-4 wavelet fits; the rest back up too.
    w2 = ws.Wafer(1, 4, watchdog=10**6)
    chain(w2, 2, 0, 0, 3)
    w2.route(4, path=[(0, 0), (0, 1), (0, 2)])      # same links up to (0,2), own sink
    w2.set_sink((0, 3), capacity=1)
    w2.inject((0, 0), 2, data=np.arange(10))
    w2.inject((0, 0), 4, data=np.arange(100, 110))
    w2.run(200)
    got = w2.collect((0, 2))
    assert list(got.data) == list(range(100, 110))
    assert [w2.router(0, c).occupancy(2) for c in range(4)] == [2, 2, 2, 2]


def test_slow_sink_sets_the_rate_of_its_color_only_0300_0303():
    w = ws.Wafer(1, 4)
    chain(w, 2, 0, 0, 3)
    w.route(4, path=[(0, 0), (0, 1), (0, 2)])
    w.set_sink((0, 3), capacity=2, drain_period=4)   # takes one wavelet per 4 cycles
    w.inject((0, 0), 2, data=np.arange(40))
    w.inject((0, 0), 4, data=np.arange(40))
    w.run()
    slow, fast = w.collect((0, 3)), w.collect((0, 2))
    assert len(slow) == 40 and len(fast) == 40
    assert np.median(np.diff(slow.arrived)) == 4      # backpressure paces color 2 ...
    assert fast.arrived[-1] < slow.arrived[20]        # ... color 4 is not held back


def test_multicast_copies_to_every_dest_before_the_next_wavelet_moves_0301():
    w = ws.Wafer(2, 3, watchdog=10**6)
    w.route_tree(1, (0, 1), [(0, 2), (1, 1)])        # E branch and N branch
    w.set_sink((1, 1), capacity=1)                    # the N branch blocks after 3 wavelets
    w.inject((0, 1), 1, data=np.arange(5))
    w.run(100)
    # 3 went north (1 in the sink, 2 queued at (1,1)); #3 went east but not north, so #4
    # cannot move: the east branch gets exactly one more than the north one.
    east = w.collect((0, 2))
    assert list(east.data) == [0, 1, 2, 3]
    assert w.router(0, 1).occupancy(1) == 2
    assert w.router(1, 1).occupancy(1) == 2
    north_first = w.collect((1, 1))                   # frees the sink; all flow again
    w.set_sink((1, 1), capacity=None)
    w.run()
    north = w.collect((1, 1))
    assert list(north_first.data) + list(north.data) == [0, 1, 2, 3, 4]
    assert list(w.collect((0, 2)).data) == [4]


def test_schedulers_are_independent_so_copies_leave_in_different_cycles_0319():
    w = ws.Wafer(2, 3, watchdog=10**6)
    w.route_tree(1, (0, 1), [(0, 2), (1, 1)])
    w.set_sink((1, 1), capacity=1)
    w.inject((0, 1), 1, data=np.arange(5))
    w.run(100)
    east = w.collect((0, 2))
    w.collect((1, 1))
    w.set_sink((1, 1), capacity=None)
    w.run()
    north = w.collect((1, 1))
    # wavelet 3's east copy left ~100 cycles before its north copy
    assert north.arrived[north.data == 3][0] - east.arrived[east.data == 3][0] > 50


def test_one_wavelet_per_output_port_per_cycle_0315():
    w = ws.Wafer(2, 4)
    w.route(1, path=[(0, 0), (0, 1), (0, 2), (0, 3)])
    w.route(2, path=[(1, 1), (0, 1), (0, 2), (0, 3)])    # merges at (0,1) on another color
    w.inject((0, 0), 1, data=np.arange(20))
    w.inject((1, 1), 2, data=np.arange(20))
    w.run()
    a = w.collect((0, 3))
    assert len(a) == 40
    _, per_cycle = np.unique(a.arrived, return_counts=True)
    assert per_cycle.max() == 1                          # one wavelet per port per cycle
    assert np.all(np.diff(a.arrived) == 1)               # and the shared link never idles
    link = w.counters().link_counts[0, 1, ws.layout.DIR_INDEX["E"]]
    assert link == 40


def three_colors_into_one_link(scheduler, colors=(1, 2, 3), n=12):
    """Colors arrive at (0,1) from W, N and its own ramp, and all leave east to (0,2)."""
    w = ws.Wafer(2, 3, scheduler=scheduler)
    a, b, c = colors
    w.route(a, path=[(0, 0), (0, 1), (0, 2)])
    w.route(b, path=[(1, 1), (0, 1), (0, 2)])
    w.route(c, path=[(0, 1), (0, 2)])
    w.inject((0, 0), a, data=np.arange(n))
    w.inject((1, 1), b, data=np.arange(n))
    w.inject((0, 1), c, data=np.arange(n))
    w.run()
    return w.collect((0, 2))


def test_round_robin_cycles_through_all_ready_colors_before_repeating_0320():
    got = three_colors_into_one_link("round_robin")
    colors = list(got.color)
    # once all three are ready, every window of three consecutive picks has each color
    middle = colors[3:-3]
    for i in range(len(middle) - 2):
        assert sorted(middle[i:i + 3]) == [1, 2, 3]


def test_priority_scheduler_serves_the_high_color_set_first_0320():
    # colors 0..7 above 8..: color 3 is high priority, 9 and 10 are low [0320]
    got = three_colors_into_one_link("priority", colors=(3, 9, 10))
    colors = list(got.color)
    last_high = max(i for i, c in enumerate(colors) if c == 3)
    lows_before = [c for c in colors[:last_high] if c != 3]
    # only the wavelet sent before color 3 reached (0,1) goes ahead of it
    assert len(lows_before) == 1
    rr = three_colors_into_one_link("round_robin", colors=(3, 9, 10))
    assert max(i for i, c in enumerate(rr.color) if c == 3) > last_high


def test_priority_split_is_configurable_0320():
    # With the split at 10, colors 3 and 9 are both high priority: they share the link
    # round-robin instead of 3 going first.
    w = ws.Wafer(2, 3, scheduler="priority", priority_split=10)
    w.route(3, path=[(0, 0), (0, 1), (0, 2)])
    w.route(9, path=[(1, 1), (0, 1), (0, 2)])
    w.inject((0, 0), 3, data=np.arange(12))
    w.inject((1, 1), 9, data=np.arange(12))
    w.run()
    colors = list(w.collect((0, 2)).color)
    assert colors[2:10] == [3, 9] * 4 or colors[2:10] == [9, 3] * 4


def test_dest_and_src_masks_are_static_per_color_and_multicast_to_ramp_and_link_0318_0322():
    w = ws.Wafer(1, 3)
    w.router(0, 0).set_route(6, rx=["RAMP"], tx=["E"])
    w.router(0, 1).set_route(6, rx=["W"], tx=["E", "RAMP"])   # deliver here and forward
    w.router(0, 2).set_route(6, rx=["W"], tx=["RAMP"])
    assert w.router(0, 1).route(6) == (["W"], ["E", "RAMP"])
    assert w.router(0, 1).route(7) == ([], [])
    w.inject((0, 0), 6, data=np.arange(4))
    w.run()
    assert list(w.collect((0, 1)).data) == [0, 1, 2, 3]
    assert list(w.collect((0, 2)).data) == [0, 1, 2, 3]


def test_stall_reaches_every_source_direction_including_the_ramp_0322_0334_0335():
    # Like [0335]'s color 7 with sources {local CE, X+}: (0,1) takes color 7 from its ramp
    # and from the east; once its queue is full both sources are stalled.
    w = ws.Wafer(1, 3, watchdog=10**6)
    w.router(0, 1).set_route(7, rx=["RAMP", "E"], tx=["W"])
    w.router(0, 0).set_route(7, rx=["E"], tx=["RAMP"])
    w.router(0, 2).set_route(7, rx=["RAMP"], tx=["W"])
    w.set_sink((0, 0), capacity=1)
    w.inject((0, 1), 7, data=[1, 2, 3], cycle=[0, 1, 2])     # fills (0,0) and its sink
    w.inject((0, 2), 7, data=[10, 11, 12, 13, 14], cycle=20)  # then the east source
    w.inject((0, 1), 7, data=[4], cycle=40)                  # the ramp again, now stalled
    w.run(100)
    assert w.router(0, 1).occupancy(7) == 2 and w.router(0, 1).stalled(7)
    assert w.router(0, 2).occupancy(7) == 2                  # the east neighbour held back
    assert w.pending_injections == 2                         # one at each source port
    assert w.queued == 6


def test_two_wavelets_of_one_color_in_one_cycle_raise_route_error_0302():
    w = ws.Wafer(2, 3)
    w.route(5, path=[(0, 0), (0, 1), (1, 1)])
    with pytest.raises(ws.RouteError, match=r"two active sources.*\[0302\]"):
        w.route(5, path=[(0, 2), (0, 1), (1, 1)])            # statically refused ...
    w.route(5, path=[(0, 2), (0, 1), (1, 1)], allow_shared_source=True)  # ... unless allowed
    assert w.router(0, 1).route(5) == (["E", "W"], ["N"])
    w.inject((0, 0), 5, data=1)
    w.inject((0, 2), 5, data=2)                              # both arrive at (0,1) in cycle 1
    with pytest.raises(ws.RouteError) as err:
        w.run()
    msg = str(err.value)
    assert "color 5" in msg and "(0, 1)" in msg and "from E and from W" in msg
    with pytest.raises(ws.WaferError, match="mid-cycle"):
        w.run()


def test_several_configured_sources_work_when_one_is_active_at_a_time_0302():
    w = ws.Wafer(2, 3)
    w.route(5, path=[(0, 0), (0, 1), (1, 1)])
    w.route(5, path=[(0, 2), (0, 1), (1, 1)], allow_shared_source=True)
    w.inject((0, 0), 5, data=np.arange(5))
    w.inject((0, 2), 5, data=np.arange(10, 15), cycle=50)    # after the first source is done
    w.run()
    assert list(w.collect((1, 1)).data) == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]
