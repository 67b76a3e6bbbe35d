"""A long run fed in slices keeps its memory bounded, in packet mode and in colors mode,
measured as the C heap in use (glibc's mallinfo2) in a fresh interpreter so that nothing
else allocates in between.

* Issue 14, item 8: a host port's injection FIFO holds the wavelets still waiting, not
  every wavelet that ever passed through it. Before the fix a FIFO that never ran dry (the
  host pushed the next slice while a wavelet of the last one was still waiting) kept all it
  had sent: 24 bytes per wavelet, for the whole run.
* Issue 25, section 5: in colors mode, with a compute element in the stream, nothing grows
  either; what grew was the dense latency histogram (8 bytes per cycle of the longest
  latency, in the simulator and again in each run's statistics) once the host queued far
  ahead, as ``fit`` queues an epoch. Latencies are now counted in bounded bins
  (docs/fabric.md, "Latency counters").
"""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import wafersim as ws

HEAP = textwrap.dedent("""
    import ctypes, gc
    import numpy as np
    import wafersim as ws

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks "
                    "keepcost".split()]

    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2

    def heap_in_use():
        gc.collect()
        info = libc.mallinfo2()
        return info.uordblks + info.hblkhd
""")

SOAK = HEAP + textwrap.dedent("""
    SLICE, SLICES = {slice_cycles}, {slices}
    w = ws.Wafer(1, 2, mode="packets")
    in_use = []
    for k in range(SLICES):
        # One wavelet per cycle of the slice, and one released after it: the FIFO of the
        # port at (0, 0) is never empty when the next slice is pushed.
        start = w.cycle
        release = np.append(np.arange(start, start + SLICE), start + SLICE + 3)
        w.inject((0, 0), 0, data=np.arange(len(release)), dest=(0, 1), cycle=release)
        stats = w.run(SLICE)
        assert stats.cycles == SLICE
        assert len(w.collect().data) >= SLICE - 4
        if k in (SLICES // 4, SLICES - 1):
            in_use.append(heap_in_use())
    print(in_use[1] - in_use[0])
""")


# Colors mode: the host port on PE (0, 0)'s ramp sends color 5 to the compute element of
# PE (0, 1), which sends each wavelet on, as color 9, to the host port on PE (0, 2)'s ramp.
# Steady: one wavelet every 8 cycles (the CE needs 5 per wavelet), and one released after
# the slice, so the FIFO is never empty when the next slice is pushed. Deep: the whole
# run's wavelets queued before the first cycle, as fit queues an epoch: the last ones wait
# for most of the run.
SOAK_COLORS = HEAP + textwrap.dedent("""
    SLICE, SLICES, DEEP = {slice_cycles}, {slices}, {deep}
    w = ws.Wafer(1, 3)
    w.pe(0, 1).load(".data\\nout: .dsd fabric_out, color=9, length=1, sw=1\\n"
                    ".code\\n.task t, 5\\nt: lddwds D[0], out\\n mov16.t D[0], r2")
    w.route(5, [(0, 0), (0, 1)])
    w.route(9, [(0, 1), (0, 2)])
    if DEEP:
        w.inject((0, 0), 5, data=np.arange(SLICE * SLICES // 5))
    in_use = []
    for k in range(SLICES):
        if not DEEP:
            start = w.cycle
            release = np.append(np.arange(start, start + SLICE, 8), start + SLICE + 3)
            w.inject((0, 0), 5, data=np.arange(len(release)), cycle=release)
        stats = w.run(SLICE)
        assert stats.cycles == SLICE
        got = w.collect()
        assert len(got.data) >= SLICE // (5 if DEEP else 8) - 2, len(got.data)
        assert np.all((got.data[1:] - got.data[:-1]) % 2**16 == 1) or not DEEP  # in order
        if k in (SLICES // 4, SLICES - 1):
            in_use.append(heap_in_use())
    print(stats.max_latency, in_use[1] - in_use[0])
""")


def soak(code):
    """(printed numbers) of a soak script run in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    if "mallinfo2" in out.stderr and "undefined symbol" in out.stderr:
        pytest.skip("no mallinfo2 (glibc < 2.33)")
    assert out.returncode == 0, out.stderr
    return [int(v) for v in out.stdout.split()]


@pytest.mark.nosanitize  # the sanitizer's allocator is not glibc's: no mallinfo2 figures
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2")
def test_a_run_fed_in_slices_keeps_host_port_memory_bounded():
    slice_cycles, slices = 10_000, 80
    growth = soak(SOAK.format(slice_cycles=slice_cycles, slices=slices))[-1]
    # What the old FIFO kept over the measured slices: 24 bytes per wavelet sent.
    kept_before = 24 * slice_cycles * (slices - 1 - slices // 4)
    assert kept_before > 10_000_000
    assert growth < 1_000_000, f"the heap grew by {growth} bytes over {kept_before // 24} wavelets"


@pytest.mark.nosanitize
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2")
def test_a_colors_mode_run_through_a_compute_element_keeps_its_memory_flat():
    """1 M cycles in slices, 125,000 wavelets through a CE: the heap in use is the same
    from the first quarter to the end (no leak in colors mode)."""
    latency, growth = soak(SOAK_COLORS.format(slice_cycles=10_000, slices=100, deep=False))
    assert latency < 100  # the steady stream never backs up
    assert abs(growth) < 200_000, f"the heap changed by {growth} bytes"


@pytest.mark.nosanitize
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2")
def test_a_colors_mode_run_queued_far_ahead_keeps_its_memory_flat():
    """200,000 wavelets queued before the first cycle and taken by a CE one per 5 cycles:
    the last slice's wavelets waited about a million cycles. The dense latency histogram
    grew by 8 bytes per cycle of that wait twice over (the simulator's and the run's
    statistics): 12 MB between the measured slices; bounded bins do not grow."""
    latency, growth = soak(SOAK_COLORS.format(slice_cycles=10_000, slices=100, deep=True))
    assert latency > 900_000
    dense_before = 2 * 8 * (latency - latency // 4)
    assert dense_before > 10_000_000
    assert growth < 500_000, f"the heap grew by {growth} bytes"


def test_a_fifo_fed_before_it_runs_dry_delivers_every_wavelet_once_in_order():
    # The FIFO cuts off its left part while it is never empty: nothing may be lost,
    # repeated or reordered by that.
    w = ws.Wafer(1, 2, mode="packets")
    sent, released = [], []
    for k in range(6):
        start = w.cycle
        release = np.append(np.arange(start, start + 3000), start + 3000 + 2)
        data = np.arange(len(release)) + 10_000 * k
        sent.append(data)
        released.append(release)
        w.inject((0, 0), 0, data=data, dest=(0, 1), cycle=release)
        w.run(3000)
    w.run()
    got = w.collect()
    in_release_order = np.argsort(np.concatenate(released), kind="stable")
    np.testing.assert_array_equal(got.data, np.concatenate(sent)[in_release_order])
    assert np.all(np.diff(got.arrived) > 0)
