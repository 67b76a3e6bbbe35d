"""Plots of NoC studies: the patent's zero-load cuts and cycle-level load curves."""

from __future__ import annotations

import math

import numpy as np

from ._axes import axes


def zero_load_cuts(table: list[dict], *, measured: dict | None = None, ax=None):
    """Bars of the latency cut per case of ``noc.patent_table()``; ``measured`` maps a
    (pattern, n) to a cut measured on the cycle-level fabric, drawn alongside."""
    fig, ax = axes(ax, figsize=(7.0, 4.0))
    labels = [f"{r['pattern']}\n{r['n']}x{r['n']}" for r in table]
    x = np.arange(len(table))
    width = 0.4 if measured else 0.6
    ax.bar(x - (width / 2 if measured else 0), [100 * r["latency_cut"] for r in table], width,
           label="seed 003 delay model (router = wire delay)")
    if measured:
        vals = [100 * measured.get((r["pattern"], r["n"]), math.nan) for r in table]
        ax.bar(x + width / 2, vals, width, label="cycle-level fabric (1 cycle / router)")
    for y, txt in ((20, "patent: ~20% average"), (40, "patent: ~40% diagonal")):
        ax.axhline(y, color="gray", lw=0.8, ls="--")
        ax.text(0.99, y + 0.5, txt, transform=ax.get_yaxis_transform(), ha="right",
                va="bottom", fontsize=8, color="gray")
    ax.set_ylim(0, 52)
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("zero-load latency cut with diagonals (%)")
    ax.legend(fontsize=8, loc="upper left")
    return fig


def zero_load_sensitivity(ratios, cuts: dict, *, ax=None):
    """Latency cut against router / wire delay ratio; ``cuts`` maps a label to values."""
    fig, ax = axes(ax)
    finite = [r if math.isfinite(r) else np.nan for r in ratios]
    for label, values in cuts.items():
        ax.plot(finite, 100 * np.asarray(values), marker="o", label=label)
    ax.set_xlabel("router delay / wire delay per pitch")
    ax.set_ylabel("zero-load latency cut (%)")
    ax.legend(fontsize=8)
    return fig


def latency_vs_load(curves, *, ax=None, title: str | None = None):
    """Mean latency against offered load for ``noc.LoadCurve`` objects (saturated points,
    whose latency is NaN, are left out). Our extension: the seeds give no load data."""
    fig, ax = axes(ax)
    for c in curves:
        lat = c.latency
        ok = np.isfinite(lat)
        line, = ax.plot(c.offered[ok], lat[ok], marker="o", label=c.label)
        ax.axvline(c.saturation_throughput, color=line.get_color(), ls=":", lw=1)
    ax.set_xlabel("offered load (packets / node / cycle)")
    ax.set_ylabel("mean latency (cycles)")
    ax.set_title(title or "Latency under load (dotted: saturation throughput)")
    ax.legend(fontsize=8)
    return fig
