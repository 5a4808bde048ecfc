"""The bake-off report's statistics: pure computation on score tables, no files and no plots.

Conventions (see :mod:`eadct.tables.bakeoff.report`): fold by fold, a dataset's mean is taken over the folds every
compared method has (:func:`common_folds`, :func:`set_means`); datasets are the unit. Ties, ranks and paired
differences are the tables' one definition (:mod:`eadct.tables._paired`): means rounded to 12 significant digits
first, so means equal up to float noise tie; average ranks (rank 1 = best); two-sided
``wilcoxon(zero_method="wilcox")`` on the per-dataset differences, relative to the pair's mean for errors; then
Holm's step-down correction (:func:`holm`). The critical-difference cliques are aeon's (:func:`cd_groups`), on
aeon's own test of the raw scores.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from .._paired import paired_differences, ranks, round_significant, wilcoxon_p

ALPHA = 0.05


def common_folds(tables, min_folds=1) -> tuple[dict[str, list[int]], dict[str, str]]:
    """``(folds_by_set, dropped)``: per dataset, the sorted folds every table has a score for; ``dropped`` maps
    each dataset with fewer than ``min_folds`` such folds to the reason."""
    if int(min_folds) < 1:
        raise ValueError(f"min_folds={min_folds}; it must be at least 1")
    datasets = sorted({d for t in tables.values() for d in t.index})
    kept, dropped = {}, {}
    for d in datasets:
        have = {}
        for name, table in tables.items():
            row = table.loc[d] if d in table.index else pd.Series(dtype=float)
            have[name] = {int(f) for f, v in row.items() if np.isfinite(v)}
        folds = sorted(set.intersection(*have.values()))
        if len(folds) >= min_folds:
            kept[d] = folds
            continue
        missing = [name for name, f in have.items() if not f]
        reason = f"{len(folds)} common fold(s) < min_folds={min_folds}"
        dropped[d] = reason + (f"; no folds from {', '.join(missing)}" if missing else "")
    return kept, dropped


def set_means(tables, folds_by_set) -> pd.DataFrame:
    """Datasets x methods: each table's mean over the dataset's common folds (NaN cells skipped; NaN if none)."""
    out = pd.DataFrame(np.nan, index=list(folds_by_set), columns=list(tables), dtype=float)
    for name, table in tables.items():
        for d, folds in folds_by_set.items():
            cells = table.reindex(index=[d], columns=folds).to_numpy(dtype=float)
            if np.isfinite(cells).any():
                out.loc[d, name] = float(np.nanmean(cells))
    return out


def rounded(means: pd.DataFrame) -> pd.DataFrame:
    """The means rounded to 12 significant digits (RMSEs of thousands too), as every comparison here
    sees them."""
    return pd.DataFrame(round_significant(means), index=means.index, columns=means.columns)


def rank_table(means, higher_is_better) -> pd.DataFrame:
    """Per-dataset ranks (1 = best, ties share the average place) of the means rounded to 12 significant digits."""
    return pd.DataFrame(ranks(means.to_numpy(), higher_is_better, axis=1), index=means.index, columns=means.columns)


def average_ranks(means, higher_is_better) -> pd.Series:
    """Each method's rank averaged over datasets, best first (ties in the average kept in column order)."""
    return rank_table(means, higher_is_better).mean(axis=0).sort_values(kind="stable")


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values, in the input's order: the i-th smallest of m is multiplied by
    m - i + 1 (i from 1), made non-decreasing in that order, and capped at 1."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(p, kind="stable")
    m = len(p)
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(scaled)
    return out


def _paired(x: np.ndarray, y: np.ndarray, higher_is_better) -> tuple[int, int, int, float]:
    """x's wins, ties and losses against y over datasets, and the Wilcoxon p of their paired differences."""
    d = paired_differences(x, y, higher_is_better)
    return int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()), wilcoxon_p(d)


def pairwise(means, higher_is_better, alpha=ALPHA) -> pd.DataFrame:
    """One row per pair (A, B) in column order: A's wins/ties/losses over datasets, the two-sided Wilcoxon p,
    the Holm-adjusted p over all pairs, and whether that is below ``alpha``."""
    values = rounded(means)
    rows = []
    for a, b in combinations(values.columns, 2):
        x, y = values[a].to_numpy(), values[b].to_numpy()
        rows.append((a, b, *_paired(x, y, higher_is_better)))
    table = pd.DataFrame(rows, columns=["A", "B", "wins", "ties", "losses", "p"])
    table["p_holm"] = holm(table["p"].to_numpy()) if len(table) else []
    table["significant"] = table["p_holm"] < alpha
    return table


def against_peers(means, focal, higher_is_better, alpha=ALPHA) -> pd.DataFrame:
    """One row per other method (column order), indexed by it: ``focal``'s wins/ties/losses over datasets, the
    effect (``mean_diff``: for scores, the mean over datasets of ``focal`` minus the peer; for errors, whose scales
    differ from dataset to dataset, the geometric mean of ``focal`` over the peer), the two-sided Wilcoxon p, its
    Holm adjustment over these k - 1 comparisons with ``focal`` (``p_holm``), and whether that is below
    ``alpha``. Empty when ``focal`` is not a column."""
    columns = ["wins", "ties", "losses", "mean_diff", "p", "p_holm", "significant"]
    if focal not in means.columns:
        return pd.DataFrame(columns=columns)
    values = rounded(means)
    x = values[focal].to_numpy()
    rows = {}
    for peer in (c for c in means.columns if c != focal):
        y = values[peer].to_numpy()
        a, b = means[focal].to_numpy(dtype=float), means[peer].to_numpy(dtype=float)
        diff = float(np.mean(a - b)) if higher_is_better else float(np.exp(np.mean(np.log(a / b))))
        wins, ties, losses, p = _paired(x, y, higher_is_better)
        rows[peer] = (wins, ties, losses, diff, p)
    table = pd.DataFrame.from_dict(rows, orient="index", columns=columns[:5])
    table["p_holm"] = holm(table["p"].to_numpy()) if len(table) else []
    table["significant"] = table["p_holm"] < alpha
    return table


def _aeon_cliques(together: np.ndarray) -> np.ndarray:
    """aeon's ``_build_cliques``: ``together[i, j]`` (i < j, methods best first) is 1 where i and j are not
    significantly different; returns the non-redundant cliques of two or more as 0/1 rows."""
    m = np.array(together, dtype=int)
    for i in range(m.shape[0]):
        for j in range(i + 1, m.shape[1]):
            if m[i, j] == 0:
                m[i, j + 1 :] = 0
                break
    rows = m[m.sum(axis=1) > 1, :]
    for i in range(rows.shape[0] - 1, 0, -1):
        for j in range(i - 1, -1, -1):
            if np.all(rows[j, rows[i, :].astype(bool)]):
                rows[i, :] = 0
                break
    return rows[rows.sum(axis=1) > 1, :]


def cd_groups(means, higher_is_better, p_values, alpha=ALPHA) -> tuple[list[str], list[list[str]]]:
    """``(order, groups)`` as aeon's diagram draws them: methods by average rank as aeon sorts them, and the
    cliques found from aeon's returned p-values (ordered that way) above alpha / (k - 1)."""
    values = rounded(means).to_numpy()
    ranks = rankdata(values if not higher_is_better else -1 * values, axis=1)
    order = list(np.asarray(means.columns)[np.argsort(ranks.mean(axis=0))])
    cliques = _aeon_cliques(np.asarray(p_values) > alpha / (len(order) - 1))
    return order, [[order[i] for i in np.flatnonzero(row)] for row in cliques]


def geometric_mean_ms(times, name) -> float:
    """Geometric mean of a method's per-dataset mean times (ms; below 1 ms counted as 1 ms); NaN if none."""
    if name not in times or not times[name].notna().any():
        return float("nan")
    return float(np.exp(np.nanmean(np.log(np.maximum(times[name].to_numpy(dtype=float), 1.0)))))
