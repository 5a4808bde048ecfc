"""The representations of a table's fits: AvgWCD (paper Eq. 13) of the TEST representations, and Fig. 4.

A table with ``representations = true`` in its ``[table]`` section records, for each classification unit of
an eadct model, ``transform(X_test)`` (the fitted representation, the task head's input) in
``seed<k>.repr.npz`` beside the unit's result, with the TEST labels, and its AvgWCD, raw and normalised
(:func:`eadct.metrics.average_within_class_distance`), in the result's ``"representation"`` entry. A unit
that another table finished without them (the same fit, shared) counts as not done for this table and is
refitted once to add them; the fit is seeded, so its score is the same up to floating-point summation order.

The report compares the normalised AvgWCD, which is scale-free (the raw value grows with the width and norm of
the representation), and draws a t-SNE panel per model for the dataset named by ``tsne``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..metrics import average_within_class_distance
from ._paired import paired_lines

SUFFIX = ".repr.npz"


def wanted(table, model: str, task: str) -> bool:
    """Whether a unit of ``model`` on a dataset of ``task`` records its representation."""
    return bool(table.representations) and table.models[model].kind == "eadct" and task == "classification"


def unit_done(table, model: str, path: Path) -> bool:
    """A unit is done when its result exists and, where the table asks, holds the representation."""
    if not path.is_file():
        return False
    if not table.representations or table.models[model].kind != "eadct":
        return True
    try:
        result = json.loads(path.read_text())
    except json.JSONDecodeError:
        return False
    return result.get("task") != "classification" or "representation" in result


def record(estimator, X_test, y_test, path: Path) -> dict:
    """Save the TEST representations beside the result ``path``; returns the result's entry."""
    Z = np.asarray(estimator.transform(X_test), dtype=np.float32)
    y = np.asarray(y_test).astype(str)
    file = path.with_name(path.stem + SUFFIX)
    np.savez_compressed(file, Z=Z, y=y)
    return {
        "avgwcd": average_within_class_distance(Z, y),
        "avgwcd_normalized": average_within_class_distance(Z, y, normalize=True),
        "width": int(Z.shape[1]),
        "file": file.name,
    }


def _normalized(results: dict) -> dict:
    """``results`` with each run's ``value`` replaced by its normalised AvgWCD (runs without one dropped)."""
    out = {}
    for key, runs in results.items():
        kept = [{**r, "value": r["representation"]["avgwcd_normalized"]} for r in runs if "representation" in r]
        if kept:
            out[key] = kept
    return out


def report_lines(table, results: dict, datasets: list) -> list[str]:
    """The Markdown section: normalised AvgWCD per dataset and model, its average, the paired comparisons."""
    wcd = _normalized(results)
    models = [m for m in table.models if any((m, d) in wcd for d in datasets)]
    if not models:
        return []
    lines = [
        "## Representations: AvgWCD (Eq. 13) of the TEST representations",
        "",
        "The AvgWCD of `transform(X_test)` (the representation the task head reads), normalised by the mean "
        "distance to the centre of all TEST representations: scale-free, 1 = no grouping by class, lower is "
        "better (docs/inspect.md). Mean +- std over seeds (their number in brackets when fewer than the profile's).",
        "",
        "| dataset | " + " | ".join(models) + " |",
        "|---|" + "---|" * len(models),
    ]
    complete = [d for d in datasets if all((m, d) in wcd for m in models)]
    for d in datasets:
        cells = []
        for m in models:
            values = [r["value"] for r in wcd.get((m, d), [])]
            cells.append(_cell(values))
        lines.append(f"| {d} | " + " | ".join(cells) + " |")
    if complete:
        means = {m: np.mean([_mean(wcd, m, d) for d in complete]) for m in models}
        lines.append(f"| **average over {len(complete)} sets** | " + " | ".join(f"{means[m]:.3f}" for m in models))
    lines += [""] + _claim_lines(table, wcd, models, complete)
    return lines


def _mean(wcd: dict, model: str, dataset: str) -> float:
    """The mean normalised AvgWCD of ``model`` on ``dataset`` over its seeds."""
    return float(np.mean([r["value"] for r in wcd[(model, dataset)]]))


def _cell(values: list) -> str:
    if not values:
        return "missing"
    if len(values) == 1:
        return f"{values[0]:.3f} (1)"
    return f"{np.mean(values):.3f} +- {np.std(values, ddof=1):.3f}"


def _claim_lines(table, wcd: dict, models: list, complete: list) -> list[str]:
    """The paper's claim (EA-DC 36% below the Transformer, 14% below DC-Transformer) against ours."""
    if not table.compare or not complete:
        return []
    lines = [
        "Relative difference, mean over the sets of (peer - model) / peer: positive = the model's classes are "
        "tighter. The paper reports EA-DC-Transformer 36.18% better than the Transformer and 14.2% better than "
        "the DC-Transformer (average over three sets, Eq. 13).",
        "",
        "| model | peer | mean relative difference |",
        "|---|---|---|",
    ]
    for model in table.compare:
        for peer in (m for m in models if m != model):
            diffs = [(_mean(wcd, peer, d) - _mean(wcd, model, d)) / _mean(wcd, peer, d) for d in complete]
            lines.append(f"| {model} | {peer} | {100 * np.mean(diffs):+.1f}% |")
    lines += ["", "Paired comparisons of the normalised AvgWCD (relative differences, lower is better):", ""]
    lines += paired_lines(models, list(table.compare), wcd, complete, "regression")
    return lines + [""]


def figure(table, results: dict, unit_folder, path: Path) -> bool:
    """Fig. 4: t-SNE of the TEST representations of each model on ``table.tsne`` (first finished seed)."""
    from ..plotting import plot_representations

    panels, titles, y = [], [], None
    for model in table.models:
        runs = [r for r in results.get((model, table.tsne), []) if "representation" in r]
        if not runs:
            continue
        run = min(runs, key=lambda r: r["seed"])
        stored = np.load(Path(unit_folder(model, table.tsne)) / run["representation"]["file"])
        panels.append(stored["Z"])
        titles.append(f"{model}, seed {run['seed']}")
        y = stored["y"]
    if not panels:
        return False
    fig = plot_representations(panels, y=y, method="tsne", titles=titles)
    fig.suptitle(f"t-SNE of the TEST representations, {table.tsne}", fontsize=9)
    fig.savefig(path, dpi=90)
    return True


def avgwcd_figure(table, results: dict, datasets: list, path: Path) -> bool:
    """The normalised AvgWCD per dataset and model (mean +- std over seeds), and its average over the sets
    where every model has it: the report's Eq. 13 table as a picture (lower is better)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    wcd = _normalized(results)
    models = [m for m in table.models if any((m, d) in wcd for d in datasets)]
    shown = [d for d in datasets if any((m, d) in wcd for m in models)]
    if not shown:
        return False
    complete = [d for d in shown if all((m, d) in wcd for m in models)]
    labels = shown + ([f"average ({len(complete)} sets)"] if complete else [])
    fig, ax = plt.subplots(figsize=(max(6.0, 0.75 * len(labels) + 2.0), 3.6))
    width = 0.7 / max(1, len(models))
    for i, m in enumerate(models):
        x, mean, std = [], [], []
        for k, d in enumerate(shown):
            values = [r["value"] for r in wcd.get((m, d), [])]
            if values:
                x.append(k)
                mean.append(np.mean(values))
                std.append(np.std(values, ddof=1) if len(values) > 1 else 0.0)
        if complete:
            x.append(len(shown))
            mean.append(np.mean([_mean(wcd, m, d) for d in complete]))
            std.append(0.0)
        offset = (i - (len(models) - 1) / 2) * width
        ax.errorbar(np.asarray(x) + offset, mean, yerr=std, fmt="o", ms=4, capsize=2, label=m)
    if complete:
        ax.axvline(len(shown) - 0.5, color="grey", lw=0.8)
    ax.set_xticks(np.arange(len(labels)))
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("normalised AvgWCD (lower = tighter classes)", fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, frameon=False)
    ax.set_title("AvgWCD (Eq. 13) of the TEST representations, mean +- std over seeds", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True
