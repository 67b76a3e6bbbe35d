"""Plots of a mapped network and its training: where the layers and routes are, which PEs
were busy in each pass, the traffic on the links, the loss and accuracy per epoch, and
when each layer took each sample.

Row 0 is drawn at the bottom (``origin="lower"``), as in the other wafersim plots.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

from ..errors import ConfigError
from ..mapping.colors import ROLE_NAMES
from ..layout import STEP
from ._axes import axes
from .fabric_plots import link_heatmap

__all__ = ["plot_placement", "plot_busy", "plot_link_traffic", "plot_history",
           "plot_stage_timeline"]

# nine distinct tab10 colors (gray is left for the grid and the ports); related roles get
# related hues: blue/cyan, orange/brown, red/pink, purple/olive
_ROLE_SHADE = {"A0": "C0", "A1": "C9", "P0": "C1", "P1": "C5", "D": "C2", "H0": "C3",
               "H1": "C6", "J0": "C4", "J1": "C8", "S": "black", "B": "darkgoldenrod"}
_LINKS = ("E", "W", "N", "S")


def _xy(point) -> np.ndarray:
    """(x, y) of a wafer (row, col): x is the column, y the row."""
    return np.array([point[1], point[0]], dtype=float)


def _hops(plan, role: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(tail, head) router centers of every hop of ``role``'s color, edge ports included."""
    rows, cols = plan.wafer.rows, plan.wafer.cols
    hops = []
    for p, (rx, tx) in plan.routes.table.get(plan.colors[role], {}).items():
        here = _xy(p)
        for d in _LINKS:
            there = here + _xy(STEP[d])
            if d in tx:
                hops.append((here, there))
            # a hop in from an edge port: no router outside sends it, so add it here
            if d in rx and not (0 <= there[1] < rows and 0 <= there[0] < cols):
                hops.append((there, here))
    return hops


def _draw_routes(ax, plan, roles: list[str]) -> None:
    """One short arrow per hop; the roles sharing a link are drawn side by side."""
    by_link = defaultdict(list)
    for role in roles:
        for tail, head in _hops(plan, role):
            by_link[frozenset((tuple(tail), tuple(head)))].append((role, tail, head))
    for hops in by_link.values():
        for k, (role, tail, head) in enumerate(hops):
            step = head - tail
            side = np.abs(step[::-1]) * 0.13 * (k - (len(hops) - 1) / 2)  # across the link
            # short arrows: leave each router's center free for the markers
            ax.annotate("", xy=head - 0.2 * step + side, xytext=tail + 0.2 * step + side,
                        zorder=3, arrowprops=dict(arrowstyle="-|>", color=_ROLE_SHADE[role],
                                                  lw=1.2, mutation_scale=7, shrinkA=0,
                                                  shrinkB=0))


def plot_placement(plan, ax=None):
    """Which PEs hold which layer (one rectangle per layer block, finalizers starred) and
    where each color runs (one arrow per hop, colored by role); inputs enter at the
    triangles, outputs leave and targets enter at the diamonds."""
    rows, cols = plan.wafer.rows, plan.wafer.cols
    # about 0.6 inch per PE, plus room for the legend on the right
    fig, ax = axes(ax, figsize=(min(4.0 + 0.6 * (cols + 2), 16.0),
                                min(1.2 + 0.6 * (rows + 1), 12.0)))
    ax.set_aspect("equal")
    grid = np.array([(r, c) for r in range(rows) for c in range(cols)])
    ax.scatter(grid[:, 1], grid[:, 0], s=6, color="0.75", zorder=1)

    for b in plan.layers:
        # faint fills, so the route arrows on top keep their colors
        shade = colormaps["Pastel2"](b.index % 8)
        d = b.dense
        ax.add_patch(Rectangle((b.col0 - 0.5, b.row0 - 0.5), b.cols, b.rows, facecolor=shade,
                               alpha=0.6, edgecolor="0.3", lw=1.2, zorder=0,
                               label=f"layer {b.index}: Linear({d.n_in}, {d.n_out}) + "
                                     f"{d.activation}"))
    fin = np.array([b.finalizer(c) for b in plan.layers for c in range(b.cols)])
    ax.scatter(fin[:, 1], fin[:, 0], marker="*", s=140, color="gold", edgecolor="black",
               lw=0.6, zorder=4, label="finalizer")

    roles = [r for r in _ROLE_SHADE if r in plan.colors and plan.colors[r] in plan.routes.table]
    _draw_routes(ax, plan, roles)
    handles = [Line2D([], [], color=_ROLE_SHADE[role], lw=2,
                      label=f"{role} (color {plan.colors[role]}): {ROLE_NAMES[role]}")
               for role in roles]

    ins, outs = np.array(plan.input_ports), np.array(plan.output_ports)
    ax.scatter(ins[:, 1], ins[:, 0], marker=">", s=60, color="0.2", zorder=4, label="input ports")
    ax.scatter(outs[:, 1], outs[:, 0], marker="D", s=40, color="0.2", zorder=4,
               label="output / target ports")

    ax.set_xlim(-1.6, cols + 0.6)
    ax.set_ylim(-0.6, rows - 0.4)
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.set_xlabel("column (east ->)")
    ax.set_ylabel("row (north ->)")
    ax.set_title(f"{len(plan.layers)} layer(s) on a {rows} x {cols} wafer")
    layer_handles, _ = ax.get_legend_handles_labels()
    ax.legend(handles=layer_handles + handles, loc="upper left", bbox_to_anchor=(1.02, 1.0),
              fontsize=8, frameon=False)
    return fig


def _axes_for(ax, n: int, figsize):
    """``n`` axes: the ones given (one Axes or a sequence of ``n``), or a new row of them."""
    if ax is None:
        # made by axes() so the figure is a pyplot one exactly when pyplot is in use
        fig, first = axes(None, figsize=figsize)
        fig.delaxes(first)
        return fig, list(np.atleast_1d(fig.subplots(1, n)))
    given = [ax] if isinstance(ax, Axes) else list(ax)
    if len(given) != n:
        raise ConfigError(f"{n} plot(s) need {n} axes, got {len(given)}")
    return given[0].figure, given


def plot_busy(stats, ax=None, passes=("forward", "delta", "chain")):
    """Busy cycles per PE in each of ``passes`` ("forward", "delta", "chain", "control";
    None: all passes), one heatmap each, from a ``TrainStats`` (``Trainer.stats()``).
    ``ax``: an Axes per pass, or None for a new figure with a row of them."""
    passes = list(passes)
    w = stats.plan.wafer
    fig, axs = _axes_for(ax, len(passes), figsize=(0.6 + 3.2 * len(passes),
                                                   1.2 + 2.6 * w.rows / max(w.cols, 1)))
    for a, pass_ in zip(axs, passes):
        im = a.imshow(stats.busy(pass_), origin="lower", cmap="viridis", interpolation="nearest")
        fig.colorbar(im, ax=a, label="busy cycles", shrink=0.8)
        a.set_xlabel("column (east ->)")
        a.set_ylabel("row (north ->)")
        a.set_title(f"{pass_} pass" if pass_ else "all passes")
    return fig


def plot_link_traffic(plan, ax=None):
    """Wavelets each router sent on its links (to neighbors and edge ports), all colors,
    since the wafer's counters were last reset (``Wafer.reset_counters``)."""
    return link_heatmap(plan.wafer.counters(), per_cycle=False, ax=ax,
                        title="Wavelets each router sent on its links")


def plot_history(history, ax=None):
    """Loss (left axis) and accuracy (right axis) per epoch of a ``History``; validation
    curves dashed when there are any."""
    fig, ax = axes(ax)
    right = ax.twinx()
    lines = []
    for target, values, color, style, label in (
            (ax, history.loss, "C0", "-", "training loss"),
            (ax, history.val_loss, "C0", "--", "validation loss"),
            (right, history.accuracy, "C1", "-", "training accuracy"),
            (right, history.val_accuracy, "C1", "--", "validation accuracy")):
        if len(values):
            epochs = np.arange(1, len(values) + 1)
            lines += target.plot(epochs, values, style, color=color, marker="o", label=label)
    ax.set_xlabel("epoch")
    ax.set_ylabel("loss", color="C0")
    right.set_ylabel("accuracy", color="C1")
    right.set_ylim(0.0, 1.02)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Training on the wafer")
    if lines:
        # below the axes: inside, the curves of either axis could hide behind it
        right.legend(handles=lines, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2,
                     fontsize=8, frameon=False)
    return fig


def plot_stage_timeline(stage_times, ax=None, samples=None, title="When each layer takes each sample"):
    """A stage timeline: one line per sample through the cycles at which each layer had
    its inputs (``TrainStats.stage_times()``, a {layer: cycles} dict); ``samples``: the
    sample numbers to draw (default: the first 12). Where a layer waits, its lines spread
    apart."""
    times = {int(k): np.asarray(v) for k, v in dict(stage_times).items()}
    if not times:
        raise ConfigError("no stage times: train or predict with ws.Trainer(..., timeline=True)")
    n = min(len(v) for v in times.values())
    picks = list(range(min(n, 12))) if samples is None else [int(k) for k in samples]
    if any(not 0 <= k < n for k in picks):
        raise ConfigError(f"samples must be in 0..{n - 1}, got {picks}")
    fig, ax = axes(ax, figsize=(7.0, 3.4))
    layers = sorted(times)
    cmap = colormaps["viridis"]
    t0 = min(times[l][k] for l in layers for k in picks)
    for i, k in enumerate(picks):
        xs = [times[l][k] - t0 for l in layers]
        ax.plot(xs, layers, "-o", ms=3, lw=1, color=cmap(i / max(len(picks) - 1, 1)))
    ax.set_xlabel(f"cycle - {t0}")
    ax.set_ylabel("layer")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title)
    return fig
