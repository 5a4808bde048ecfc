"""The report of a table: the paper's layout with our mean +- std over seeds beside the published value,
average rank, the paper's average relative difference (Eq. 12), parameter counts, targets, and a figure.

Cells of units that have not run (a dataset not on disk, a sweep not finished) read "missing", never zero;
the summary rows use only the datasets where every model that ran has a result (a row with no result at
all reads "not run" there instead of emptying the summary).
"""

from __future__ import annotations

import csv
import json
import re
from importlib import resources
from pathlib import Path

import numpy as np

from . import _hyperparameters as hyperparameters
from . import _sensitivity as sensitivity
from ._config import TableConfig
from ._figures import draw_figures
from ._paired import paired_lines
from ._paired import ranks as ranks_of
from ._representations import report_lines
from ._store import unit_dir

PUBLISHED_PACKAGE = "eadct.tables.published"


def read_published(filename: str | None) -> dict:
    """``{dataset: {column: float}}`` from a shipped CSV (empty cells left out)."""
    if not filename:
        return {}
    text = (resources.files(PUBLISHED_PACKAGE) / filename).read_text()
    out = {}
    for row in csv.DictReader(text.splitlines()):
        name = row.pop("dataset")
        out[name] = {k: float(v) for k, v in row.items() if k != "task" and v not in ("", None)}
    return out


def collect_results(table: TableConfig, profile: str, out_dir) -> dict:
    """``{(model, dataset): [result dicts, by seed]}`` of the profile's seeds that have finished."""
    seeds = table.profile(profile).seeds
    out = {}
    for dataset in table.datasets:
        for model in table.models:
            folder = unit_dir(out_dir, table, model, dataset, profile)
            found = []
            for s in seeds:
                path = folder / f"seed{s}.json"
                if path.is_file():
                    found.append(json.loads(path.read_text()))
            if found:
                out[(model, dataset)] = found
    return out


def summary(matrix: dict, models: list[str], datasets: list[str], higher_is_better: bool) -> dict:
    """Average rank and Eq. 12 average relative difference of each model over ``datasets``."""
    if not datasets:
        return {}
    ranks = {m: [] for m in models}
    rel = {m: [] for m in models}
    for d in datasets:
        vals = [matrix[(m, d)] for m in models]
        for m, r in zip(models, ranks_of(vals, higher_is_better), strict=True):
            ranks[m].append(r)
        mean = float(np.mean(vals))
        for m, v in zip(models, vals, strict=True):
            rel[m].append((v - mean) / mean if mean else float("nan"))
    return {
        m: {
            "rank": float(np.mean(ranks[m])),
            "reldiff": float(np.mean(rel[m])),
            "mean": float(np.mean([matrix[(m, d)] for d in datasets])),
        }
        for m in models
    }


def _decimals(v: float, metric: str) -> int:
    if metric == "accuracy":
        return 3
    if v == 0 or not np.isfinite(v):
        return 3
    return int(max(0, 3 - np.floor(np.log10(abs(v)))))  # 4 significant digits


def _fmt(v: float, metric: str, decimals: int | None = None) -> str:
    return f"{v:.{_decimals(v, metric) if decimals is None else decimals}f}"


def _summary_cell(v: float, key: str, metric: str) -> str:
    if key == "rank":
        return f"{v:.2f}"
    if key == "reldiff":
        return f"{100 * v:+.1f}%"
    return _fmt(v, metric)


def _fmt_pair(mean: float, std: float, metric: str) -> str:
    """``mean +- std``, the std with the mean's decimals."""
    d = _decimals(mean, metric)
    return f"{_fmt(mean, metric, d)} +- {_fmt(std, metric, d)}"


def _target_lines(table, stats, published, task_of) -> list[str]:
    lines = []
    for t in table.targets:
        model = t["model"]
        for dataset in table.datasets:
            if (model, dataset) not in stats:
                continue
            hib = task_of[dataset] == "classification"
            ours = stats[(model, dataset)]["mean"]
            if t["kind"] == "at_least_published":
                pub = published.get(dataset, {}).get(model)
                if pub is None:
                    continue
                met = ours >= pub if hib else ours <= pub
                metric = stats[(model, dataset)]["metric"]
                lines.append(
                    f"| {model} at least as good as published | {dataset} | {_fmt(ours, metric)} "
                    f"vs paper {_fmt(pub, metric)} | {'met' if met else '**not met**'} |"
                )
            else:
                for other in t["others"]:
                    if (other, dataset) not in stats:
                        continue
                    theirs = stats[(other, dataset)]["mean"]
                    met = ours > theirs if hib else ours < theirs
                    metric = stats[(model, dataset)]["metric"]
                    spread = max(stats[(model, dataset)]["std"], stats[(other, dataset)]["std"])
                    noise = " (difference within the seeds' std)" if abs(ours - theirs) <= spread else ""
                    lines.append(
                        f"| {model} better than our {other} | {dataset} | {_fmt(ours, metric)} vs "
                        f"{_fmt(theirs, metric)} | {'met' if met else '**not met**'}{noise} |"
                    )
    return lines


class ReportNotReplaced(ValueError):
    """An existing report holds more unit results than the results folder gives now (``force=True`` replaces)."""


#: The line of a report that counts its unit results (read back so a later report never holds fewer).
_UNITS_LINE = "Results: {n} unit(s)."
_UNITS_PATTERN = re.compile(r"^Results: (\d+) unit\(s\)\.", re.MULTILINE)


def _check_replace(md_path: Path, n_units: int, where: str, force: bool) -> None:
    if force:
        return
    if n_units == 0:
        raise ReportNotReplaced(
            f"{where} holds no results: nothing to report. Check --out and --profile (the folder the runs wrote), "
            "or pass --force to write a report of missing cells."
        )
    if not md_path.is_file():
        return
    found = _UNITS_PATTERN.search(md_path.read_text())
    previous = int(found.group(1)) if found else None
    if previous is not None and n_units < previous:
        raise ReportNotReplaced(
            f"{md_path} holds {previous} unit result(s) but {where} gives "
            f"{n_units}: not replaced. Check --out and --profile, or pass --force to replace it."
        )


def build_report(
    table: TableConfig,
    profile: str,
    out_dir,
    report_dir,
    note: str | None = None,
    figure: bool = True,
    force: bool = False,
):
    """Write ``<report_dir>/<table>_<profile>.md`` (and figures); returns the paths written.

    No results at all, or fewer than an existing report holds, is :class:`ReportNotReplaced` (nothing is
    written) unless ``force``. Without matplotlib the Markdown is written and a warning names the ``plots`` extra.
    """
    prof = table.profile(profile)
    results = collect_results(table, profile, out_dir)
    n_units = sum(len(runs) for runs in results.values())
    report_dir = Path(report_dir)
    md_path = report_dir / f"{table.name}_{profile}.md"
    _check_replace(md_path, n_units, f"{out_dir} ({table.name}, profile {profile})", force)
    published = read_published(table.published)
    stats, task_of = _statistics(table, results)
    report_dir.mkdir(parents=True, exist_ok=True)
    md = _opening_lines(table, profile, note, n_units) + _provenance_lines(results)
    for task in ("classification", "regression"):
        datasets = [d for d in table.datasets if task_of[d] == task]
        if datasets:
            md += _task_section(table, prof, task, datasets, stats, published)
            if task == "classification":
                md += _log_loss_lines(table, datasets, stats, results)
            if table.compare:
                md += [
                    f"Paired comparisons ({'accuracy' if task == 'classification' else 'relative RMSE'}; "
                    "tables.md, section The report):",
                    "",
                ]
                md += paired_lines(list(table.models), list(table.compare), results, datasets, task) + [""]
    if table.representations:
        md += report_lines(table, results, [d for d in table.datasets if task_of[d] == "classification"])
    for dataset in table.datasets if table.sensitivity else ():
        md += sensitivity.report_lines(table, results, dataset)
    lines = _target_lines(table, stats, published, task_of)
    if lines:
        header = ["## Targets", "", "| target | dataset | measured (mean over seeds) | status |", "|---|---|---|---|"]
        md += header + lines + [""]
    md += hyperparameters.report_lines(results)
    paths = [md_path]
    if figure and stats:
        links, pngs = draw_figures(table, profile, out_dir, results, stats, published, task_of, report_dir)
        md[2:2] = links
        paths += pngs
    md_path.write_text("\n".join(md) + "\n")
    return paths


def _opening_lines(table: TableConfig, profile: str, note: str | None, n_units: int) -> list[str]:
    """The title (the figures' links go right below it), the caller's note, how to read a cell, and the count of
    unit results that :func:`_check_replace` reads back."""
    prof = table.profile(profile)
    md = [f"# {table.title} ({profile} profile)", ""]
    if note:
        md += [note.strip(), ""]
    return md + [
        f"Profile `{profile}`: {prof.description}. Seeds {list(prof.seeds)}; cells are our test score, mean +- "
        "sample std over the seeds that finished (their number in brackets when fewer; one seed has no std), "
        "with the published value in parentheses. `missing` = not run here (dataset not on disk, or the sweep "
        "did not reach it).",
        "",
        _UNITS_LINE.format(n=n_units),
        "",
    ]


def _statistics(table: TableConfig, results: dict) -> tuple[dict, dict]:
    """Per (model, dataset): mean, std and count of the scores, parameters, times; and each dataset's task."""
    stats, task_of = {}, {}
    for (model, dataset), runs in results.items():
        vals = np.array([r["value"] for r in runs], dtype=float)
        stats[(model, dataset)] = {
            "mean": float(vals.mean()),
            "std": float(vals.std(ddof=1)) if len(vals) > 1 else 0.0,
            "n": len(vals),
            "metric": runs[0]["metric"],
            "params": float(np.median([r["n_parameters"] for r in runs])),
            "fit_s": float(np.mean([r["fit_s"] for r in runs])),
            "search_s": float(runs[0].get("search_s", 0.0)),
            "hyper": runs[0]["hyperparameters"],
        }
        losses = [r.get("log_loss") for r in runs]
        if all(v is not None for v in losses):  # units before the log-loss was recorded have none
            stats[(model, dataset)]["log_loss"] = (
                float(np.mean(losses)),
                float(np.std(losses, ddof=1)) if len(losses) > 1 else 0.0,
            )
        task_of[dataset] = runs[0]["task"]
    for dataset in table.datasets:  # datasets with no result: the task from the registry
        if dataset not in task_of:
            from ..datasets import get_info

            info = get_info(dataset)
            task_of[dataset] = info.task if info is not None else "classification"
    return stats, task_of


def _provenance_lines(results: dict) -> list[str]:
    """The hardware and code lines: every machine and commit that produced a result."""
    runs = [r for rs in results.values() for r in rs]
    if not runs:
        return []
    machines = sorted(
        {
            (r["machine"]["cpu"], r["machine"].get("gpu") or r["machine"]["device"], r["machine"]["torch_threads"])
            for r in runs
        }
    )
    commits = sorted(
        {(r["git"]["commit"] or "unknown")[:10] + ("+dirty" if r["git"].get("dirty") else "") for r in runs}
    )
    versions = ", ".join(f"{k} {v}" for k, v in runs[0]["versions"].items() if v)
    return [
        "Hardware: " + "; ".join(f"{cpu}, device {dev}, {th} torch thread(s)" for cpu, dev, th in machines) + ".",
        f"Code: git {', '.join(commits)}; " + versions + ".",
        "",
    ]


def _task_section(table: TableConfig, prof, task: str, datasets: list, stats: dict, published: dict) -> list[str]:
    """One task's score table with its summary rows, then its parameters and times."""
    models = list(table.models)
    metric = "accuracy" if task == "classification" else "rmse"
    hib = task == "classification"
    ref_columns = sorted({c for row in published.values() for c in row if c not in table.models})
    refs = [c for c in ref_columns if any(c in published.get(d, {}) for d in datasets)]
    header = ["dataset"] + models + [f"ref: {c}" for c in refs]
    md = [f"## {'Accuracy (higher is better)' if hib else 'RMSE (lower is better)'}", ""]
    md += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for d in datasets:
        row = [d] + [_score_cell(stats.get((m, d)), published.get(d, {}).get(m), metric, prof) for m in models]
        for c in refs:
            v = published.get(d, {}).get(c)
            row.append(_fmt(v, metric) if v is not None else "")
        md.append("| " + " | ".join(row) + " |")
    md += _summary_lines(models, datasets, stats, published, metric, tail=" |" * len(refs))
    md += _parameter_lines(table, models, datasets, stats)
    return md


def _log_loss_lines(table: TableConfig, datasets: list, stats: dict, results: dict) -> list[str]:
    """The TEST log-loss of each model and dataset whose units all recorded it (EA-DC's classification units since
    2026-11-29; MiniRocket's ridge gives no probabilities), `-` where some did not; a model with none on these
    datasets is left out, and there is no table where no model has one. Then the paired comparisons of the
    table's ``compare`` rows on it, relative as RMSE's (lower is better)."""
    shown = [m for m in table.models if any("log_loss" in stats.get((m, d), {}) for d in datasets)]
    if not shown:
        return []
    md = [
        "TEST log-loss (lower is better: the probabilities' calibration, which accuracy does not see), mean +- "
        "sample std over the seeds; `-` where a unit did not record it:",
        "",
        "| dataset | " + " | ".join(shown) + " |",
        "|" + "---|" * (len(shown) + 1),
    ]
    for d in datasets:
        cells = []
        for m in shown:
            loss = stats.get((m, d), {}).get("log_loss")
            cells.append("-" if loss is None else f"{loss[0]:.4f} +- {loss[1]:.4f}")
        md.append(f"| {d} | " + " | ".join(cells) + " |")
    compared = [m for m in table.compare if m in shown]
    if not compared or len(shown) < 2:
        return md + [""]
    losses = {
        key: [{**r, "value": r["log_loss"]} for r in runs]
        for key, runs in results.items()
        if key[0] in shown and "log_loss" in stats.get(key, {})
    }
    md += ["", "Paired comparisons of the TEST log-loss (relative differences and ratios, as for RMSE):", ""]
    return md + paired_lines(shown, compared, losses, datasets, "regression") + [""]


def _score_cell(s: dict | None, pub, metric: str, prof) -> str:
    pub_s = f" ({_fmt(pub, metric)})" if pub is not None else ""
    if s is None:
        return f"missing{pub_s}"
    k = f" [{s['n']}]" if s["n"] < len(prof.seeds) else ""
    cell = _fmt_pair(s["mean"], s["std"], metric) if s["n"] > 1 else _fmt(s["mean"], metric)
    return f"{cell}{k}{pub_s}"


def _summary_lines(models, datasets, stats, published, metric: str, tail: str) -> list[str]:
    """Average rank, score and relative difference (Eq. 12) over the datasets every ranked model has."""
    hib = metric == "accuracy"
    # A model with no result at all in this block (a row not run) would empty the summary; rank the others.
    ranked = [m for m in models if any((m, d) in stats for d in datasets)]
    unranked = [m for m in models if m not in ranked]
    complete = [d for d in datasets if ranked and all((m, d) in stats for m in ranked)]
    ours = summary({k: v["mean"] for k, v in stats.items()}, ranked, complete, hib)
    pub_complete = [d for d in complete if all(m in published.get(d, {}) for m in ranked)]
    paper = summary({(m, d): published[d][m] for d in pub_complete for m in ranked}, ranked, pub_complete, hib)
    md = []
    labels = (
        ("**avg rank** (ours; paper on the same sets)", "rank"),
        (f"**avg {metric}**", "mean"),
        ("**avg relative difference, Eq. 12**", "reldiff"),
    )
    for label, key in labels if ours else ():
        row = [label]
        for m in models:
            if m not in ranked:
                row.append("not run")
                continue
            pub_s = f" ({_summary_cell(paper[m][key], key, metric)})" if paper else ""
            row.append(_summary_cell(ours[m][key], key, metric) + pub_s)
        md.append("| " + " | ".join(row) + " |" + tail)
    return md + [
        "",
        f"Summary rows over the {len(complete)} dataset(s) where every model"
        + (f" except {', '.join(unranked)} (no result at all)" if unranked else "")
        + " has a result"
        + (f": {', '.join(complete)}." if complete else ".")
        + " Eq. 12: r_j = mean over datasets of (score_ij - mean_k score_ik) / mean_k score_ik.",
        "",
    ]


def _parameter_lines(table: TableConfig, models, datasets, stats) -> list[str]:
    pub_params = read_published(table.published_params)
    md = ["Parameters (ours, median over seeds; paper in parentheses, millions) and mean fit time per seed:", ""]
    md += ["| dataset | " + " | ".join(models) + " |", "|" + "---|" * (len(models) + 1)]
    for d in datasets:
        row = [d]
        for m in models:
            s = stats.get((m, d))
            pp = pub_params.get(d, {}).get(m)
            pp_s = f" ({pp:.1f} M)" if pp is not None else ""
            row.append("missing" + pp_s if s is None else f"{s['params'] / 1e6:.2f} M{pp_s}, {s['fit_s']:.0f} s")
        md.append("| " + " | ".join(row) + " |")
    return md + [""]
