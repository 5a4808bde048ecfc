"""Run the units of a table: (model, dataset, seed) under one profile.

A unit searches hyperparameters on a split of TRAIN (:mod:`._search`, cached per model, dataset and profile,
shared by the seeds), refits on the whole TRAIN split with its seed and scores once on TEST. Each finished
unit is one JSON file with its provenance, written atomically (:mod:`._store`); a unit whose file exists is
skipped and fits keep a resumable checkpoint, so a killed sweep rerun with the same command loses nothing
and repeats nothing that finished.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime, timezone

from ..provenance import git_commit, machine_info, versions
from . import _representations as representations
from ._config import Profile, TableConfig
from ._data import Data, load_data, metric_name, score
from ._minirocket import fit_minirocket
from ._search import make_estimator, run_search
from ._store import RESULT_VERSION, atomic_write_json, result_path

__all__ = ["load_data", "result_path", "run_table", "run_unit"]


def run_unit(table, model, data: Data, profile: Profile, seed: int, out_dir, command=None, log=print) -> dict:
    """Search (cached), refit with ``seed`` on TRAIN, score on TEST, write the result file; returns it."""
    spec = table.models[model]
    path = result_path(out_dir, table, model, data.name, profile.name, seed)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    tic = time.perf_counter()
    if spec.kind == "minirocket":
        pred, fit_s, predict_s, n_params, hyper, device = fit_minirocket(data, seed)
        search = {"method": "none (MiniRocket defaults: 10,000 kernels, ridge alpha by leave-one-out CV)"}
        epochs = None
    else:
        search = run_search(table, model, data, profile, out_dir, log)
        ckpt = path.parent / "ckpt" / f"seed{seed}.pt"
        est, pred, fit_s, predict_s, n_params, hyper, device, epochs = _fit_eadct(
            spec, data, profile, search, seed, ckpt
        )
    result = {
        "version": RESULT_VERSION,
        "table": table.name,
        "model": model,
        "model_key": table.model_key(model, data.name, profile.name),
        "dataset": data.name,
        "task": data.task,
        "seed": seed,
        "profile": profile.name,
        "metric": metric_name(data.task),
        "value": score(data.task, data.y_test, pred),
        "n_train": len(data.y_train),
        "n_test": len(data.y_test),
        "n_parameters": n_params,
        "hyperparameters": hyper,
        "search": {k: v for k, v in search.items() if k not in ("trials", "base")},
        "epochs_run": epochs,
        "fit_s": round(fit_s, 2),
        "predict_s": round(predict_s, 3),
        "search_s": search.get("time_s", 0.0),
        "unit_wall_s": round(time.perf_counter() - tic, 2),
        "started_at": started,
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": machine_info(device),
        "versions": versions(),
        "git": dict(git_commit()),
        "data_file": data.path,
        "command": command,
    }
    if spec.kind == "eadct":
        result["valid_score"] = _validation_score(est.history_)
    if representations.wanted(table, model, data.task):
        result["representation"] = representations.record(est, data.X_test, data.y_test, path)
    atomic_write_json(path, result)
    return result


def _validation_score(history: list[dict]) -> float | None:
    """The fine-tuning score on the fit's held-out split of TRAIN at the chosen epoch (accuracy, or minus
    the loss for regression); None without a validation split."""
    chosen = [r for r in history if r["stage"] == "finetune" and r.get("best")]
    if not chosen:
        return None
    last = chosen[-1]
    if "valid_accuracy" in last:
        return float(last["valid_accuracy"])
    return -float(last["valid_loss"]) if "valid_loss" in last else None


def _fit_eadct(spec, data: Data, profile: Profile, search: dict, seed: int, ckpt):
    """Refit the searched hyperparameters on TRAIN and predict TEST (the fit resumes from ``ckpt``)."""
    fit = dict(**profile.epochs(), checkpoint_path=str(ckpt))
    est = make_estimator(data.task, spec, profile, data.name, dict(search["best"]), seed, **fit)
    t0 = time.perf_counter()
    est.fit(data.X_train, data.y_train)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = est.predict(data.X_test)
    predict_s = time.perf_counter() - t0
    n_params = int(sum(p.numel() for p in est.network_.parameters()))
    epochs = {s: sum(r["stage"] == s for r in est.history_) for s in ("pretrain", "finetune")}
    hyper = {
        k: v for k, v in est.get_params().items() if k not in ("verbose", "checkpoint_path", "optimizer", "n_jobs")
    }
    ckpt.unlink(missing_ok=True)
    return est, pred, fit_s, predict_s, n_params, hyper, est.device_, epochs


def run_table(
    table: TableConfig,
    profile_name: str,
    out_dir,
    data_dirs=(),
    datasets=None,
    models=None,
    seeds=None,
    download: bool = False,
    command=None,
    log=print,
) -> dict:
    """Run every missing unit of ``table`` under ``profile_name``; returns counts of run / skipped / missing."""
    profile = table.profile(profile_name)
    git_commit()  # the commit of the code that runs, before anything could move HEAD
    datasets = list(datasets or table.datasets)
    models = list(models or table.models)
    seeds = list(profile.seeds if seeds is None else seeds)
    for name, pool, kind in ((datasets, table.datasets, "dataset"), (models, table.models, "model")):
        unknown = [x for x in name if x not in pool]
        if unknown:
            raise ValueError(f"{table.name} has no {kind} {unknown}; it has {list(pool)}.")
    counts = {"run": 0, "skipped": 0, "missing_data": 0}
    total = len(datasets) * len(models) * len(seeds)
    k = 0
    for dataset in datasets:
        todo = [
            (m, s)
            for m in models
            for s in seeds
            if not representations.unit_done(table, m, result_path(out_dir, table, m, dataset, profile.name, s))
        ]
        done = len(models) * len(seeds) - len(todo)
        counts["skipped"] += done
        k += done
        if done:
            log(f"{table.name}/{profile.name} {dataset}: {done} unit(s) already done, skipped")
        if not todo:
            continue
        data = load_data(dataset, data_dirs, download)
        if data is None:
            counts["missing_data"] += len(todo)
            k += len(todo)
            where = list(data_dirs) or "the default places"
            missing = f"{len(todo)} unit(s) missing (pass --data-dir or --download)"
            log(f"{table.name}/{profile.name} {dataset}: not found in {where}; {missing}")
            continue
        for m, s in todo:
            k += 1
            res = run_unit(table, m, data, profile, s, out_dir, command, log)
            counts["run"] += 1
            fit = f"{res['metric']} {res['value']:.4f} (fit {res['fit_s']:.1f} s, {res['n_parameters']:,} parameters)"
            log(f"[{k}/{total}] {table.name}/{profile.name} {dataset} {m} seed {s}: {fit}")
            sys.stdout.flush()
    return counts
