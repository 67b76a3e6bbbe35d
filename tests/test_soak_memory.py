"""A long run fed in slices keeps its memory bounded (issue 14, item 8): a host port's
injection FIFO holds the wavelets still waiting, not every wavelet that ever passed through
it. Before the fix a FIFO that never ran dry (the host pushed the next slice while a
wavelet of the last one was still waiting) kept all it had sent: 24 bytes per wavelet,
for the whole run. Measured as the C heap in use (glibc's mallinfo2), in a fresh
interpreter so that nothing else allocates in between."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import wafersim as ws

SOAK = textwrap.dedent("""
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


@pytest.mark.nosanitize  # the sanitizer's allocator is not glibc's: no mallinfo2 figures
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2")
def test_a_run_fed_in_slices_keeps_host_port_memory_bounded():
    slice_cycles, slices = 10_000, 80
    code = SOAK.format(slice_cycles=slice_cycles, slices=slices)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=600)
    if "mallinfo2" in out.stderr and "undefined symbol" in out.stderr:
        pytest.skip("no mallinfo2 (glibc < 2.33)")
    assert out.returncode == 0, out.stderr
    growth = int(out.stdout.split()[-1])
    # What the old FIFO kept over the measured slices: 24 bytes per wavelet sent.
    kept_before = 24 * slice_cycles * (slices - 1 - slices // 4)
    assert kept_before > 10_000_000
    assert growth < 1_000_000, f"the heap grew by {growth} bytes over {kept_before // 24} wavelets"


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
