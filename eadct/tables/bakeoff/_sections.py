"""The Markdown sections of the bake-off reports (:mod:`eadct.tables.bakeoff.report`): pure text from tables of
means and statistics; the conventions are the report's."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._plots import critical_difference
from ._stats import ALPHA, against_peers, average_ranks, rounded

FOCAL = "EA-DC"
_FULL_MATRIX_MAX = 8


def published_label(name: str) -> str:
    """The label a published tsml-eval method carries in the report: ``"<name> (published)"``."""
    return f"{name} (published)"


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


def _diff(value, measure) -> str:
    return f"{value:+.4f}" if measure == "accuracy" else f"{value:+.5g}"


def _covers(tables, folds_by_set, dropped) -> list[str]:
    """The methods, datasets and folds a comparison covers, in one paragraph."""
    pub = [n for n in tables if n.endswith(published_label(""))]
    text = f"Covers: methods {', '.join(n for n in tables if n not in pub)}"
    text += f"; published tsml-eval results {', '.join(pub)}" if pub else ""
    text += f". Datasets: {len(folds_by_set)} compared ({', '.join(folds_by_set) or 'none'}), {len(dropped)} dropped"
    counts = [len(f) for f in folds_by_set.values()]
    if counts:
        text += (
            f". Folds: fold by fold, each dataset's folds that every method has, {min(counts)} to {max(counts)} "
            f"per dataset ({sum(counts)} dataset-folds)"
        )
    return [text + ".", ""]


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
    values = rounded(means)
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
    text = f"Over {len(means)} datasets (rank 1 = best; ties share the average place; means to 12 digits first)."
    head = _section("Average ranks", text)
    return head + _md_table(["method", "average rank", f"mean {measure}"], rows)


def _peers_section(means, higher, measure) -> list[str]:
    """EA-DC's W/T/L, mean difference and Holm p (over its k-1 comparisons) against each other method."""
    peers = against_peers(means, FOCAL, higher)
    if peers.empty:
        return []
    text = (
        f"Over {len(means)} datasets: {FOCAL}'s wins/ties/losses against each peer; "
        + (
            "mean difference: EA-DC minus peer (positive favours EA-DC)"
            if higher
            else "geometric-mean ratio: EA-DC over peer (below 1 favours EA-DC)"
        )
        + "; two-sided Wilcoxon p and its Holm "
        f"adjustment over these {len(peers)} comparisons with {FOCAL} (the all-pairs Holm p is below)."
    )
    rows = [
        [
            peer,
            f"{r.wins}/{r.ties}/{r.losses}",
            _diff(r.mean_diff, measure) if higher else f"x{r.mean_diff:.3f}",
            _p(r.p),
            _p(r.p_holm),
        ]
        + ["yes" if r.significant else "no"]
        for peer, r in peers.iterrows()
    ]
    head = _section(f"{FOCAL} against each peer", text)
    return head + _md_table(
        ["peer", "W/T/L", "mean difference" if higher else "ratio", "p", "p (Holm)", f"Holm p < {ALPHA}"], rows
    )


def _oriented(row, first) -> tuple:
    """A pair's row seen from ``first``: (first, other, wins, ties, losses)."""
    if row["A"] == first:
        return row["A"], row["B"], row["wins"], row["ties"], row["losses"]
    return row["B"], row["A"], row["losses"], row["ties"], row["wins"]


def _pairs_section(pairs, names, measure) -> list[str]:
    text = "Two-sided, over datasets (zero_method 'wilcox'), on the per-dataset differences"
    text += " (each divided by the pair's mean RMSE)" if measure == "rmse" else ""
    text += f"; Holm-adjusted over all {len(pairs)} pairs."
    lines = _section("Pairwise Wilcoxon signed-rank tests", text)
    if len(names) <= _FULL_MATRIX_MAX:
        cell = {}
        for _, r in pairs.iterrows():
            for first in (r["A"], r["B"]):
                a, b, w, t, lo = _oriented(r, first)
                cell[a, b] = f"{w}/{t}/{lo}, {_p(r['p_holm'])}"
        lines += ["The row method's wins/ties/losses against the column method, and the Holm-adjusted p.", ""]
        return lines + _md_table(["", *names], [[a, *(cell.get((a, b), "") for b in names)] for a in names])
    rows = []
    for _, r in pairs.iterrows():
        a, b, w, t, lo = _oriented(r, FOCAL if FOCAL in (r["A"], r["B"]) else r["A"])
        rows.append([a, b, f"{w}/{t}/{lo}", _p(r["p"]), _p(r["p_holm"]), "yes" if r["significant"] else "no"])
    lines += ["W/T/L: the first method's wins/ties/losses.", ""]
    return lines + _md_table(["method", "vs", "W/T/L", "p", "p (Holm)", f"Holm p < {ALPHA}"], rows)


def _cd_section(means, higher, stem, out_dir) -> list[str]:
    lines = ["## Critical-difference diagram", ""]
    if means.shape[1] < 3:
        return lines + ["Not drawn: aeon's diagram needs at least 3 methods.", ""]
    cd = critical_difference(means, higher, Path(out_dir) / f"{stem}_cd.png")
    text = (
        f"aeon's `plot_critical_difference(test='wilcoxon', correction='holm', alpha={ALPHA})`. Friedman p = "
        f"{_p(cd['friedman_p'])} (at or above alpha, aeon draws one group; otherwise groups come from one-sided "
        f"Wilcoxon p-values against alpha/(k-1) = {ALPHA / (means.shape[1] - 1):.4g}: not the Holm tables above)."
    )
    lines += [f"![critical-difference diagram]({stem}_cd.png)", "", text, ""]
    grouped = {m for g in cd["groups"] for m in g}
    lines += [f"- Group {i}: {', '.join(g)}" for i, g in enumerate(cd["groups"], 1)]
    lines += [f"- Alone: {m}" for m in cd["order"] if m not in grouped]
    return lines + [""]
