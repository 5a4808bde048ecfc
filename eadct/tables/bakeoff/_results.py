"""Results in tsml-eval's formats: one predictions file per unit, one ``<method>_<measure>.csv`` per method.

A unit's file is ``<out>/<task>/<method>/Predictions/<dataset>/testResample<fold>.csv`` as tsml-eval writes it
(line 1: dataset, method, ``TEST``, fold, ``MILLISECONDS``, a comment with the label encoding; line 2: the
method's settings; line 3: the score (accuracy, or MSE for regression), fit and predict milliseconds, then -1 for
what is not measured; then one line per TEST case: true and predicted value (class indices), and for
classification ``,`` and the class probabilities). It is written whole or not at all, so a killed run leaves no
half unit and a rerun skips the units done.

:func:`collect` writes, per task, ``<summary>/<task>/<measure>/<method>_<measure>.csv`` (first row
``folds:,0,1,...``, then one row per dataset; a fold not run is empty): the layout that
``aeon.benchmarking.results_loaders.get_estimator_results(path=<summary>, task=..., measure=...)`` reads and
that the published tsml-eval results in the same format use. The measures are ``accuracy`` (classification) or
``rmse`` (regression), ``fittime`` and ``predicttime`` (milliseconds).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from .._store import atomic_write_bytes

SCORES = {"classification": "accuracy", "regression": "rmse"}
MEASURES = {task: (score, "fittime", "predicttime") for task, score in SCORES.items()}
_FILE = re.compile(r"testResample(\d+)\.csv")


def predictions_path(out, task: str, method: str, dataset: str, fold: int) -> Path:
    return Path(out) / task / method / "Predictions" / dataset / f"testResample{fold}.csv"


def write_predictions(
    path,
    *,
    dataset,
    method,
    fold,
    task,
    y_true,
    y_pred,
    fit_ms,
    predict_ms,
    settings="",
    comment="",
    proba=None,
    classes=None,
) -> float:
    """Write one unit's tsml-eval predictions file (atomically) and return its score (accuracy or RMSE)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    kind = "PREDICTIONS," if task == "classification" else ""  # as tsml-eval's own files of each task
    head = [f"{dataset},{method},TEST,{fold},MILLISECONDS,{kind}{_one_line(comment)}", _one_line(settings)]
    if task == "classification":
        labels = list(classes)
        code = {label: i for i, label in enumerate(labels)}
        head[0] += f" Encoder dictionary: { {str(label): i for label, i in code.items()} }"
        score = float(np.mean(y_true == y_pred))
        head.append(f"{score},{round(fit_ms)},{round(predict_ms)},-1,-1,{len(labels)},,-1,-1")
        p = np.zeros((len(y_true), len(labels))) if proba is None else np.asarray(proba, dtype=float)
        rows = [
            f"{code[t]},{code[q]},," + ",".join(repr(float(v)) for v in p[i])
            for i, (t, q) in enumerate(zip(y_true, y_pred, strict=True))
        ]
    else:
        err = y_pred.astype(float) - y_true.astype(float)
        score = float(np.sqrt(np.mean(err**2)))
        head.append(f"{float(np.mean(err**2))},{round(fit_ms)},{round(predict_ms)},-1,-1,,-1,-1")
        rows = [f"{float(t)!r},{float(q)!r}" for t, q in zip(y_true, y_pred, strict=True)]
    atomic_write_bytes(Path(path), ("\n".join(head + rows) + "\n").encode())
    return score


def _one_line(text) -> str:
    return " ".join(str(text).split())


def read_predictions(path, task: str) -> dict:
    """``{"score", "fit_ms", "predict_ms"}`` of one predictions file of ``task``; the score is recomputed from its
    cases. A ValueError names a file that is not one."""
    try:
        lines = Path(path).read_text().splitlines()
        third = lines[2].split(",")
        cases = [line.split(",") for line in lines[3:] if line]
        true = np.array([c[0] for c in cases])
        pred = np.array([c[1] for c in cases])
        if task == "classification":
            score = float(np.mean(true == pred))
        else:
            score = float(np.sqrt(np.mean((pred.astype(float) - true.astype(float)) ** 2)))
        out = {"score": score, "fit_ms": float(third[1]), "predict_ms": float(third[2])}
    except (IndexError, ValueError) as err:
        raise ValueError(f"{path} is not a tsml-eval predictions file ({err}); move it out of the folder") from None
    if not cases:
        raise ValueError(f"{path} has no cases; move it out of the folder")
    return out


def collect(out, summary, tasks=("classification", "regression")) -> list[Path]:
    """Write the summary tables of every method with predictions files under ``out``; return their paths."""
    written = []
    for task in tasks:
        for method_dir in sorted(p for p in (Path(out) / task).glob("*") if (p / "Predictions").is_dir()):
            cells = {}
            for f in (method_dir / "Predictions").glob("*/testResample*.csv"):
                fold = int(_FILE.fullmatch(f.name).group(1))
                r = read_predictions(f, task)
                cells[(f.parent.name, fold)] = (r["score"], r["fit_ms"], r["predict_ms"])
            if not cells:
                continue
            for i, measure in enumerate(MEASURES[task]):
                table = _table({k: v[i] for k, v in cells.items()})
                path = Path(summary) / task / measure / f"{method_dir.name}_{measure}.csv"
                write_summary(path, table)
                written.append(path)
    return written


def _table(cells: dict) -> pd.DataFrame:
    datasets = sorted({d for d, _ in cells})
    folds = range(max(f for _, f in cells) + 1)
    return pd.DataFrame(
        [[cells.get((d, f), np.nan) for f in folds] for d in datasets], index=datasets, columns=list(folds)
    )


def write_summary(path, table: pd.DataFrame) -> None:
    """One ``<method>_<measure>.csv``: ``folds:,0,1,...`` then a row per dataset (empty where not run)."""
    lines = ["folds:," + ",".join(str(c) for c in table.columns)]
    for name, row in table.iterrows():
        lines.append(",".join([str(name), *("" if np.isnan(v) else repr(float(v)) for v in row)]))
    atomic_write_bytes(Path(path), ("\n".join(lines) + "\n").encode())


def read_summary(path) -> pd.DataFrame:
    """A ``<method>_<measure>.csv`` (ours or tsml-eval's published) as datasets x folds (NaN where not run); a
    ValueError names a file that is not one (a bad header, a repeated dataset, a cell that is not a number)."""
    try:
        table = pd.read_csv(path, index_col=0)
        table.columns = [int(c) for c in table.columns]
        table = table.astype(float)
    except (ValueError, pd.errors.ParserError) as err:
        raise ValueError(f"{path} is not a results table (folds:,0,1,... then dataset,score,...): {err}") from None
    if table.index.has_duplicates or len(set(table.columns)) != len(table.columns):
        raise ValueError(f"{path} names a dataset or a fold twice")
    table.index.name = None
    return table
