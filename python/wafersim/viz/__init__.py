"""Plots (matplotlib). Functions return a ``matplotlib.figure.Figure`` (or draw into the
``ax`` you pass). Without pyplot imported they build bare figures that need no display
(scripts, Agg); with pyplot imported (notebooks) they make pyplot figures, which inline
backends show. Importing this module imports matplotlib, not pyplot.
"""

from .fabric_plots import link_heatmap, occupancy_heatmap
from .noc_plots import latency_vs_load, zero_load_cuts, zero_load_sensitivity
from .training_plots import (plot_busy, plot_history, plot_link_traffic, plot_placement,
                             plot_stage_timeline)

__all__ = ["link_heatmap", "occupancy_heatmap", "latency_vs_load", "zero_load_cuts",
           "zero_load_sensitivity", "plot_placement", "plot_busy", "plot_link_traffic",
           "plot_history", "plot_stage_timeline"]
