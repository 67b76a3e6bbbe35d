"""A figure and axes for a plot (Agg-safe)."""

from __future__ import annotations

import sys

from matplotlib.figure import Figure


def axes(ax=None, figsize=(6.0, 4.0)):
    """Returns (figure, axes): the given axes and its figure, or a new single-axes figure.

    When the caller uses pyplot (a notebook usually does), the figure is a pyplot figure so
    inline backends show it; otherwise it is a bare Figure that needs no GUI at all.
    """
    if ax is not None:
        return ax.figure, ax
    if "matplotlib.pyplot" in sys.modules:
        plt = sys.modules["matplotlib.pyplot"]
        fig = plt.figure(figsize=figsize, layout="constrained")
    else:
        fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()
