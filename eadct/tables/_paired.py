"""Paired comparisons of a table's rows: wins, ties and losses and the Wilcoxon signed-rank test.

A model is compared with each peer over the datasets where both have results (the mean over seeds per
dataset), and over the (dataset, seed) pairs both finished. Accuracy differences are used as they are; RMSE
differences are divided by the pair's mean RMSE first, so that datasets on different scales weigh alike
(a raw RMSE difference of 900 on ChilledWaterPredictor would otherwise outrank every other set). The test
is scipy's two-sided ``wilcoxon`` (ties dropped, ``zero_method="wilcox"``); with fewer than two non-tied
pairs it reads "n/a". The size of the effect over the datasets is the mean accuracy difference, or for errors
the geometric mean of the per-dataset ratios (``x0.95``: 5% lower error than the peer).
"""

from __future__ import annotations

import numpy as np

TIE = 1e-12


def paired_differences(a, b, higher_is_better: bool) -> np.ndarray:
    """Per pair, how much ``a`` is better than ``b`` (positive: ``a`` wins); relative for errors."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if higher_is_better:
        return a - b
    scale = (np.abs(a) + np.abs(b)) / 2
    return np.where(scale > 0, (b - a) / np.where(scale > 0, scale, 1.0), 0.0)


def compare(a, b, higher_is_better: bool) -> dict:
    """Wins, ties, losses of ``a`` against ``b`` and the Wilcoxon signed-rank p-value over the pairs."""
    d = paired_differences(a, b, higher_is_better)
    wins, losses = int(np.sum(d > TIE)), int(np.sum(d < -TIE))
    out = {"n": len(d), "wins": wins, "ties": len(d) - wins - losses, "losses": losses, "p": None}
    if wins + losses >= 2:
        from scipy.stats import wilcoxon

        out["p"] = float(wilcoxon(d[np.abs(d) > TIE], zero_method="wilcox").pvalue)
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
