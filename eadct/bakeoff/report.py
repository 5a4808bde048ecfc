"""The bake-off report: our summary tables against tsml-eval's published results, datasets as the unit.

Reads only ``<summary>/<task>/<measure>/<Method>_<measure>.csv`` tables (:func:`eadct.bakeoff.read_summary`) and,
optionally, tsml-eval's published tables in the same format (``<published>/classification_multivariate/`` or
``<published>/regression/``). Conventions, each decided here once:

* A published method is labelled ``"<Name> (published)"`` (:func:`published_label`), e.g. ``"HC2 (published)"``,
  so it never collides with a method we ran; its table is restricted to the datasets our runs cover.
* Fold by fold: a dataset's mean is taken over the folds that EVERY compared method has (:func:`common_folds`);
  a dataset with fewer than ``min_folds`` such folds is dropped, and the report says which and why.
* Datasets are the unit of the statistics. Means are rounded to 12 decimal places (1e-12) before ranks, W/T/L
  and tests, so means equal up to float noise are ties. Ranks are ``scipy.stats.rankdata(method="average")``
  per dataset (rank 1 = best; tied methods share the mean of their places), averaged over datasets.
* Pairwise tests: two-sided ``scipy.stats.wilcoxon(zero_method="wilcox")`` over the datasets' means (datasets
  where the two tie are dropped, as aeon does); all differences zero gives p = 1. Holm's step-down correction
  (:func:`holm`) runs over all k(k-1)/2 pairs.
* The critical-difference diagram is aeon's ``plot_critical_difference(test="wilcoxon", correction="holm")``.
  Its groups (cliques) are recomputed here from the p-values it returns, exactly as aeon forms them
  (:func:`cd_groups`): a Friedman gate, then ONE-sided Wilcoxon p-values against a fixed alpha/(k-1). That is
  aeon's procedure, not the full Holm table above, so a pair can differ between the two; both are reported.
* Score against fit time: one small point per method x dataset (x = the dataset's mean fit time over its common
  folds, log scale, seconds; y = its mean score) and one large marker per method (geometric mean of those times,
  mean of those scores). Only our methods have fit times; published tables have none.

Run ``python -m eadct.bakeoff.report --summary reports/bakeoff --published /work/shared/reference/tsml-eval
--out reports/bakeoff --task all``. No timestamps: a re-run on the same tables writes the same Markdown.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata, wilcoxon

from ._results import SCORES, read_summary

PUBLISHED_DIRS = {"classification": "classification_multivariate", "regression": "regression"}
PUBLISHED_METHODS = {
    "classification": ("HC2", "ROCKET", "InceptionT"),
    "regression": ("FreshPRINCE", "DrCIF", "MultiROCKET", "InceptionT"),
}
FOCAL = "EA-DC"
ALPHA = 0.05
DECIMALS = 12
_FULL_MATRIX_MAX = 8


def published_label(name: str) -> str:
    """The label a published tsml-eval method carries in the report: ``"<name> (published)"``."""
    return f"{name} (published)"


def _score_measure(task: str) -> str:
    if task not in SCORES:
        raise ValueError(f"unknown task {task!r}; use one of {sorted(SCORES)} (or 'all' on the command line)")
    return SCORES[task]


def _higher_is_better(task: str) -> bool:
    return _score_measure(task) == "accuracy"


def _our_methods(summary, task: str, measure: str) -> list[str]:
    folder = Path(summary) / task / measure
    return sorted(p.name[: -len(f"_{measure}.csv")] for p in folder.glob(f"*_{measure}.csv"))


def load_scores(summary, task, methods=None, published=None, published_methods=None) -> dict[str, pd.DataFrame]:
    """Score tables (datasets x folds) by label: ours, then the published ones restricted to our datasets.

    ``methods=None`` takes every ``<Method>_<score>.csv`` under ``<summary>/<task>/<score>/``; ``published`` is
    the folder holding tsml-eval's results (None: none); ``published_methods=None`` takes
    :data:`PUBLISHED_METHODS` of the task. Published tables are labelled by :func:`published_label`.
    """
    measure = _score_measure(task)
    folder = Path(summary) / task / measure
    names = _our_methods(summary, task, measure) if methods is None else list(methods)
    if not names:
        raise ValueError(f"no '*_{measure}.csv' tables in {folder}; run 'eadct-bakeoff collect' first")
    tables = {}
    for name in names:
        path = folder / f"{name}_{measure}.csv"
        if not path.is_file():
            raise ValueError(
                f"no table {path} for method {name!r}; the methods found are {_our_methods(summary, task, measure)}"
            )
        tables[name] = read_summary(path)
    ours = sorted({d for t in tables.values() for d in t.index[t.notna().any(axis=1)]})
    if published is None:
        return tables
    for name in PUBLISHED_METHODS[task] if published_methods is None else published_methods:
        path = Path(published) / PUBLISHED_DIRS[task] / f"{name}_{measure}.csv"
        if not path.is_file():
            raise ValueError(
                f"no published table {path}; pass the tsml-eval results folder as published, "
                "or name published_methods that exist there"
            )
        tables[published_label(name)] = read_summary(path).reindex(ours)
    return tables


def load_times(summary, task, methods, measure="fittime") -> dict[str, pd.DataFrame]:
    """The ``fittime`` (or ``predicttime``) tables, in ms, of those of ``methods`` that have one."""
    _score_measure(task)
    folder = Path(summary) / task / measure
    paths = {m: folder / f"{m}_{measure}.csv" for m in methods}
    return {m: read_summary(p) for m, p in paths.items() if p.is_file()}


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


def _rounded(means: pd.DataFrame) -> pd.DataFrame:
    return means.astype(float).round(DECIMALS)


def rank_table(means, higher_is_better) -> pd.DataFrame:
    """Per-dataset ranks (1 = best, ties share the average place) of the means rounded to 1e-12."""
    values = _rounded(means).to_numpy()
    ranks = rankdata(-values if higher_is_better else values, method="average", axis=1)
    return pd.DataFrame(ranks, index=means.index, columns=means.columns)


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


def _wilcoxon_p(a: np.ndarray, b: np.ndarray) -> float:
    if np.all(a == b):
        return 1.0
    return float(wilcoxon(a, b, zero_method="wilcox", alternative="two-sided").pvalue)


def pairwise(means, higher_is_better, alpha=ALPHA) -> pd.DataFrame:
    """One row per pair (A, B) in column order: A's wins/ties/losses over datasets, the two-sided Wilcoxon p,
    the Holm-adjusted p over all pairs, and whether that is below ``alpha``."""
    values = _rounded(means)
    rows = []
    for a, b in combinations(values.columns, 2):
        x, y = values[a].to_numpy(), values[b].to_numpy()
        better = x > y if higher_is_better else x < y
        worse = x < y if higher_is_better else x > y
        rows.append((a, b, int(better.sum()), int((x == y).sum()), int(worse.sum()), _wilcoxon_p(x, y)))
    table = pd.DataFrame(rows, columns=["A", "B", "wins", "ties", "losses", "p"])
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
    values = _rounded(means).to_numpy()
    ranks = rankdata(values if not higher_is_better else -1 * values, axis=1)
    order = list(np.asarray(means.columns)[np.argsort(ranks.mean(axis=0))])
    cliques = _aeon_cliques(np.asarray(p_values) > alpha / (len(order) - 1))
    return order, [[order[i] for i in np.flatnonzero(row)] for row in cliques]


def critical_difference(means, higher_is_better, path, alpha=ALPHA) -> dict:
    """Draw aeon's critical-difference diagram to ``path`` (PNG); return its ``order``, ``groups``,
    ``friedman_p`` and aeon's ``p_values`` (one-sided, methods in ``order``). Needs at least 3 methods."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from aeon.benchmarking.stats import check_friedman
    from aeon.visualisation import plot_critical_difference

    if means.shape[1] < 3:
        raise ValueError(f"a critical-difference diagram needs at least 3 methods, got {list(means.columns)}")
    values = _rounded(means).to_numpy()
    options = dict(lower_better=not higher_is_better, test="wilcoxon", correction="holm", alpha=alpha)
    fig, _, p_values = plot_critical_difference(values, list(means.columns), **options, return_p_values=True)
    fig.savefig(path, dpi=120, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    order, groups = cd_groups(means, higher_is_better, p_values, alpha)
    friedman = float(check_friedman(rankdata(values if not higher_is_better else -1 * values, axis=1)))
    return {"order": order, "groups": groups, "friedman_p": friedman, "p_values": p_values}


def plot_time(means, fit_means, score_label, path) -> None:
    """Score against mean fit time (seconds, log x) for the methods in ``fit_means`` (datasets x methods, ms);
    small points per method x dataset, a large marker per method (geometric-mean time, mean score)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    for i, name in enumerate(fit_means.columns):
        seconds = np.maximum(fit_means[name].to_numpy(dtype=float), 1.0) / 1000.0  # below 1 ms drawn at 1 ms
        score = means[name].to_numpy(dtype=float)
        ok = np.isfinite(seconds) & np.isfinite(score)
        colour = f"C{i % 10}"
        ax.scatter(seconds[ok], score[ok], s=14, alpha=0.45, color=colour)
        centre = [np.exp(np.mean(np.log(seconds[ok])))], [np.mean(score[ok])]
        ax.scatter(*centre, s=120, marker="D", color=colour, edgecolor="black", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("mean fit time per dataset (s, log scale)")
    ax.set_ylabel(score_label)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.savefig(path, dpi=120, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


def _section(title, text) -> list[str]:
    return [f"## {title}", "", text, ""]


def _md_table(header, rows) -> list[str]:
    lines = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(map(str, row)) + " |" for row in rows] + [""]


def _fmt(value, measure) -> str:
    if not np.isfinite(value):
        return "-"
    return f"{value:.4f}" if measure == "accuracy" else f"{value:.5g}"


def _p(value) -> str:
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def _folds_section(tables, folds_by_set, dropped, min_folds) -> list[str]:
    names = list(tables)
    text = "Folds with a score, per method; the means use the folds every method has (`common`). "
    lines = _section("Folds per dataset", text + f"A dataset needs at least {min_folds} common fold(s).")
    rows = []
    for d in sorted(set(folds_by_set) | set(dropped)):
        counts = [int(tables[n].loc[d].notna().sum()) if d in tables[n].index else 0 for n in names]
        rows.append([d, *counts, len(folds_by_set.get(d, [])), "dropped" if d in dropped else "kept"])
    lines += _md_table(["dataset", *names, "common", ""], rows)
    if dropped:
        lines += ["Dropped:", ""] + [f"- {d}: {why}" for d, why in dropped.items()] + [""]
    return lines


def _means_section(means, folds_by_set, higher, measure) -> list[str]:
    values = _rounded(means)
    best = values.max(axis=1) if higher else values.min(axis=1)
    rows = []
    for d in means.index:
        cells = [_fmt(means.loc[d, m], measure) for m in means.columns]
        cells = [f"**{c}**" if values.loc[d, m] == best[d] else c for c, m in zip(cells, means.columns, strict=True)]
        rows.append([d, len(folds_by_set[d]), *cells])
    text = f"Over the common folds ({'higher' if higher else 'lower'} is better; the best in bold, ties included)."
    head = _section(f"Mean {measure} per dataset", text)
    return head + _md_table(["dataset", "folds", *means.columns], rows)


def _ranks_section(means, higher, measure) -> list[str]:
    ranks = average_ranks(means, higher)
    rows = [[m, f"{r:.3f}", _fmt(means[m].mean(), measure)] for m, r in ranks.items()]
    text = f"Over {len(means)} datasets (rank 1 = best; ties share the average place; means rounded to 1e-12 first)."
    head = _section("Average ranks", text)
    return head + _md_table(["method", "average rank", f"mean {measure}"], rows)


def _oriented(row, first) -> tuple:
    """A pair's row seen from ``first``: (first, other, wins, ties, losses)."""
    if row["A"] == first:
        return row["A"], row["B"], row["wins"], row["ties"], row["losses"]
    return row["B"], row["A"], row["losses"], row["ties"], row["wins"]


def _pairs_section(pairs, names) -> list[str]:
    text = f"Two-sided, over datasets (zero_method 'wilcox'); Holm-adjusted over all {len(pairs)} pairs; "
    lines = _section("Pairwise Wilcoxon signed-rank tests", text + "W/T/L: the first method's wins/ties/losses.")
    focal = pairs[(pairs["A"] == FOCAL) | (pairs["B"] == FOCAL)] if FOCAL in names else pairs
    rows = []
    for _, r in focal.iterrows():
        a, b, w, t, lo = _oriented(r, FOCAL if FOCAL in names else r["A"])
        rows.append([a, b, f"{w}/{t}/{lo}", _p(r["p"]), _p(r["p_holm"]), "yes" if r["significant"] else "no"])
    lines += _md_table(["method", "vs", "W/T/L", "p", "p (Holm)", f"Holm p < {ALPHA}"], rows)
    if FOCAL in names and len(names) <= _FULL_MATRIX_MAX:
        cell = {}
        for _, r in pairs.iterrows():
            for first in (r["A"], r["B"]):
                a, b, w, t, lo = _oriented(r, first)
                cell[a, b] = f"{w}/{t}/{lo}, {_p(r['p_holm'])}"
        lines += ["All pairs: the row method's W/T/L against the column method, and the Holm-adjusted p.", ""]
        lines += _md_table(["", *names], [[a, *(cell.get((a, b), "") for b in names)] for a in names])
    return lines


def _cd_section(means, higher, task, out_dir) -> list[str]:
    lines = ["## Critical-difference diagram", ""]
    if means.shape[1] < 3:
        return lines + ["Not drawn: aeon's diagram needs at least 3 methods.", ""]
    cd = critical_difference(means, higher, Path(out_dir) / f"{task}_cd.png")
    text = (
        f"aeon's `plot_critical_difference(test='wilcoxon', correction='holm', alpha={ALPHA})`. Friedman p = "
        f"{_p(cd['friedman_p'])} (at or above alpha, aeon draws one group; otherwise groups come from one-sided "
        f"Wilcoxon p-values against alpha/(k-1) = {ALPHA / (means.shape[1] - 1):.4g}: not the Holm table above)."
    )
    lines += [f"![critical-difference diagram]({task}_cd.png)", "", text, ""]
    grouped = {m for g in cd["groups"] for m in g}
    lines += [f"- Group {i}: {', '.join(g)}" for i, g in enumerate(cd["groups"], 1)]
    lines += [f"- Alone: {m}" for m in cd["order"] if m not in grouped]
    return lines + [""]


def _time_section(summary, task, tables, folds_by_set, means, measure, out_dir) -> list[str]:
    lines = ["## Score against fit time", ""]
    fit = set_means(load_times(summary, task, list(tables)), folds_by_set)
    if fit.empty:
        return lines + ["No fit times: no method here has a `fittime` table (published tables have none).", ""]
    predict = set_means(load_times(summary, task, list(fit.columns), "predicttime"), folds_by_set)
    plot_time(means, fit, f"mean {measure} over common folds", Path(out_dir) / f"{task}_time.png")
    text = "Small points: one per method x dataset; diamonds: geometric-mean fit time and mean score per method."
    lines += [f"![{measure} against fit time]({task}_time.png)", "", text, ""]
    rows = [[m, _geo_ms(fit, m), _geo_ms(predict, m)] for m in fit.columns]
    return lines + _md_table(["method", "fit ms (geometric mean)", "predict ms (geometric mean)"], rows)


def _geo_ms(times, name) -> str:
    """Geometric mean of a method's per-dataset mean times (ms; below 1 ms counted as 1 ms)."""
    if name not in times or not times[name].notna().any():
        return "-"
    return f"{np.exp(np.nanmean(np.log(np.maximum(times[name].to_numpy(dtype=float), 1.0)))):.4g}"


def _default_command(summary, out_dir, task, published, min_folds) -> str:
    args = ["python", "-m", "eadct.bakeoff.report", "--summary", str(summary)]
    args += ["--published", str(published)] if published is not None else []
    return shlex.join(args + ["--out", str(out_dir), "--task", task, "--min-folds", str(min_folds)])


def write_report(summary, out_dir, task, published=None, min_folds=1, command=None, methods=None) -> Path:
    """Write ``<out_dir>/<task>.md`` (and ``<task>_cd.png``, ``<task>_time.png``) and return the Markdown path."""
    measure = _score_measure(task)
    higher = _higher_is_better(task)
    tables = load_scores(summary, task, methods=methods, published=published)
    folds_by_set, dropped = common_folds(tables, min_folds)
    if not folds_by_set:
        fix = "lower min_folds, run more folds, or compare fewer methods"
        raise ValueError(f"no dataset has {min_folds} fold(s) that every method has ({dropped}); {fix}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    means = set_means(tables, folds_by_set)
    pub = [n for n in tables if n.endswith(published_label(""))]
    text = f"Methods: {', '.join(n for n in tables if n not in pub)}"
    text += f"; published tsml-eval results: {', '.join(pub)}" if pub else ""
    command = command or _default_command(summary, out_dir, task, published, min_folds)
    lines = [f"# Bake-off report: {task} ({measure})", "", "Recompute with:", "", "```", command, "```", ""]
    lines += [f"{text}. {len(folds_by_set)} dataset(s) compared, {len(dropped)} dropped.", ""]
    lines += _folds_section(tables, folds_by_set, dropped, min_folds)
    lines += _means_section(means, folds_by_set, higher, measure)
    lines += _ranks_section(means, higher, measure)
    lines += _pairs_section(pairwise(means, higher), list(means.columns))
    lines += _cd_section(means, higher, task, out_dir)
    lines += _time_section(summary, task, tables, folds_by_set, means, measure, out_dir)
    path = out_dir / f"{task}.md"
    path.write_text("\n".join(lines).rstrip("\n") + "\n")
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eadct.bakeoff.report", description=__doc__.splitlines()[0])
    parser.add_argument("--summary", required=True, help="folder of <task>/<measure>/<Method>_<measure>.csv")
    parser.add_argument("--published", default=None, help="tsml-eval's published results folder (optional)")
    parser.add_argument("--out", required=True, help="folder for <task>.md and its PNGs")
    parser.add_argument("--task", default="all", help="classification, regression or all")
    parser.add_argument("--min-folds", type=int, default=1, help="common folds a dataset needs (default 1)")
    args = parser.parse_args(argv)
    if args.task == "all":
        tasks = [t for t in SCORES if (Path(args.summary) / t / SCORES[t]).is_dir()]
        if not tasks:
            raise ValueError(f"no task folders under {args.summary}; run 'eadct-bakeoff collect' first")
    else:
        tasks = [args.task]
        _score_measure(args.task)
    for task in tasks:
        command = _default_command(args.summary, args.out, args.task, args.published, args.min_folds)
        print(write_report(args.summary, args.out, task, args.published, args.min_folds, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
