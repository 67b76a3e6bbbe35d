"""Neuron smearing (seed 000, FIG. 17-20, [0468]-[0494]; seed 001, EC412): the portions in
which a layer's neurons are split over PEs.

The mapping already smears every neuron: layer l's neuron j lies on the R_l PEs of its
column, each holding the fan-in portion W[j, I_r] and computing a partial sum that the
column chain combines at the finalizer ([0476]-[0478], [0492]); the deltas come back the
same paths reversed ([0491]). ``smear`` chooses the portions per layer:

* ``k`` (an integer >= 1): k equal portions ([0488]: halves, fourths, ...), one per PE
  row of the layer's block, sizes as ``numpy.array_split`` (what ``blocks`` with k rows
  gives);
* a list of fractions ``[0.5, 0.25, 0.25]``: unequal portions ([0488]-[0490]), each > 0,
  summing to 1; portion r holds round(p_r n_in) of the layer's n_in inputs (largest
  remainders, ties to the lower portion), at least one.

The portions of layer l are its input groups I_r, and a layer's input groups are the
previous layer's output groups (row c of a block receives column c of the one before;
placement.py): smearing layer l > 0 in k portions gives layer l - 1 k columns whose
output groups O_c have the same sizes.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ConfigError

__all__ = ["check_smear", "portion_sizes", "balanced_portions"]

#: |sum of the fractions - 1| allowed (fractions such as 1/3 are not exact in binary).
SUM_TOLERANCE = 1e-6


def portion_sizes(fractions, n: int) -> tuple[int, ...]:
    """Sizes of the portions ``fractions`` (summing to 1) of ``n`` items: floor(p n),
    then one more to the largest remainders (ties: the lower portion first)."""
    exact = [float(p) * n for p in fractions]
    sizes = [math.floor(x) for x in exact]
    order = sorted(range(len(exact)), key=lambda r: (-(exact[r] - sizes[r]), r))
    for r in order[:n - sum(sizes)]:
        sizes[r] += 1
    return tuple(sizes)


def _fractions(value, name: str, n_in: int) -> tuple[int, ...]:
    if len(value) == 0:
        raise ConfigError(f"{name} is an empty list; give the portions of the layer's "
                          "neurons as fractions summing to 1, e.g. [0.5, 0.25, 0.25]")
    for r, p in enumerate(value):
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not math.isfinite(p) \
                or p <= 0:
            raise ConfigError(f"{name} portion {r} is {p!r}; every portion must be a "
                              "finite number > 0")
    total = math.fsum(float(p) for p in value)
    if abs(total - 1.0) > SUM_TOLERANCE:
        raise ConfigError(f"{name} portions {list(value)!r} sum to {total:.9g}; they "
                          f"must sum to 1 (within {SUM_TOLERANCE:g})")
    if len(value) > n_in:
        raise ConfigError(f"{name} has {len(value)} portions, but the layer has only "
                          f"{n_in} inputs; each portion needs at least one")
    sizes = portion_sizes(value, n_in)
    for r, (p, s) in enumerate(zip(value, sizes)):
        if s == 0:
            raise ConfigError(f"{name} portion {r} ({p!r}) is {float(p) * n_in:.3g} of "
                              f"the layer's {n_in} inputs; each portion needs at least one "
                              f"input (at least {1 / n_in:.3g})")
    return sizes


def check_smear(value, dense, max_rows: int | None = None) -> dict[int, tuple[int, ...]]:
    """Layer -> the sizes of its input groups I_r for every smeared layer (their number
    is the layer's rows; equal portions: array_split sizes). ConfigError
    naming the layer and the limit for anything impossible, before any cycle runs."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"smear must be a {{layer: portions}} dict (portions: an integer "
                          f"k >= 1 or a list of fractions summing to 1), got {value!r}")
    n = len(dense)
    out: dict[int, tuple[int, ...]] = {}
    for k, v in value.items():
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 0 <= k < n:
            raise ConfigError(f"smear has an entry for layer {k!r}; this model's mapped layers "
                              f"are 0..{n - 1}")
        d = dense[int(k)]
        name = f"smear[{int(k)}] (layer {int(k)}, Linear({d.n_in}, {d.n_out}))"
        if isinstance(v, (list, tuple, np.ndarray)):
            sizes = _fractions(list(v), name, d.n_in)
            parts = len(sizes)
        elif isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ConfigError(f"{name} must be an integer k >= 1 (equal portions) or a "
                              f"list of fractions summing to 1, got {v!r}")
        else:
            parts, sizes = int(v), None
            if parts < 1:
                raise ConfigError(f"{name} is {parts}; a neuron is split into at least "
                                  "1 portion")
            if parts > d.n_in:
                raise ConfigError(f"{name} asks for {parts} portions, but the layer has "
                                  f"only {d.n_in} inputs; each portion needs at least one")
        if max_rows is not None and parts > max_rows:
            raise ConfigError(f"{name} asks for {parts} portions, one per PE row, but "
                              f"only {max_rows} PE rows are available")
        if sizes is None:
            sizes = tuple(len(g) for g in np.array_split(np.arange(d.n_in), parts))
        out[int(k)] = sizes
    _check_rows_do_not_grow(out, dense)
    return out


def _check_rows_do_not_grow(out: dict, dense) -> None:
    """Rows never grow from west to east (R_{m+1} = C_m <= R_m, placement.py): every
    layer m before a layer smeared into k portions needs k rows and k columns, so at
    least k inputs and outputs, and no fewer portions of its own."""
    for l, sizes in sorted(out.items()):
        k = len(sizes)
        for m in range(l):
            d = dense[m]
            few = min(d.n_in, d.n_out)
            if few < k:
                raise ConfigError(
                    f"smear[{l}] asks for {k} portions, but layer {m} (Linear({d.n_in}, "
                    f"{d.n_out})) has only {few} {'inputs' if d.n_in == few else 'outputs'}: "
                    f"every earlier layer needs at least {k} rows and columns (a layer's "
                    "rows receive the previous layer's columns, and a block has at least as "
                    "many rows as columns)")
            if m in out and len(out[m]) < k:
                raise ConfigError(
                    f"smear[{l}] asks for {k} portions, but layer {m} is smeared into "
                    f"{len(out[m])}: rows never grow from west to east (a layer's rows "
                    "receive the previous layer's columns, and a block has at least as many "
                    f"rows as columns), so layer {m} needs at least {k}")


def balanced_portions(load, k: int) -> list[float]:
    """k fractions (summing to 1) that split consecutive inputs with the given per-input
    ``load`` (e.g. how often each input is nonzero: the forward pass's multiply-adds per
    input, [0408]) so that the most loaded portion carries as little as possible: the
    allocation responsive to measured compute requirements of [0490]. Each portion gets
    at least one input; ties between equally good splits are broken deterministically
    (the earliest last cut, then recursively)."""
    w = np.asarray(load, dtype=np.float64).ravel()
    n = len(w)
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= n:
        raise ConfigError(f"balanced_portions needs 1 <= k <= {n} (the number of inputs), "
                          f"got k = {k!r}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ConfigError("balanced_portions needs finite, non-negative loads")
    pre = np.concatenate([[0.0], np.cumsum(w)])
    # best[j][i]: the smallest maximum load of j portions over inputs 0..i-1
    best = np.full((k + 1, n + 1), np.inf)
    cut = np.zeros((k + 1, n + 1), dtype=int)
    best[0][0] = 0.0
    for j in range(1, k + 1):
        for i in range(j, n - (k - j) + 1):
            for s in range(j - 1, i):
                v = max(best[j - 1][s], pre[i] - pre[s])
                if v < best[j][i]:
                    best[j][i], cut[j][i] = v, s
    sizes, i = [], n
    for j in range(k, 0, -1):
        sizes.append(i - cut[j][i])
        i = cut[j][i]
    return [float(s / n) for s in reversed(sizes)]
