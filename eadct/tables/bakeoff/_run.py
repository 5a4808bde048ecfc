"""Run the units of a bake-off (method x dataset x fold), resumably, on the tables' backends."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from ... import __version__
from ...provenance import git_commit, machine_info
from .._backends import Failure, Task, run_tasks, worker_threads
from .._data import load_data
from .._store import claim_units
from ._folds import load_fold
from ._methods import METHODS, check_methods, make_estimator, method_inputs, warm_up
from ._results import predictions_path, write_predictions

#: Settings that change how a unit runs, not what it computes: left out of the settings a rerun compares.
RUNTIME_SETTINGS = ("n_jobs", "verbose")


class StaleUnits(ValueError):
    """Predictions files in the output folder that other settings wrote (a default changed since)."""


def run_unit(method: str, task: str, fold: int, X_train, y_train, X_test, threads=None) -> dict:
    """Fit ``method`` on the fold's TRAIN and predict its TEST, timed as tsml-eval times them (wall clock, ms;
    a classifier's predictions are its most probable classes, from the one timed ``predict_proba``)."""
    import torch

    threads = threads or worker_threads()
    torch.set_num_threads(threads)
    warm_up(method, task)
    est = make_estimator(method, task, seed=fold, threads=threads)
    X_tr, X_te = method_inputs(method, X_train, X_test)
    t0 = time.perf_counter()
    est.fit(X_tr, y_train)
    fit_ms = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    if task == "classification":
        proba = np.asarray(est.predict_proba(X_te), dtype=float)
        pred = np.asarray(est.classes_)[np.argmax(proba, axis=1)]
    else:
        proba, pred = None, np.asarray(est.predict(X_te), dtype=float)
    predict_ms = (time.perf_counter() - t0) * 1000
    if not np.all(np.isfinite(proba if proba is not None else pred)):
        raise ValueError(f"{method} predicted non-finite values on fold {fold}: the unit counts as failed")
    classes = getattr(est, "classes_", None)
    return {
        "y_pred": pred,
        "proba": proba,
        "classes": None if classes is None else list(np.asarray(classes)),
        "fit_ms": fit_ms,
        "predict_ms": predict_ms,
        "settings": settings_line(est),
        "threads": threads,
    }


def settings_line(est) -> str:
    """Line 2 of a predictions file: the estimator's class and every setting in effect (eadct's estimators list
    their ``options__<field>`` values), but those of :data:`RUNTIME_SETTINGS`."""
    params = {k: v for k, v in est.get_params().items() if k not in RUNTIME_SETTINGS and not callable(v)}
    return " ".join(json.dumps({"__class__": type(est).__name__, **params}, default=str, sort_keys=True).split())


def stale_units(paths, expected: dict) -> list[Path]:
    """The files among ``paths`` whose settings (line 2) are not ``expected[path]``."""
    stale = []
    for path in paths:
        lines = Path(path).read_text().splitlines()
        if len(lines) < 2 or lines[1] != expected[path]:
            stale.append(Path(path))
    return stale


def run_bakeoff(
    datasets, methods, folds, out, data_dirs, backend="none", backend_params=None, threads=None, log=print
) -> dict:
    """Run every unit of ``methods`` x ``datasets`` x ``folds`` whose predictions file is not under ``out``.

    ``data_dirs``: folders that hold ``<name>/<name>_TRAIN.ts`` (the first that has a dataset is used). A unit
    whose file holds other settings than the method's today (a default changed since it ran) is not reused: a
    :class:`StaleUnits` error names the files, to be moved away. Another runner on the same folder cannot take
    the same units (:func:`eadct.tables._store.claim_units`). Returns ``{"done", "skipped", "failed",
    "missing"}`` counts; a failed unit is logged and left to a rerun.
    """
    methods = check_methods(methods)
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive int or None (all cores), got {threads!r}")
    counts = {"done": 0, "skipped": 0, "failed": 0, "missing": 0}
    for name in datasets:
        data = load_data(name, data_dirs)
        if data is None:
            log(f"{name}: not found in {list(data_dirs)}; skipped")
            counts["missing"] += 1
            continue
        units = {(m, k): predictions_path(out, data.task, m, name, k) for k in folds for m in methods}
        _check_done(units, data.task, threads)
        todo = [unit for unit, path in units.items() if not path.exists()]
        counts["skipped"] += len(units) - len(todo)
        with claim_units(out, [str(units[u].relative_to(out)) for u in todo], command="eadct-bakeoff run"):
            _run_dataset(data, todo, out, backend, backend_params, threads, counts, log)
    return counts


def _check_done(units: dict, task: str, threads) -> None:
    done = {
        path: settings_line(make_estimator(m, task, seed=k, threads=threads or 1))
        for (m, k), path in units.items()
        if path.exists()
    }
    stale = stale_units(done, done)
    if stale:
        raise StaleUnits(
            f"{len(stale)} predictions file(s) were written with other settings than the methods' today (a default "
            f"changed since), e.g. {stale[0]}; move them out of the folder to refit them, or use another --out"
        )


def _run_dataset(data, todo, out, backend, backend_params, threads, counts, log) -> None:
    folds = {k: load_fold(data, k) for k in sorted({k for _, k in todo})}  # each fold's data built once
    tasks = []
    for method, fold in todo:
        X_tr, y_tr, X_te, _ = folds[fold]
        kwargs = dict(method=method, task=data.task, fold=fold, X_train=X_tr, y_train=y_tr, X_test=X_te)
        tasks.append(
            Task(key=(method, fold), fn=run_unit, kwargs={**kwargs, "threads": threads}, gpu=METHODS[method][1])
        )
    for task, result in run_tasks(tasks, backend, backend_params):
        method, fold = task.key
        if isinstance(result, Failure):
            counts["failed"] += 1
            log(f"{data.name} fold {fold} {method}: FAILED {result.describe()}")
            continue
        score = _write(out, data, method, fold, folds[fold][3], result)
        counts["done"] += 1
        log(f"{data.name} fold {fold} {method}: {score:.4f} fit {result['fit_ms'] / 1000:.1f} s")


def _write(out, data, method, fold, y_test, result) -> float:
    git = git_commit()
    commit = f"{git.get('commit')}{'+dirty' if git.get('dirty') else ''}"
    comment = (
        f"Generated by eadct-bakeoff (eadct {__version__}, git {commit}, "
        f"{machine_info().get('cpu')}, {result['threads']} thread(s))."
    )
    classes = None
    if data.task == "classification":
        classes = sorted(set(np.unique(np.concatenate([np.asarray(data.y_train), np.asarray(data.y_test)]))))
    proba = result["proba"]
    if proba is not None:  # the estimator's columns, placed in the order of all the dataset's classes
        full = np.zeros((len(proba), len(classes)))
        for j, c in enumerate(result["classes"]):
            full[:, classes.index(c)] = proba[:, j]
        proba = full
    return write_predictions(
        predictions_path(out, data.task, method, data.name, fold),
        dataset=data.name,
        method=method,
        fold=fold,
        task=data.task,
        y_true=y_test,
        y_pred=result["y_pred"],
        fit_ms=result["fit_ms"],
        predict_ms=result["predict_ms"],
        settings=result["settings"],
        comment=comment,
        proba=proba,
        classes=classes,
    )
