"""Paired comparisons of methods over datasets: the conventions both benchmark reports share, defined once.

Ties: values are compared after rounding to :data:`DIGITS` significant digits (:func:`round_significant`), so
two means that differ only by float noise (a six-seed mean computed in another order) tie, in ranks and in
wins/ties/losses alike. Ranks: 1 = best, tied values share the mean of their places (:func:`ranks`). Paired
differences (:func:`paired_differences`): accuracy differences as they are; RMSE differences divided by the pair's
mean RMSE first, so that datasets on different scales weigh alike (a raw RMSE difference of 900 on
ChilledWaterPredictor would otherwise outrank every other set in a signed-rank test). The test is scipy's
two-sided ``wilcoxon`` on those differences (ties dropped, ``zero_method="wilcox"``).

The tables' reports (:func:`compare`, :func:`paired_lines`) compare a model with each peer over the datasets where
both have results (the mean over seeds per dataset), and over the (dataset, seed) pairs both finished; with fewer
than two non-tied pairs the p-value reads "n/a". The size of the effect over the datasets is the mean accuracy
difference, or for errors the geometric mean of the per-dataset ratios (``x0.95``: 5% lower error than the peer).
The bake-off's statistics (:mod:`eadct.tables.bakeoff._stats`) build on the same three functions.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

DIGITS = 12


def round_significant(values) -> np.ndarray:
    """``values`` (any shape) rounded to :data:`DIGITS` significant digits, as every comparison sees them; NaN and
    infinities stay."""
    arr = np.asarray(values, dtype=float)
    out = arr.copy()
    finite = np.isfinite(arr)
    out[finite] = [float(f"{v:.{DIGITS}g}") for v in arr[finite]]
    return out


def ranks(values, higher_is_better: bool, axis: int = -1) -> np.ndarray:
    """Ranks along ``axis`` (1 = best) of the rounded values; ties share the mean of their places."""
    rounded = round_significant(values)
    return rankdata(-rounded if higher_is_better else rounded, method="average", axis=axis)


def paired_differences(a, b, higher_is_better: bool) -> np.ndarray:
    """Per pair, how much ``a`` is better than ``b`` (positive: ``a`` wins), of the rounded values; relative to the
    pair's mean for errors. Exactly 0 where the rounded values tie."""
    a, b = round_significant(a), round_significant(b)
    if higher_is_better:
        return a - b
    scale = (np.abs(a) + np.abs(b)) / 2
    return np.where(scale > 0, (b - a) / np.where(scale > 0, scale, 1.0), 0.0)


def wilcoxon_p(d) -> float:
    """The two-sided Wilcoxon signed-rank p of paired differences ``d`` (zeros and non-finite values dropped); 1.0
    when none is left."""
    d = np.asarray(d, dtype=float)
    d = d[np.isfinite(d)]
    if not np.any(d != 0):
        return 1.0
    from scipy.stats import wilcoxon

    return float(wilcoxon(d, zero_method="wilcox", alternative="two-sided").pvalue)


def compare(a, b, higher_is_better: bool) -> dict:
    """Wins, ties, losses of ``a`` against ``b`` and the Wilcoxon signed-rank p-value over the pairs."""
    d = paired_differences(a, b, higher_is_better)
    d = d[np.isfinite(d)]  # a pair without both values is no pair
    wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
    out = {"n": len(d), "wins": wins, "ties": len(d) - wins - losses, "losses": losses, "p": None}
    if wins + losses >= 2:
        out["p"] = wilcoxon_p(d)
    return out


def effect(a, b, higher_is_better: bool) -> str:
    """The mean difference ``a - b``, or for errors the geometric-mean ratio ``a / b``, as a table cell."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not len(a):
        return "n/a"
    if higher_is_better:
        return f"{np.mean(a - b):+.3f}"
    ok = (a > 0) & (b > 0)
    return f"x{np.exp(np.mean(np.log(a[ok] / b[ok]))):.3f}" if ok.any() else "n/a"


def _pairs(results: dict, model: str, peer: str, datasets: list, by_seed: bool):
    a, b = [], []
    for d in datasets:
        ra, rb = results.get((model, d)), results.get((peer, d))
        if not ra or not rb:
            continue
        if by_seed:
            sa, sb = {r["seed"]: r["value"] for r in ra}, {r["seed"]: r["value"] for r in rb}
            for s in sorted(set(sa) & set(sb)):
                a.append(sa[s])
                b.append(sb[s])
        else:
            a.append(np.mean([r["value"] for r in ra]))
            b.append(np.mean([r["value"] for r in rb]))
    return a, b


def paired_lines(models: list[str], compared: list[str], results: dict, datasets: list, task: str) -> list[str]:
    """The Markdown rows comparing each model of ``compared`` with every other model on ``datasets``."""
    hib = task == "classification"
    lines = [
        "| model | peer | W / T / L over datasets | Wilcoxon p (datasets) | effect (datasets) | "
        "W / T / L over dataset x seed | Wilcoxon p (dataset x seed) |",
        "|---|---|---|---|---|---|---|",
    ]
    for model in compared:
        for peer in models:
            if peer == model:
                continue
            cells = []
            for by_seed in (False, True):
                pairs = _pairs(results, model, peer, datasets, by_seed)
                c = compare(*pairs, hib)
                p = "n/a" if c["p"] is None else f"{c['p']:.3g}"
                cells += [f"{c['wins']} / {c['ties']} / {c['losses']} (n={c['n']})", p]
                cells += [] if by_seed else [effect(*pairs, hib)]
            lines.append(f"| {model} | {peer} | " + " | ".join(cells) + " |")
    return lines
