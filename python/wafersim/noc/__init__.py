"""NoC studies: traffic patterns, the zero-load model of seed 003, cycle-level measurements.

* :mod:`.traffic` - uniform, transpose, bit-complement, hotspot, neighbour (and corner);
* :mod:`.zero_load` - the patent's delay model, reproducing its "about 20% / 40%" claims;
* :mod:`.measure` - the same comparisons on the cycle-level fabric, and load sweeps
  (latency against injection rate, saturation throughput), labelled as our extension;
* :mod:`.flows` - carrying point-to-point flows on the static color-routed fabric.

See docs/noc.md.
"""

from .flows import assign_colors, route_flows
from .measure import LoadCurve, LoadPoint, MeasuredZeroLoad, load_sweep, measure_zero_load
from .traffic import PATTERNS, Traffic, bernoulli, destinations, pairs
from .zero_load import (Comparison, ZeroLoad, compare, fabric_cycles, hop_split, patent_table,
                        sensitivity, zero_load)

__all__ = [
    "PATTERNS", "Traffic", "bernoulli", "destinations", "pairs",
    "ZeroLoad", "Comparison", "zero_load", "compare", "fabric_cycles", "hop_split",
    "patent_table", "sensitivity",
    "MeasuredZeroLoad", "LoadPoint", "LoadCurve", "measure_zero_load", "load_sweep",
    "assign_colors", "route_flows",
]
