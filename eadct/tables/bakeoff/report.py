"""The bake-off report: our summary tables, and against tsml-eval's published results, datasets as the unit.

Reads only ``<summary>/<task>/<measure>/<Method>_<measure>.csv`` tables (:func:`eadct.tables.bakeoff.read_summary`) and,
optionally, tsml-eval's published tables in the same format (``<published>/classification_multivariate/`` or
``<published>/regression/``). Two comparisons per task, each in its own Markdown, each linking to the other:

* ``<out>/<task>.md`` (with ``<task>_cd.png`` and ``<task>_time.png``): only our methods (``methods``; default
  every table found but the rows of the side comparisons), on every dataset they share, those missing from a
  published table included.
* ``<out>/<task>_published.md`` (with ``<task>_published_cd.png``), written only when ``published`` is given: our
  methods plus the published ones (``published_methods``; default :data:`PUBLISHED_METHODS`), on the datasets
  both cover.

and one more per side comparison (:data:`SIDE_COMPARISONS`) whose tables exist: EA-DC beside the rows that answer
one question (does the architecture's evolving attention or convolution help; what does the paper's configuration
give), ``<out>/<task>_<name>.md`` with its own tables, CD diagram (from three rows) and time figure, over the folds
and datasets THOSE rows share (at least ``side_min_folds`` per dataset), so that a row run on fewer folds or
datasets never shrinks the main comparison. With ``paper_reference``
(the folder of the paper's Tables 1 and 2 as CSV), each side report also sets the paper's reported scores on the
archive's split beside our fold 0.

Conventions, each decided here once (the statistics live in :mod:`eadct.tables.bakeoff._stats`):

* A published method is labelled ``"<Name> (published)"`` (:func:`published_label`), never a name we run.
* Fold by fold: a dataset's mean is taken over the folds that EVERY compared method has (``common_folds``);
  a dataset with fewer than ``min_folds`` such folds is dropped, and the report says which and why.
* Datasets are the unit of the statistics. Means are rounded to 12 significant digits before ranks, W/T/L
  and tests, so means equal up to float noise are ties. Ranks are ``scipy.stats.rankdata(method="average")``
  per dataset (rank 1 = best; tied methods share the mean of their places), averaged over datasets.
* Pairwise tests: two-sided ``scipy.stats.wilcoxon(zero_method="wilcox")`` over the datasets' paired differences
  (:mod:`eadct.tables._paired`: for RMSE the difference over the pair's mean, so that a set with errors in the
  hundreds does not outrank the rest; datasets where the two tie are dropped, as aeon does); all differences zero
  gives p = 1. Holm's step-down correction
  runs over all k(k-1)/2 pairs in the pairwise section, and over the k-1 comparisons with EA-DC in the
  "EA-DC against each peer" table (skipped when EA-DC is not compared).
* The critical-difference diagram is aeon's ``plot_critical_difference(test="wilcoxon", correction="holm")``.
  Its groups (cliques) are recomputed from the p-values it returns, exactly as aeon forms them (``cd_groups``):
  a Friedman gate, then ONE-sided Wilcoxon p-values against a fixed alpha/(k-1). That is aeon's procedure, not
  the Holm tables, so a pair can differ between them; all are reported.
* Score against fit time (the main and the side reports): a small point per method x dataset (mean fit time over
  its common folds, s, log x; mean score) and a large one per method (geometric-mean time, mean score).

Run ``python -m eadct.tables.bakeoff.report --summary S --published DIR --out O --task all``
(see ``--help``). No timestamps: a re-run on the same tables writes the same Markdown.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ._plots import plot_time
from ._results import SCORES, read_summary
from ._sections import (
    FOCAL,
    _cd_section,
    _covers,
    _fmt,
    _folds_section,
    _md_table,
    _means_section,
    _pairs_section,
    _peers_section,
    _ranks_section,
    _section,
    published_label,
)
from ._stats import (
    common_folds,
    geometric_mean_ms,
    pairwise,
    set_means,
)

PUBLISHED_DIRS = {"classification": "classification_multivariate", "regression": "regression"}
PUBLISHED_METHODS = {
    "classification": ("HC2", "ROCKET", "InceptionT"),
    "regression": ("FreshPRINCE", "DrCIF", "MultiROCKET", "InceptionT"),
}

#: Side comparisons, each in ``<task>_<name>.md``: its rows, FOCAL first. The rows other than FOCAL are left out of
#: the main comparison's default.
SIDE_COMPARISONS = {
    "architecture": (FOCAL, "DC-Transformer", "Transformer"),
    "paper": (FOCAL, "EA-DC-paper"),
}
SIDE_TITLES = {
    "architecture": "the defaults with each architecture (does evolving attention help?)",
    "paper": "the defaults and the paper's configuration (eadct.PAPER_CONFIGURATION)",
}
#: The paper's tables (Wang et al., TPAMI 2023, Tables 1 and 2) as CSV in the ``paper_reference`` folder, and the
#: paper's column for each of our rows.
PAPER_TABLES = {
    "classification": "paper_table2_classification_accuracy.csv",
    "regression": "paper_table1_regression_rmse.csv",
}
PAPER_COLUMNS = {
    "EA-DC-paper": "EA-DC-Transformer",
    "EA-DC": "EA-DC-Transformer",
    "DC-Transformer": "DC-Transformer",
    "Transformer": "Transformer",
}


def _score_measure(task: str) -> str:
    if task not in SCORES:
        raise ValueError(f"unknown task {task!r}; use one of {sorted(SCORES)} (or 'all' on the command line)")
    return SCORES[task]


def _higher_is_better(task: str) -> bool:
    return _score_measure(task) == "accuracy"


def _our_methods(summary, task: str, measure: str) -> list[str]:
    folder = Path(summary) / task / measure
    return sorted(p.name[: -len(f"_{measure}.csv")] for p in folder.glob(f"*_{measure}.csv"))


def _side_rows() -> set[str]:
    return {m for rows in SIDE_COMPARISONS.values() for m in rows if m != FOCAL}


def load_ours(summary, task, methods=None) -> dict[str, pd.DataFrame]:
    """Our score tables (datasets x folds) by method: ``methods=None`` takes every ``<Method>_<score>.csv`` under
    ``<summary>/<task>/<score>/`` but the rows of the side comparisons, sorted by name; otherwise those named, in
    that order."""
    measure = _score_measure(task)
    folder = Path(summary) / task / measure
    if methods is None:
        names = [m for m in _our_methods(summary, task, measure) if m not in _side_rows()]
    else:
        names = list(dict.fromkeys(methods))
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
    return tables


def load_published(published, task, datasets, published_methods=None) -> dict[str, pd.DataFrame]:
    """tsml-eval's published score tables by :func:`published_label`, restricted (reindexed) to ``datasets``;
    ``published_methods=None`` takes :data:`PUBLISHED_METHODS` of the task."""
    measure = _score_measure(task)
    names = PUBLISHED_METHODS[task] if published_methods is None else list(dict.fromkeys(published_methods))
    if not names:
        raise ValueError("published_methods is empty; name at least one, or leave it None for the defaults")
    tables = {}
    for name in names:
        path = Path(published) / PUBLISHED_DIRS[task] / f"{name}_{measure}.csv"
        if not path.is_file():
            raise ValueError(
                f"no published table {path}; pass the tsml-eval results folder as published, "
                "or name published_methods that exist there"
            )
        tables[published_label(name)] = read_summary(path).reindex(list(datasets))
    return tables


def _datasets_run(tables) -> list[str]:
    return sorted({d for t in tables.values() for d in t.index[t.notna().any(axis=1)]})


def load_scores(summary, task, methods=None, published=None, published_methods=None) -> dict[str, pd.DataFrame]:
    """:func:`load_ours`, then (``published`` given) :func:`load_published` on the datasets ours have run."""
    tables = load_ours(summary, task, methods)
    if published is None:
        return tables
    return tables | load_published(published, task, _datasets_run(tables), published_methods)


def load_times(summary, task, methods, measure="fittime") -> dict[str, pd.DataFrame]:
    """The ``fittime`` (or ``predicttime``) tables, in ms, of those of ``methods`` that have one."""
    _score_measure(task)
    folder = Path(summary) / task / measure
    paths = {m: folder / f"{m}_{measure}.csv" for m in methods}
    return {m: read_summary(p) for m, p in paths.items() if p.is_file()}


def _time_section(summary, task, tables, folds_by_set, means, measure, out_dir, stem) -> list[str]:
    lines = ["## Score against fit time", ""]
    fit = set_means(load_times(summary, task, list(tables)), folds_by_set)
    if fit.empty:
        return lines + ["No fit times: no method here has a `fittime` table.", ""]
    predict = set_means(load_times(summary, task, list(fit.columns), "predicttime"), folds_by_set)
    plot_time(means, fit, f"mean {measure} over common folds", Path(out_dir) / f"{stem}_time.png")
    text = "Small points: one per method x dataset; diamonds: geometric-mean fit time and mean score per method."
    lines += [f"![{measure} against fit time]({stem}_time.png)", "", text, ""]
    rows = [[m, *(f"{geometric_mean_ms(t, m):.4g}".replace("nan", "-") for t in (fit, predict))] for m in fit.columns]
    return lines + _md_table(["method", "fit ms (geometric mean)", "predict ms (geometric mean)"], rows)


def _comparison(tables, folds_by_set, dropped, min_folds, task, stem, out_dir) -> list[str]:
    """The sections both reports share, from the folds per dataset to the critical-difference diagram."""
    measure, higher = _score_measure(task), _higher_is_better(task)
    lines = _folds_section(tables, folds_by_set, dropped, min_folds)
    if not folds_by_set:
        return lines + ["Nothing to compare: no dataset has enough folds that every method has.", ""]
    means = set_means(tables, folds_by_set)
    lines += _means_section(means, folds_by_set, higher, measure)
    lines += _ranks_section(means, higher, measure)
    lines += _peers_section(means, higher, measure)
    lines += _pairs_section(pairwise(means, higher), list(means.columns), measure)
    return lines + _cd_section(means, higher, stem, out_dir)


def _default_command(
    summary,
    out_dir,
    task,
    published,
    min_folds,
    methods=None,
    published_methods=None,
    paper_reference=None,
    side_min_folds=None,
) -> str:
    args = ["python", "-m", "eadct.tables.bakeoff.report", "--summary", str(summary)]
    args += ["--published", str(published)] if published is not None else []
    args += ["--paper-reference", str(paper_reference)] if paper_reference is not None else []
    args += ["--out", str(out_dir), "--task", task, "--min-folds", str(min_folds)]
    args += ["--side-min-folds", str(side_min_folds)] if side_min_folds is not None else []
    args += ["--methods", *methods] if methods is not None else []
    args += ["--published-methods", *published_methods] if published_methods is not None else []
    return shlex.join(args)


def _header(title, command, link, covers) -> list[str]:
    return [f"# {title}", "", "Recompute with:", "", "```", command, "```", "", link, "", *covers]


def _published_link(task, ours_sets, pub_sets) -> str:
    if pub_sets is None:
        return "No comparison with published results in this run (pass `--published`)."
    missing = [d for d in ours_sets if d not in pub_sets]
    text = f"Against tsml-eval's published results: [{task}_published.md]({task}_published.md), on {len(pub_sets)}"
    text += f" of these {len(ours_sets)} datasets"
    return text + (f"; not there: {', '.join(missing)}." if missing else ".")


def write_report(
    summary,
    out_dir,
    task,
    published=None,
    min_folds=1,
    command=None,
    methods=None,
    published_methods=None,
    paper_reference=None,
    side_min_folds=None,
) -> list[Path]:
    """Write ``<out_dir>/<task>.md`` (our methods; with ``<task>_cd.png``, ``<task>_time.png``), when
    ``published`` is given ``<task>_published.md`` (with ``<task>_published_cd.png``), and the side comparisons
    whose tables exist (``<task>_<name>.md``, with the paper's reported scores when ``paper_reference`` is given;
    ``side_min_folds=None`` takes ``min_folds``); return their paths."""
    measure = _score_measure(task)
    if published is None and published_methods is not None:
        raise ValueError("published_methods names published tables; pass the tsml-eval folder as published too")
    ours = load_ours(summary, task, methods)
    folds_by_set, dropped = common_folds(ours, min_folds)
    if not folds_by_set:
        fix = "lower min_folds, run more folds, or compare fewer methods"
        raise ValueError(f"no dataset has {min_folds} fold(s) that every method has ({dropped}); {fix}")
    both = None
    if published is not None:
        both = ours | load_published(published, task, _datasets_run(ours), published_methods)
        both_folds, both_dropped = common_folds(both, min_folds)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    command = command or _default_command(
        summary, out_dir, task, published, min_folds, methods, published_methods, paper_reference, side_min_folds
    )
    link = _published_link(task, list(folds_by_set), None if both is None else list(both_folds))
    lines = _header(f"Bake-off report: {task} ({measure})", command, link, _covers(ours, folds_by_set, dropped))
    lines += _comparison(ours, folds_by_set, dropped, min_folds, task, task, out_dir)
    means = set_means(ours, folds_by_set)
    lines += _time_section(summary, task, ours, folds_by_set, means, measure, out_dir, task)
    side_min_folds = min_folds if side_min_folds is None else side_min_folds
    sides = _side_reports(summary, out_dir, task, side_min_folds, command, paper_reference)
    if sides:
        lines += _section("Side comparisons", "; ".join(f"[{p.name}]({p.name}): {SIDE_TITLES[n]}" for n, p in sides))
    paths = [out_dir / f"{task}.md"]
    paths[0].write_text("\n".join(lines).rstrip("\n") + "\n")
    if both is not None:
        link = f"Our methods alone, on every dataset they share: [{task}.md]({task}.md)."
        title = f"Bake-off report against published results: {task} ({measure})"
        lines = _header(title, command, link, _covers(both, both_folds, both_dropped))
        lines += _comparison(both, both_folds, both_dropped, min_folds, task, f"{task}_published", out_dir)
        paths.append(out_dir / f"{task}_published.md")
        paths[1].write_text("\n".join(lines).rstrip("\n") + "\n")
    return paths + [p for _, p in sides]


def load_paper(paper_reference, task) -> pd.DataFrame:
    """The paper's reported scores (datasets x the paper's model names) for ``task``, from its table in the
    ``paper_reference`` folder (:data:`PAPER_TABLES`)."""
    path = Path(paper_reference) / PAPER_TABLES[task]
    if not path.is_file():
        raise ValueError(f"no paper table {path}; pass the folder that holds {PAPER_TABLES[task]} as paper_reference")
    return pd.read_csv(path, index_col=0)


def _paper_section(paper, tables, measure) -> list[str]:
    """Our fold 0 (the archive's split, the paper's protocol) beside the paper's reported scores."""
    rows = [m for m in tables if PAPER_COLUMNS.get(m) in paper.columns]
    columns = list(dict.fromkeys(PAPER_COLUMNS[m] for m in rows))
    fold0 = {m: tables[m][0] if 0 in tables[m].columns else pd.Series(dtype=float) for m in rows}
    sets = sorted(d for d in paper.index if any(np.isfinite(fold0[m].get(d, np.nan)) for m in rows))
    text = (
        "The paper's reported test score on the archive's split (Wang et al., TPAMI 2023, "
        + ("Table 2" if measure == "accuracy" else "Table 1")
        + "; one run per set) beside our fold 0, which is that split. The paper's model for each row: "
        + ", ".join(f"{m}: {PAPER_COLUMNS[m]}" for m in rows)
        + ". Only the paper's sets with a fold 0 here are listed."
    )
    lines = _section("Against the paper's reported scores (fold 0)", text)
    if not sets:
        return lines + ["None of the paper's sets has a fold 0 here.", ""]
    cells = [
        [d, *(_fmt(float(paper.loc[d, c]), measure) for c in columns)]
        + [_fmt(float(fold0[m].get(d, np.nan)), measure) for m in rows]
        for d in sets
    ]
    header = ["dataset", *(f"paper: {c}" for c in columns), *(f"{m}, fold 0" for m in rows)]
    return lines + _md_table(header, cells)


def _side_reports(summary, out_dir, task, min_folds, command, paper_reference) -> list[tuple[str, Path]]:
    """Write each side comparison whose FOCAL table and at least one other row's table exist."""
    measure = _score_measure(task)
    found = set(_our_methods(summary, task, measure))
    written = []
    for name, rows in SIDE_COMPARISONS.items():
        rows = [m for m in rows if m in found]
        if FOCAL not in rows or len(rows) < 2:
            continue
        tables = load_ours(summary, task, rows)
        every = _datasets_run(tables)
        ran = [d for d in every if all(d in t.index and t.loc[d].notna().any() for t in tables.values())]
        not_run = [d for d in every if d not in ran]
        tables = {m: t.reindex(ran) for m, t in tables.items()}  # a set some row never ran is not compared here
        folds_by_set, dropped = common_folds(tables, min_folds)
        stem = f"{task}_{name}"
        link = f"The main comparison (the defaults and the peers): [{task}.md]({task}.md)."
        title = f"Bake-off side comparison: {SIDE_TITLES[name]}, {task} ({measure})"
        covers = _covers(tables, folds_by_set, dropped)
        if not_run:
            covers[0] += f" Not run by every row here, so not compared: {', '.join(not_run)}."
        lines = _header(title, command, link, covers)
        lines += _comparison(tables, folds_by_set, dropped, min_folds, task, stem, out_dir)
        if folds_by_set:
            means = set_means(tables, folds_by_set)
            lines += _time_section(summary, task, tables, folds_by_set, means, measure, out_dir, stem)
        if paper_reference is not None:
            lines += _paper_section(load_paper(paper_reference, task), tables, measure)
        path = Path(out_dir) / f"{stem}.md"
        path.write_text("\n".join(lines).rstrip("\n") + "\n")
        written.append((name, path))
    return written


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m eadct.tables.bakeoff.report", description=__doc__.splitlines()[0])
    parser.add_argument("--summary", required=True, help="folder of <task>/<measure>/<Method>_<measure>.csv")
    parser.add_argument("--published", default=None, help="tsml-eval's published results folder (optional)")
    parser.add_argument(
        "--out", required=True, help="folder for <task>.md, <task>_published.md, the side reports and their PNGs"
    )
    parser.add_argument(
        "--paper-reference", default=None, help="folder of the paper's tables as CSV (optional; for the side reports)"
    )
    parser.add_argument("--task", default="all", help="classification, regression or all")
    parser.add_argument("--min-folds", type=int, default=1, help="common folds a dataset needs (default 1)")
    parser.add_argument(
        "--side-min-folds", type=int, default=None, help="the same in the side reports (default: --min-folds)"
    )
    parser.add_argument(
        "--methods", nargs="+", default=None, help="which of ours (default: every table found but the side rows)"
    )
    parser.add_argument(
        "--published-methods", nargs="+", default=None, help="published tables to compare (default: per task)"
    )
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.task == "all":
        tasks = [t for t in SCORES if (Path(args.summary) / t / SCORES[t]).is_dir()]
        if not tasks:
            raise ValueError(f"no task folders under {args.summary}; run 'eadct-bakeoff collect' first")
    else:
        tasks = [args.task]
        _score_measure(args.task)
    picked = dict(
        methods=args.methods,
        published_methods=args.published_methods,
        paper_reference=args.paper_reference,
        side_min_folds=args.side_min_folds,
    )
    command = _default_command(args.summary, args.out, args.task, args.published, args.min_folds, **picked)
    for task in tasks:
        for path in write_report(args.summary, args.out, task, args.published, args.min_folds, command, **picked):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
