"""Run the units of a table: (model, dataset, seed) under one profile.

A unit searches hyperparameters on a split of TRAIN (cached per model, dataset and profile, shared by the
seeds), refits on the whole TRAIN split with its seed and scores once on TEST. Each finished unit is one
JSON file, written atomically; a unit whose file exists is skipped, every search trial is appended to a log
as it finishes, and fits keep a resumable checkpoint, so a killed sweep rerun with the same command loses
nothing and repeats nothing that finished.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from functools import lru_cache
from importlib import metadata
from pathlib import Path

import numpy as np

from ._config import ModelSpec, Profile, TableConfig

RESULT_VERSION = 1


# ----------------------------------------------------------------------------------------------- files
def _atomic_write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as fh:
        json.dump(obj, fh, indent=1, default=_json_default)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def _append_jsonl(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.write(json.dumps(record, default=_json_default) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut by a kill: that trial reruns
            continue
    return out


def unit_dir(out_dir, table: TableConfig, model: str, dataset: str, profile: str) -> Path:
    return Path(out_dir) / profile / dataset / table.model_key(model, dataset, profile)


def result_path(out_dir, table: TableConfig, model: str, dataset: str, profile: str, seed: int) -> Path:
    return unit_dir(out_dir, table, model, dataset, profile) / f"seed{seed}.json"


# ----------------------------------------------------------------------------------------------- metadata
@lru_cache(maxsize=1)
def _git_commit() -> dict:
    """Commit of the code this process runs (read once, when the sweep starts)."""
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        return {"commit": commit, "dirty": bool(dirty)}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def _versions() -> dict:
    out = {"python": platform.python_version()}
    for pkg in ("eadct", "torch", "numpy", "scikit-learn", "sktime", "numba"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(device: str | None = None) -> dict:
    import torch

    info = {
        "platform": platform.platform(),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "device": device,
    }
    if device is not None and str(device).startswith("cuda"):
        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return info


# ----------------------------------------------------------------------------------------------- data
class Data:
    """TRAIN and TEST of one dataset, loaded once for all its units."""

    def __init__(self, name, X_train, y_train, X_test, y_test, path=None):
        self.name = name
        self.X_train, self.y_train, self.X_test, self.y_test = X_train, y_train, X_test, y_test
        self.path = path
        self.task = "regression" if np.issubdtype(np.asarray(y_train).dtype, np.floating) else "classification"


def load_data(name: str, data_dirs, download: bool = False) -> Data | None:
    """Load a dataset from the first of ``data_dirs`` that holds it (then sktime's bundled copies, the
    cache and, with ``download``, the archives). None when it is nowhere: the unit is reported missing."""
    from ..datasets import DatasetNotFoundError, find_ts_file, load_dataset

    dirs = list(data_dirs or []) or [None]
    for i, d in enumerate(dirs):
        last = i == len(dirs) - 1
        try:
            X_tr, y_tr = load_dataset(name, "train", d, download=download and last, progress=False)
            X_te, y_te = load_dataset(name, "test", d, download=download and last, progress=False)
        except DatasetNotFoundError:
            continue
        try:
            path = str(find_ts_file(name, "train", d))
        except Exception:  # noqa: BLE001 - the path is informative only
            path = None
        return Data(name, X_tr, y_tr, X_te, y_te, path)
    return None


def _subset(X, idx):
    return X[idx] if isinstance(X, np.ndarray) else [X[i] for i in idx]


def _score(task: str, y_true, y_pred) -> float:
    if task == "classification":
        return float(np.mean(np.asarray(y_pred) == np.asarray(y_true)))
    return float(np.sqrt(np.mean((np.asarray(y_pred, dtype=float) - np.asarray(y_true, dtype=float)) ** 2)))


def metric_name(task: str) -> str:
    return "accuracy" if task == "classification" else "rmse"


def _higher_is_better(task: str) -> bool:
    return task == "classification"


def search_split(data: Data, fraction: float, seed: int):
    """(train, valid) indices of TRAIN for the search; stratified for classification."""
    from sklearn.model_selection import train_test_split

    n = len(data.y_train)
    idx = np.arange(n)
    stratify = None
    if data.task == "classification":
        _, counts = np.unique(data.y_train, return_counts=True)
        n_valid = max(1, int(round(fraction * n)))
        if counts.min() >= 2 and n_valid >= len(counts):
            stratify = data.y_train
    train, valid = train_test_split(idx, test_size=fraction, random_state=seed, stratify=stratify)
    return np.sort(train), np.sort(valid)


# ----------------------------------------------------------------------------------------------- estimators
def _estimator_class(task: str):
    from .. import EADCTClassifier, EADCTRegressor

    return EADCTClassifier if task == "classification" else EADCTRegressor


def _default_params(names) -> dict:
    from .. import EADCTClassifier

    defaults = EADCTClassifier().get_params()
    return {n: defaults[n] for n in names}


def _n_parameters(estimator) -> int:
    return int(sum(p.numel() for p in estimator.network_.parameters()))


def make_estimator(task, spec: ModelSpec, profile: Profile, dataset: str, hyper: dict, seed: int, **fit_settings):
    params = {
        "architecture": spec.architecture,
        "missing_values": "interpolate",
        "memory_guard": "auto",
        "device": os.environ.get("EADCT_DEVICE", "auto"),
        **profile.params,
        **profile.dataset_params.get(dataset, {}),
        **hyper,
        **spec.params,
        **fit_settings,
        "random_state": seed,
    }
    return _estimator_class(task)(**params)


# ----------------------------------------------------------------------------------------------- search
def candidates(table: TableConfig, spec: ModelSpec, profile: Profile) -> list[dict]:
    """The search's candidates: the estimator's defaults first, then distinct random draws from the
    product of the searched values (``search_seed``), ``n_candidates`` in all."""
    names = list(spec.search)
    first = _default_params(names)
    if not names or profile.search == "none":
        return [first]
    grid = [dict(zip(names, values, strict=True)) for values in itertools.product(*(table.space[n] for n in names))]
    rng = np.random.RandomState(profile.search_seed)
    order = rng.permutation(len(grid))
    out = [first]
    for i in order:
        if len(out) >= profile.n_candidates:
            break
        cand = grid[i]
        if cand != first:
            out.append(cand)
    return out


def _rungs(profile: Profile, n: int) -> list[tuple[int, int]]:
    """(number of candidates, epochs) per rung of successive halving."""
    if profile.search == "random":
        return [(n, profile.search_epochs[-1])]
    rungs, alive = [], n
    for epochs in profile.search_epochs:
        rungs.append((alive, epochs))
        if alive == 1:
            break
        alive = max(1, math.ceil(alive / profile.eta))
    return rungs


def run_search(table, model, data: Data, profile: Profile, out_dir, log=print) -> dict:
    """Choose the hyperparameters of ``model`` on ``data`` (cached in ``search.json``); every finished trial
    is in ``search_trials.jsonl``, so a killed search goes on where it stopped."""
    spec = table.models[model]
    folder = unit_dir(out_dir, table, model, data.name, profile.name)
    done_path = folder / "search.json"
    if done_path.is_file():
        return json.loads(done_path.read_text())
    if spec.inherit is not None:
        base = run_search(table, spec.inherit, data, profile, out_dir, log)
        result = {"method": f"inherited from {spec.inherit}", "best": base["best"], "base": base, "time_s": 0.0}
        _atomic_write_json(done_path, result)
        return result
    cands = candidates(table, spec, profile)
    if profile.search == "none" or len(cands) == 1 or spec.kind != "eadct":
        result = {"method": "none (defaults)", "best": cands[0], "trials": [], "time_s": 0.0}
        _atomic_write_json(done_path, result)
        return result

    trials_path = folder / "search_trials.jsonl"
    done = {(t["rung"], t["candidate"]): t for t in _read_jsonl(trials_path)}
    tr, va = search_split(data, profile.search_validation, profile.search_seed)
    X_tr, y_tr = _subset(data.X_train, tr), data.y_train[tr]
    X_va, y_va = _subset(data.X_train, va), data.y_train[va]
    sign = 1.0 if _higher_is_better(data.task) else -1.0
    alive = list(range(len(cands)))
    tic = time.perf_counter()
    for rung, (n_alive, epochs) in enumerate(_rungs(profile, len(cands))):
        alive = alive[:n_alive]
        scores = {}
        for c in alive:
            trial = done.get((rung, c))
            if trial is None:
                pre = math.ceil(profile.pretrain_share * epochs) if profile.pretrain_epochs > 0 else 0
                ckpt = folder / "ckpt" / f"search_r{rung}_c{c}.pt"
                est = make_estimator(
                    data.task,
                    spec,
                    profile,
                    data.name,
                    cands[c],
                    profile.search_seed,
                    max_epochs=epochs,
                    pretrain_epochs=pre,
                    n_iter_no_change=epochs,
                    checkpoint_path=str(ckpt),
                )
                t0 = time.perf_counter()
                est.fit(X_tr, y_tr)
                score = _score(data.task, y_va, est.predict(X_va))
                trial = {
                    "rung": rung,
                    "candidate": c,
                    "params": cands[c],
                    "epochs": epochs,
                    "pretrain_epochs": pre,
                    "score": score,
                    "time_s": round(time.perf_counter() - t0, 2),
                }
                _append_jsonl(trials_path, trial)
                ckpt.unlink(missing_ok=True)
                log(f"    search {model} {data.name} rung {rung} candidate {c}: {score:.4f} ({trial['time_s']} s)")
            scores[c] = trial["score"]
        # best first; ties keep the earlier candidate (the defaults are candidate 0)
        alive = sorted(alive, key=lambda c: (-sign * scores[c], c))
    best = alive[0]
    trials = sorted(_read_jsonl(trials_path), key=lambda t: (t["rung"], t["candidate"]))
    result = {
        "method": f"{profile.search}: {len(cands)} candidates, rungs {_rungs(profile, len(cands))}",
        "metric": f"validation {metric_name(data.task)} on {profile.search_validation:.0%} of TRAIN",
        "best": cands[best],
        "best_candidate": best,
        "trials": trials,
        "time_s": round(sum(t["time_s"] for t in trials), 2),
        "wall_s_this_process": round(time.perf_counter() - tic, 2),
    }
    _atomic_write_json(done_path, result)
    return result


# ----------------------------------------------------------------------------------------------- minirocket
def _as_equal_array(X) -> np.ndarray:
    """MiniRocket wants equal lengths: unequal series are padded by repeating their last value."""
    from ..estimators._input import fill_missing, to_panel

    panel = fill_missing(to_panel(X, missing_values="interpolate"))
    values = np.array(panel.values.transpose(0, 2, 1), dtype=np.float64, copy=True)  # (n, C, N), writable
    for i, n in enumerate(panel.lengths):
        if n < values.shape[2]:
            values[i, :, n:] = values[i, :, n - 1 : n]
    return np.nan_to_num(values)  # a channel never observed in a series -> 0
    return values


def _fit_minirocket(data: Data, seed: int):
    try:
        import numba  # noqa: F401 - sktime's MiniRocket needs it and does not install it
    except ImportError:
        raise ImportError("MiniRocket needs numba: pip install 'eadct[bench]' (or pip install numba).") from None
    from sklearn.linear_model import RidgeClassifierCV, RidgeCV
    from sklearn.preprocessing import StandardScaler
    from sktime.transformations.panel.rocket import MiniRocketMultivariate

    X_tr = _as_equal_array(data.X_train)
    X_te = _as_equal_array(data.X_test)
    if X_te.shape[2] != X_tr.shape[2]:  # pad/cut TEST to the TRAIN length
        n = X_tr.shape[2]
        X_te = (
            X_te[:, :, :n]
            if X_te.shape[2] > n
            else np.concatenate([X_te, np.repeat(X_te[:, :, -1:], n - X_te.shape[2], axis=2)], axis=2)
        )
    alphas = np.logspace(-3, 3, 10)
    ridge = RidgeClassifierCV(alphas=alphas) if data.task == "classification" else RidgeCV(alphas=alphas)
    # The steps run one after the other, not in an sklearn Pipeline: sklearn 1.9's pipeline callbacks fail
    # on sktime transformers (AttributeError _parent_callback_ctx).
    transform, scaler = MiniRocketMultivariate(random_state=seed), StandardScaler()
    t0 = time.perf_counter()
    features = np.asarray(transform.fit_transform(X_tr), dtype=np.float64)
    ridge.fit(scaler.fit_transform(features), data.y_train)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = ridge.predict(scaler.transform(np.asarray(transform.transform(X_te), dtype=np.float64)))
    predict_s = time.perf_counter() - t0
    n_params = int(np.size(ridge.coef_) + np.size(ridge.intercept_))
    hyper = {"num_kernels": 10000, "ridge_alpha": float(ridge.alpha_)}
    return pred, fit_s, predict_s, n_params, hyper, "cpu"


# ----------------------------------------------------------------------------------------------- units
def run_unit(table, model, data: Data, profile: Profile, seed: int, out_dir, command=None, log=print) -> dict:
    """Search (cached), refit with ``seed`` on TRAIN, score on TEST, write the result file; returns it."""
    spec = table.models[model]
    path = result_path(out_dir, table, model, data.name, profile.name, seed)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    tic = time.perf_counter()
    if spec.kind == "minirocket":
        pred, fit_s, predict_s, n_params, hyper, device = _fit_minirocket(data, seed)
        search = {"method": "none (MiniRocket defaults: 10,000 kernels, ridge alpha by leave-one-out CV)"}
        epochs = None
    else:
        search = run_search(table, model, data, profile, out_dir, log)
        hyper = dict(search["best"])
        ckpt = path.parent / "ckpt" / f"seed{seed}.pt"
        est = make_estimator(
            data.task,
            spec,
            profile,
            data.name,
            hyper,
            seed,
            max_epochs=profile.max_epochs,
            pretrain_epochs=profile.pretrain_epochs,
            n_iter_no_change=profile.n_iter_no_change,
            checkpoint_path=str(ckpt),
        )
        t0 = time.perf_counter()
        est.fit(data.X_train, data.y_train)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        pred = est.predict(data.X_test)
        predict_s = time.perf_counter() - t0
        n_params = _n_parameters(est)
        device = est.device_
        epochs = {s: sum(r["stage"] == s for r in est.history_) for s in ("pretrain", "finetune")}
        hyper = {k: v for k, v in est.get_params().items() if k not in ("verbose", "checkpoint_path", "optimizer")}
        ckpt.unlink(missing_ok=True)
    value = _score(data.task, data.y_test, pred)
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
        "value": value,
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
        "versions": _versions(),
        "git": dict(_git_commit()),
        "data_file": data.path,
        "command": command,
    }
    _atomic_write_json(path, result)
    return result


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
    _git_commit()  # the commit of the code that runs, before anything could move HEAD
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
            if not result_path(out_dir, table, m, dataset, profile.name, s).is_file()
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
            log(
                f"{table.name}/{profile.name} {dataset}: not found in {list(data_dirs) or 'the default places'}; "
                f"{len(todo)} unit(s) missing (pass --data-dir or --download)"
            )
            continue
        for m, s in todo:
            k += 1
            res = run_unit(table, m, data, profile, s, out_dir, command, log)
            counts["run"] += 1
            log(
                f"[{k}/{total}] {table.name}/{profile.name} {dataset} {m} seed {s}: "
                f"{res['metric']} {res['value']:.4f} (fit {res['fit_s']:.1f} s, {res['n_parameters']:,} parameters)"
            )
            sys.stdout.flush()
    return counts
