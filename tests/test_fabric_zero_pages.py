"""A fabric's output registers, sent counts and stall words start as untouched zero pages
(src/wafersim/zeroed_pages.hpp): an idle region of a large fabric, or the rows another
MPI rank steps, take no memory, and a run reads zeros there exactly as from a filled
array."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import wafersim as ws


@pytest.mark.nosanitize  # the sanitizer's shadow memory makes resident sizes meaningless
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads Linux's VmRSS")
def test_a_large_fabric_with_one_busy_row_holds_under_256_bytes_per_router():
    # In a subprocess: the measurement sees only this fabric. (Filled arrays took about
    # 420 bytes per router: 176 of output registers, 88 of sent counts, 8 of stall words.)
    script = textwrap.dedent("""
        import numpy as np, wafersim as ws
        def rss():
            for line in open("/proc/self/status"):
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        before = rss()
        w = ws.Wafer(1024, 1024)
        w.route(0, path=[(0, c) for c in range(1024)])
        w.inject((0, 0), 0, data=np.arange(1000, dtype=np.uint32))
        s = w.run()
        a = w.collect()
        assert list(a.data) == list(range(1000)) and set(a.col.tolist()) == {1023}
        print(rss() - before, s.cycles)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    grown, cycles = map(int, out.stdout.split()[-2:])
    assert cycles > 1000
    assert grown < 1024 * 1024 * 256, f"{grown / 2**20:.0f} bytes per router"


def test_link_counts_of_untouched_rows_read_zero_and_the_route_counts_every_wavelet():
    """The sent counts (FabricCounters.link_counts) of a 64 x 64 fabric with one route
    along row 5: 100 wavelets east from each of its first 63 routers, 100 to the last
    one's ramp, nothing anywhere else (pages never written read as zeros)."""
    w = ws.Wafer(64, 64)
    w.route(0, path=[(5, c) for c in range(64)])
    w.inject((5, 0), 0, data=np.arange(100, dtype=np.uint32))
    w.run()
    links = w.counters().link_counts
    assert links.shape == (64, 64, 11)
    want = np.zeros_like(links)
    want[5, :63, 0] = 100  # east
    want[5, 63, 10] = 100  # the ramp
    assert np.array_equal(links, want)
    assert list(w.collect().data) == list(range(100))
