"""Heatmaps of fabric counters: traffic per router and link, queue occupancy.

Row 0 is drawn at the bottom (``origin="lower"``): north is +row in wafersim, as in the
source documents.
"""

from __future__ import annotations

import numpy as np

from ..layout import DIR_INDEX, DIRECTIONS
from ..stats import FabricCounters
from ._axes import axes


def link_heatmap(counters: FabricCounters, direction: str | None = None, *, color: int | None = None,
                 per_cycle: bool = True, ax=None, title: str | None = None):
    """Wavelets each router sent: on one output ``direction`` (e.g. ``"E"``) or on all
    router-to-router links; of one ``color`` or all; per cycle (utilization) or in total."""
    counts = counters.link_counts if color is None else counters.link_color_counts(color)
    if direction is None:
        data = counts[:, :, :DIR_INDEX["RAMP"]].sum(axis=2).astype(float)
        what = "all links"
    else:
        data = counts[:, :, DIRECTIONS.index(direction.upper())].astype(float)
        what = f"{direction.upper()} output"
    if per_cycle:
        data = data / max(counters.cycles, 1)
    fig, ax = axes(ax)
    im = ax.imshow(data, origin="lower", cmap="viridis", interpolation="nearest")
    fig.colorbar(im, ax=ax, label="wavelets per cycle" if per_cycle else "wavelets")
    ax.set_xlabel("column (east ->)")
    ax.set_ylabel("row (north ->)")
    sel = "" if color is None else f", color {color}"
    ax.set_title(title or f"Traffic on {what}{sel}")
    return fig


def occupancy_heatmap(counters: FabricCounters, *, maximum: bool = False, ax=None,
                      title: str | None = None):
    """Mean (or maximum) wavelets queued at each router."""
    data = counters.occupancy_max if maximum else counters.occupancy_mean
    fig, ax = axes(ax)
    im = ax.imshow(np.asarray(data, float), origin="lower", cmap="magma", interpolation="nearest")
    fig.colorbar(im, ax=ax, label="wavelets queued")
    ax.set_xlabel("column (east ->)")
    ax.set_ylabel("row (north ->)")
    ax.set_title(title or ("Most wavelets queued" if maximum else "Mean wavelets queued"))
    return fig
