"""The hyperparameter search of a unit: candidates, successive-halving rungs, trials on a split of TRAIN.

The search result of a (model, dataset, profile) is cached in ``search.json`` and shared by its seeds;
every finished trial is appended to ``search_trials.jsonl``, so a killed search goes on where it stopped.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import time

import numpy as np

from ..estimators import nest
from ._config import ModelSpec, Profile, TableConfig
from ._data import Data, higher_is_better, metric_name, score, subset
from ._keys import current_defaults, estimator_class
from ._store import append_jsonl, atomic_write_json, read_jsonl, unit_dir


def make_estimator(task, spec: ModelSpec, profile: Profile, dataset: str, hyper: dict, seed: int, **fit_settings):
    """The estimator of a unit: the profile's settings, then the candidate's, the row's and the fit's."""
    params = {
        "architecture": spec.architecture,
        "missing_values": "interpolate",
        "memory_guard": "auto",
        "device": os.environ.get("EADCT_DEVICE", "auto"),
        **profile.base_params(task),
        **profile.params,
        **profile.dataset_params.get(dataset, {}),
        **hyper,
        **spec.params,
        **fit_settings,
        "random_state": seed,
    }
    cls = estimator_class(task)
    return cls(**nest(cls, params))


def candidates(table: TableConfig, spec: ModelSpec, profile: Profile, task: str = "classification") -> list[dict]:
    """The search's candidates: the profile's base values (the paper's or the estimators' defaults) first,
    then distinct random draws from the product of the searched values (``search_seed``), ``n_candidates``
    in all."""
    names = list(spec.search)
    base = profile.base_params(task)
    defaults = current_defaults(task)
    first = {n: base.get(n, defaults[n]) for n in names}
    if not names or profile.search == "none":
        return [first]
    grid = [dict(zip(names, values, strict=True)) for values in itertools.product(*(table.space[n] for n in names))]
    order = np.random.RandomState(profile.search_seed).permutation(len(grid))
    out = [first]
    for i in order:
        if len(out) >= profile.n_candidates:
            break
        if grid[i] != first:
            out.append(grid[i])
    return out


def searches(spec: ModelSpec, profile: Profile, cands: list[dict]) -> bool:
    """Whether a row with these candidates runs a search under ``profile`` (else it takes its first candidate)."""
    return profile.search != "none" and len(cands) > 1 and spec.kind == "eadct"


def rungs(profile: Profile, n: int) -> list[tuple[int, int]]:
    """(number of candidates, epochs) per rung of successive halving."""
    if profile.search == "random":
        return [(n, profile.search_epochs[-1])]
    out, alive = [], n
    for epochs in profile.search_epochs:
        out.append((alive, epochs))
        if alive == 1:
            break
        alive = max(1, math.ceil(alive / profile.eta))
    return out


def search_split(data: Data, fraction: float, seed: int):
    """(train, valid) indices of TRAIN for the search; stratified for classification."""
    from sklearn.model_selection import train_test_split

    n = len(data.y_train)
    stratify = None
    if data.task == "classification":
        _, counts = np.unique(data.y_train, return_counts=True)
        n_valid = max(1, int(round(fraction * n)))
        if counts.min() >= 2 and n_valid >= len(counts):
            stratify = data.y_train
    train, valid = train_test_split(np.arange(n), test_size=fraction, random_state=seed, stratify=stratify)
    return np.sort(train), np.sort(valid)


def run_search(table, model, data: Data, profile: Profile, out_dir, log=print, run_trials=None) -> dict:
    """Choose the hyperparameters of ``model`` on ``data`` (cached in ``search.json``).

    ``run_trials(spec, data, profile, split, jobs)`` yields the trials of a rung's jobs as they finish (default:
    one after another in this process; :func:`eadct.tables._sweep.trial_runner` runs them on a backend). The
    choice does not depend on it: candidates are ranked by :func:`rank_key`.
    """
    spec = table.models[model]
    folder = unit_dir(out_dir, table, model, data.name, profile.name)
    done_path = folder / "search.json"
    if done_path.is_file():
        return json.loads(done_path.read_text())
    if spec.inherit is not None:
        base = run_search(table, spec.inherit, data, profile, out_dir, log, run_trials)
        result = {"method": f"inherited from {spec.inherit}", "best": base["best"], "base": base, "time_s": 0.0}
    else:
        cands = candidates(table, spec, profile, data.task)
        if not searches(spec, profile, cands):
            result = {"method": "none (defaults)", "best": cands[0], "trials": [], "time_s": 0.0}
        else:
            result = _halving(table, model, data, profile, cands, folder, log, run_trials or _sequential_trials)
    atomic_write_json(done_path, result)
    return result


def _halving(table, model, data: Data, profile: Profile, cands: list[dict], folder, log, run_trials) -> dict:
    """Successive halving over ``cands`` on the search split; finished trials are read back, not rerun."""
    trials_path = folder / "search_trials.jsonl"
    done = {(t["rung"], t["candidate"]): t for t in read_jsonl(trials_path)}
    tr, va = search_split(data, profile.search_validation, profile.search_seed)
    split = (subset(data.X_train, tr), data.y_train[tr], subset(data.X_train, va), data.y_train[va])
    sign = 1.0 if higher_is_better(data.task) else -1.0
    alive = list(range(len(cands)))
    tic = time.perf_counter()
    for rung, (n_alive, epochs) in enumerate(rungs(profile, len(cands))):
        alive = alive[:n_alive]
        ckpt = folder / "ckpt"
        jobs = [
            dict(rung=rung, candidate=c, epochs=epochs, params=cands[c], ckpt=ckpt / f"search_r{rung}_c{c}.pt")
            for c in alive
            if (rung, c) not in done
        ]
        for trial in run_trials(table.models[model], data, profile, split, jobs):
            append_jsonl(trials_path, trial)
            done[(trial["rung"], trial["candidate"])] = trial
            loss = trial.get("valid_loss")
            loss = "n/a" if loss is None else f"{loss:.4f}"
            log(
                f"    search {model} {data.name} rung {rung} candidate {trial['candidate']}: {trial['score']:.4f}, "
                f"loss {loss} ({trial['time_s']} s)"
            )
        alive = sorted(alive, key=rank_key([done[(rung, c)] for c in alive], sign))
    trials = sorted(read_jsonl(trials_path), key=lambda t: (t["rung"], t["candidate"]))
    return {
        "method": f"{profile.search}: {len(cands)} candidates, rungs {rungs(profile, len(cands))}",
        "metric": f"validation {metric_name(data.task)} on {profile.search_validation:.0%} of TRAIN"
        + (", ties by validation log-loss" if data.task == "classification" else ""),
        "best": cands[alive[0]],
        "best_candidate": alive[0],
        "trials": trials,
        "time_s": round(sum(t["time_s"] for t in trials), 2),
        "wall_s_this_process": round(time.perf_counter() - tic, 2),
    }


def rank_key(trials: list[dict], sign: float):
    """The order of a rung's candidates, best first: the one place it is defined.

    By score (``sign`` 1 where higher is better), then by validation loss (``valid_loss``: the log-loss of the
    predicted probabilities, or the RMSE), then by candidate index (the defaults are candidate 0). The loss
    breaks the ties that accuracy on a split of a few dozen series makes common: from the third rung on, every
    candidate of UWaveGestureLibrary's full-profile searches scored 23 of 24 (research/tables-diary.md). A rung where
    some trial has no loss (recorded before 2026-11-27) is ordered by score and index only, as then.
    """
    by_candidate = {t["candidate"]: t for t in trials}
    losses = [t.get("valid_loss") for t in trials]
    use_loss = all(loss is not None and math.isfinite(loss) for loss in losses)

    def key(c: int):
        trial = by_candidate[c]
        return (-sign * trial["score"], trial["valid_loss"] if use_loss else 0.0, c)

    return key


_LOSS_TIES = {"on": True}


@contextlib.contextmanager
def ties_by_index():
    """Within this context the search trials run in this process record no validation loss, so :func:`rank_key`
    breaks their ties by candidate index alone: the rule before 2026-11-27, for measuring what the log-loss
    tie-break changed (``research/benchmarks/search_ties.py``). Trials on another backend's workers are not affected."""
    before = _LOSS_TIES["on"]
    _LOSS_TIES["on"] = False
    try:
        yield
    finally:
        _LOSS_TIES["on"] = before


def trial_epochs(profile: Profile, epochs: int) -> tuple[int, int]:
    """(fine-tuning, pretraining) epochs of a trial of a rung of ``epochs``: pretraining takes the profile's
    ``pretrain_share`` of them, none where the profile's fits do not pretrain."""
    return epochs, math.ceil(profile.pretrain_share * epochs) if profile.epochs()["pretrain_epochs"] > 0 else 0


def _sequential_trials(spec, data: Data, profile: Profile, split, jobs):
    """The jobs of a rung one after another in this process, each fit resumable from its checkpoint."""
    for job in jobs:
        where = dict(rung=job["rung"], candidate=job["candidate"], epochs=job["epochs"], split=split)
        yield _trial(spec, data, profile, job["params"], **where, ckpt=job["ckpt"])
        job["ckpt"].unlink(missing_ok=True)  # after the caller has recorded the trial


def _trial(spec: ModelSpec, data: Data, profile: Profile, params: dict, *, rung, candidate, epochs, split, ckpt):
    """Fit one candidate for one rung on the search split (``X_tr, y_tr, X_va, y_va``) and score it on the
    held-out part; the fit keeps a resumable checkpoint at ``ckpt``."""
    X_tr, y_tr, X_va, y_va = split
    _, pre = trial_epochs(profile, epochs)
    fit = dict(max_epochs=epochs, pretrain_epochs=pre, n_iter_no_change=epochs, checkpoint_path=str(ckpt))
    est = make_estimator(data.task, spec, profile, data.name, params, profile.search_seed, **fit)
    t0 = time.perf_counter()
    est.fit(X_tr, y_tr)
    value = score(data.task, y_va, est.predict(X_va))
    return {
        "rung": rung,
        "candidate": candidate,
        "params": params,
        "epochs": epochs,
        "pretrain_epochs": pre,
        "score": value,
        "valid_loss": validation_loss(data.task, est, X_va, y_va, value) if _LOSS_TIES["on"] else None,
        "time_s": round(time.perf_counter() - t0, 2),
    }


def validation_loss(task: str, est, X_va, y_va, value: float) -> float | None:
    """The tie-breaker of :func:`rank_key`: the log-loss of the predicted probabilities (classification), or
    the RMSE ``value`` itself (regression). None where the validation split holds a class the fit never saw
    (the rung is then ordered by score and index)."""
    if task != "classification":
        return float(value)
    from sklearn.metrics import log_loss

    if not np.isin(y_va, est.classes_).all():
        return None
    return float(log_loss(y_va, est.predict_proba(X_va), labels=est.classes_))
