"""Sensitivity sweeps (the paper's Fig. 9b): a table whose rows are the points of a grid over hyperparameters.

A ``[grid]`` section generates one row per point of the product of its value lists, named
``"alpha=0.5 beta=0.3 attention_ratio=0.25"``; ``architecture`` and ``params`` set the rest::

    [grid]
    architecture = "ea-dc-transformer"
    alpha = [0.1, 0.5, 0.9]
    beta = [0.1, 0.3, 0.7]
    attention_ratio = [0.25, 0.5, 0.75]

The report gives each point's test score and its validation score (the fit's own held-out split of TRAIN at
the chosen epoch), the point that selection on TRAIN alone picks (best mean validation score) beside the best
test point, and the figure of :func:`eadct.plotting.plot_sensitivity` (test score against each parameter,
mean and min-max over the other settings).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

_NOT_SWEPT = ("architecture", "params")


def grid_models(grid: dict | None, where: str) -> tuple[dict, tuple]:
    """``([models.<name>] entries, swept parameter names)`` of a ``[grid]`` section (empty without one)."""
    if not grid:
        return {}, ()
    names = tuple(k for k in grid if k not in _NOT_SWEPT)
    if not names or any(not isinstance(grid[k], list) or not grid[k] for k in names):
        raise ValueError(f"{where}: [grid] needs at least one parameter with a non-empty list of values.")
    models = {}
    for values in itertools.product(*(grid[k] for k in names)):
        point = dict(zip(names, values, strict=True))
        name = " ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in point.items())
        models[name] = {
            "architecture": grid.get("architecture", "ea-dc-transformer"),
            "params": {**grid.get("params", {}), **point},
        }
    return models, names


def _points(table, results: dict, dataset: str) -> list[dict]:
    """Per grid point that has results: its parameters, mean test and validation scores, seeds."""
    points = []
    for model in table.models:
        runs = results.get((model, dataset), [])
        if not runs:
            continue
        spec = table.models[model].params
        valid = [r["valid_score"] for r in runs if r.get("valid_score") is not None]
        tests = [r["value"] for r in runs]
        points.append(
            {
                **{p: spec[p] for p in table.sensitivity},
                "model": model,
                "test": float(np.mean(tests)),
                "test_std": float(np.std(tests, ddof=1)) if len(tests) > 1 else None,
                "n": len(runs),
                "valid": float(np.mean(valid)) if valid else None,
            }
        )
    return points


def report_lines(table, results: dict, dataset: str) -> list[str]:
    """The Markdown section of the sweep on ``dataset``."""
    points = _points(table, results, dataset)
    if not points:
        return []
    names = list(table.sensitivity)
    lines = [
        f"## Sensitivity on {dataset}: {', '.join(names)}",
        "",
        f"{len(points)} of {len(table.models)} grid points have results. Validation = the fit's own held-out "
        "split of TRAIN at the chosen epoch (accuracy; minus the loss for regression); test = TEST score, mean "
        "+- std over seeds.",
        "",
        "| " + " | ".join(names) + " | validation (TRAIN) | test | seeds |",
        "|" + "---|" * (len(names) + 3),
    ]
    for p in sorted(points, key=lambda q: [q[n] for n in names]):
        std = "" if p["test_std"] is None else f" +- {p['test_std']:.3f}"
        valid = "n/a" if p["valid"] is None else f"{p['valid']:.3f}"
        lines.append("| " + " | ".join(f"{p[n]:g}" for n in names) + f" | {valid} | {p['test']:.3f}{std} | {p['n']} |")
    scored = [p for p in points if p["valid"] is not None]
    best_test = max(points, key=lambda q: q["test"])
    lines.append("")
    if scored:
        chosen = max(scored, key=lambda q: q["valid"])
        lines.append(
            f"Selection on TRAIN only (best validation score) picks **{chosen['model']}**: test {chosen['test']:.3f}. "
            f"The best test point, which no honest selection can see, is {best_test['model']}: {best_test['test']:.3f}."
        )
    return lines + [""]


def figure(table, results: dict, dataset: str, path: Path) -> bool:
    """Fig. 9b from the sweep: the test score against each swept parameter."""
    from ..plotting import plot_sensitivity

    points = _points(table, results, dataset)
    if not points:
        return False
    frame = {n: [p[n] for p in points] for n in table.sensitivity}
    frame["test score"] = [p["test"] for p in points]
    fig = plot_sensitivity(frame, params=table.sensitivity, score="test score")
    fig.suptitle(f"{dataset}: test score against each parameter (mean and min-max over the others)", fontsize=9)
    fig.savefig(path, dpi=90)
    return True
