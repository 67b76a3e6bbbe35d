"""Buffer-depth balancing of joining dataflow paths (seed 004), and a stage-level pipeline
model to check it. Pure Python over scipy's HiGHS; no dependency on the wafer.

* IR (:mod:`.graph`): loads, stages, stage buffers with depth in batches and bytes per
  batch, fan-out buffers, joins, inserted buffers; built by hand, :func:`from_text`,
  :func:`from_dict` or :func:`from_stages` (what a mapped model provides);
* the pass (:func:`balance`): tune depths, insert buffers on consumer edges, delay loads,
  with the fewest memory blocks, as a MIP (levels formulation) or an LP (linear cost);
* references: :func:`brute_force` (the oracle) and :func:`greedy` (FIG. 12's foil);
* the pipeline model (:func:`simulate`) and predicted intervals (:func:`steady_interval`,
  :func:`join_intervals`), :func:`unbalanced_joins` (the seed's path-depth test);
* a mapped model's graph (:func:`model_graph`, ``Plan.pipeline_graph()``), the skip depths
  ``ws.map`` uses by default (:func:`balanced_skip_depths`) and the wafer's predicted
  cycles per sample (:func:`predicted_cycles`).

See docs/balance.md.
"""

from . import examples
from .brute_force import BruteForce, brute_force
from .builders import from_dict, from_stages, from_text, to_text
from .errors import BudgetError, InfeasibleError
from .graph import Buffer, InsertedBuffer, Load, PipelineGraph, Stage
from .greedy import GreedyResult, greedy
from .interval import full_rate, join_intervals, steady_interval
from .mapped import balanced_skip_depths, model_graph, predicted_cycles
from .memory import blocks, graph_blocks
from .options import MODES, SOLVERS, BalanceOptions
from .paths import path_totals, unbalanced_joins
from .pipeline import PipelineRun, simulate
from .random_graphs import random_graph
from .result import BalanceResult
from .solve import balance

__all__ = [
    "PipelineGraph", "Load", "Stage", "Buffer", "InsertedBuffer",
    "from_stages", "from_dict", "from_text", "to_text",
    "balance", "BalanceResult", "BalanceOptions", "MODES", "SOLVERS",
    "InfeasibleError", "BudgetError",
    "brute_force", "BruteForce", "greedy", "GreedyResult",
    "simulate", "PipelineRun", "steady_interval", "join_intervals", "full_rate",
    "path_totals", "unbalanced_joins", "blocks", "graph_blocks",
    "random_graph", "examples", "model_graph", "balanced_skip_depths", "predicted_cycles",
]
