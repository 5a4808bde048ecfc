"""Run the units of a table: (model, dataset, seed) under one profile.

A unit searches hyperparameters on a split of TRAIN (:mod:`._search`, cached per model, dataset and profile,
shared by the seeds), refits on the whole TRAIN split with its seed and scores once on TEST. Each finished
unit is one JSON file with its provenance, written atomically (:mod:`._store`); a unit whose file exists is
skipped and fits keep a resumable checkpoint, so a killed sweep rerun with the same command loses nothing
and repeats nothing that finished. Two drivers on one results folder never run the same unit or search
(:func:`._store.claim_units`, :func:`._store.search_lock`).
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from datetime import datetime, timezone

from ..provenance import git_commit, machine_info, versions
from . import _representations as representations
from ._backends import Failure, Session, Task, call_task
from ._config import EPOCH_SETTINGS, Profile, TableConfig
from ._data import Data, load_data, metric_name, score, test_log_loss
from ._minirocket import fit_minirocket
from ._search import make_estimator, run_search
from ._store import RESULT_VERSION, atomic_write_json, claim_units, result_path, search_lock, unit_dir
from ._sweep import trial_runner, write_unit_files

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
        search = _search(table, model, data, profile, out_dir, log, command=command)
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
        if data.task == "classification":  # the probabilities' quality beside the accuracy (the report's log-loss)
            result["log_loss"] = test_log_loss(est, data.X_test, data.y_test)
    if representations.wanted(table, model, data.task):
        result["representation"] = representations.record(est, data.X_test, data.y_test, path)
    atomic_write_json(path, result)
    return result


def unit_task(table, model, data, profile, seed, search, command):
    """Run one unit in a temporary folder of this worker; returns ``{"result": ..., "files": {name: bytes}}``
    with every file the unit wrote (its result, its representation), for the driver to write."""
    with tempfile.TemporaryDirectory(prefix="eadct-unit-") as tmp:
        folder = unit_dir(tmp, table, model, data.name, profile.name)
        if search is not None:
            atomic_write_json(folder / "search.json", search)
        result = run_unit(table, model, data, profile, seed, tmp, command, log=lambda *_: None)
        files = {
            p.name: p.read_bytes()
            for p in folder.iterdir()
            if p.is_file() and p.name != "search.json" and not p.name.startswith(".")
        }
        return {"result": result, "files": files}


def _search(table, model, data: Data, profile: Profile, out_dir, log, run_trials=None, command=None) -> dict:
    """:func:`run_search`, holding the lock of the search that runs the trials (the model's, or that of the model
    it inherits from) unless it is done: a second driver that needs it waits, then reads it."""
    if (unit_dir(out_dir, table, model, data.name, profile.name) / "search.json").is_file():
        return run_search(table, model, data, profile, out_dir, log, run_trials)
    root = model
    while table.models[root].inherit is not None:
        root = table.models[root].inherit
    folder = unit_dir(out_dir, table, root, data.name, profile.name)
    with search_lock(folder, log, f"{root} on {data.name} ({profile.name})", command):
        return run_search(table, model, data, profile, out_dir, log, run_trials)


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
    # the profile's budget, unless the row sets its own (a candidate row's ``max_epochs``: part of its key)
    epochs = {**profile.epochs(data.task), **{k: v for k, v in spec.params.items() if k in EPOCH_SETTINGS}}
    fit = dict(**epochs, checkpoint_path=str(ckpt))
    est = make_estimator(data.task, spec, profile, data.name, dict(search["best"]), seed, **fit)
    t0 = time.perf_counter()
    est.fit(data.X_train, data.y_train)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = est.predict(data.X_test)
    predict_s = time.perf_counter() - t0
    n_params = int(sum(p.numel() for p in est.network_.parameters()))
    epochs = {s: sum(r["stage"] == s for r in est.history_) for s in ("pretrain", "finetune")}
    settings = est._settings()
    hyper = {k: v for k, v in settings.items() if k not in ("verbose", "checkpoint_path", "optimizer", "n_jobs")}
    if hasattr(est, "head_alpha_"):  # the regressor's ridge refit: the strength leave-one-out chose on TRAIN
        hyper["head_alpha"] = est.head_alpha_.ravel().tolist()
    if settings.get("input_differences") == "auto":  # what "auto" took on TRAIN (rule or choice)
        hyper["input_differences_chosen"] = bool(est.input_differences_)
    if hasattr(est, "treatment_choice_"):  # the regressor's "auto": whether the proxy scored (None: too few series)
        hyper["input_differences_decided_by"] = est.treatment_choice_.get("decided_by")  # "proxy" or None
    if settings.get("wide_scales", False) and hasattr(est, "wide_scale_channels_"):  # where "auto" or a threshold acted
        hyper["wide_scale_channels"] = [i for i, wide in enumerate(est.wide_scale_channels_) if wide]
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
    backend: str = "none",
    backend_params: dict | None = None,
    search_only: bool = False,
) -> dict:
    """Run every missing unit of ``table`` under ``profile_name``; returns counts of run / skipped / missing /
    failed units.

    ``backend`` and ``backend_params`` say where the units and search trials run (:mod:`._backends`: "none" is
    this process, one unit after another; "loky", "dask", "ray" run them as parallel tasks). A unit that
    raises is recorded (``seed<k>.error.json`` beside its result's place, and in the log) and the others go on.
    ``search_only`` runs the searches of the missing units (their trials on the backend) and stops before the
    units: the refits can then run elsewhere, or one process per seed with ``backend="none"``, whose fits
    resume from their checkpoints after a kill (a unit run on another backend restarts).

    The units to run are claimed in ``out_dir`` first (:func:`._store.claim_units`): while another driver runs
    one of them, this call raises :class:`._store.FolderBusy` naming it before anything runs. A search that
    another driver runs is waited for, then read (:func:`._store.search_lock`).
    """
    profile = table.profile(profile_name)
    session = Session(backend, backend_params)  # checks the backend and its settings; the engine starts later
    git_commit()  # the commit of the code that runs, before anything could move HEAD
    datasets = list(datasets or table.datasets)
    models = list(models or table.models)
    seeds = list(profile.seeds if seeds is None else seeds)
    for name, pool, kind in ((datasets, table.datasets, "dataset"), (models, table.models, "model")):
        unknown = [x for x in name if x not in pool]
        if unknown:
            raise ValueError(f"{table.name} has no {kind} {unknown}; it has {list(pool)}.")
    sweep = _Sweep(table, profile, out_dir, len(datasets) * len(models) * len(seeds), log)
    units = [(m, sweep.path(m, d, s)) for d in datasets for m in models for s in seeds]
    todo = [str(p.relative_to(out_dir)) for m, p in units if not representations.unit_done(table, m, p)]
    claims = contextlib.nullcontext() if search_only else claim_units(out_dir, todo, command)
    with claims, session:
        _run_datasets(sweep, session, datasets, models, seeds, data_dirs, download, command, search_only)
    return sweep.counts


def _run_datasets(
    sweep: _Sweep, session: Session, datasets, models, seeds, data_dirs, download, command, search_only=False
) -> None:
    """Load each dataset once and run its missing units: in order in this process ("none"), or as tasks of
    ``session`` submitted together once every dataset's searches are done; only the searches if ``search_only``."""
    table, profile, out_dir, log, tasks = sweep.table, sweep.profile, sweep.out_dir, sweep.log, []
    for dataset in datasets:
        todo = [
            (m, s) for m in models for s in seeds if not representations.unit_done(table, m, sweep.path(m, dataset, s))
        ]
        sweep.skip(dataset, len(models) * len(seeds) - len(todo))
        if not todo:
            continue
        data = load_data(dataset, data_dirs, download)
        if data is None:
            sweep.missing(dataset, todo, data_dirs)
        elif search_only:  # the searches as a sweep runs them (a failed one recorded); its units not submitted
            _unit_tasks(sweep, data, todo, command, None if session.backend == "none" else trial_runner(session))
        elif session.backend == "none":
            for m, s in todo:
                sweep.finish(
                    dataset,
                    m,
                    s,
                    call_task(
                        run_unit,
                        dict(
                            table=table,
                            model=m,
                            data=data,
                            profile=profile,
                            seed=s,
                            out_dir=out_dir,
                            command=command,
                            log=log,
                        ),
                    ),
                )
        else:
            tasks += _unit_tasks(sweep, data, todo, command, trial_runner(session))
    for task, outcome in session.run(tasks):
        dataset, m, s = task.key
        if not isinstance(outcome, Failure):
            write_unit_files(out_dir, table, m, dataset, profile.name, outcome["files"])
            outcome = outcome["result"]
        sweep.finish(dataset, m, s, outcome)


def _unit_tasks(sweep: _Sweep, data: Data, todo: list, command, run_trials) -> list[Task]:
    """The tasks of ``todo``'s units after their searches (run here, trials on the backend); a failed search
    fails its units."""
    table, profile, searches, tasks = sweep.table, sweep.profile, {}, []
    for m in dict.fromkeys(m for m, _ in todo):
        if table.models[m].kind != "eadct":
            searches[m] = None
            continue
        try:
            searches[m] = _search(table, m, data, profile, sweep.out_dir, sweep.log, run_trials, command)
        except Exception as err:  # the search of one model must not stop the sweep
            failure = Failure(type(err).__name__, str(err))
            for mm, s in todo:
                if mm == m:
                    sweep.finish(data.name, m, s, failure)
    for m, s in todo:
        if m in searches:
            unit = dict(table=table, model=m, data=data, profile=profile, seed=s, search=searches[m], command=command)
            tasks.append(Task((data.name, m, s), unit_task, unit, gpu=table.models[m].kind == "eadct"))
    return tasks


class _Sweep:
    """The counts and progress lines of a sweep, and where its units' files go."""

    def __init__(self, table, profile: Profile, out_dir, total: int, log):
        self.table, self.profile, self.out_dir, self.total, self.log = table, profile, out_dir, total, log
        self.counts = {"run": 0, "skipped": 0, "missing_data": 0, "failed": 0}
        self.k = 0

    def path(self, model, dataset, seed):
        return result_path(self.out_dir, self.table, model, dataset, self.profile.name, seed)

    def skip(self, dataset, n: int) -> None:
        self.counts["skipped"] += n
        self.k += n
        if n:
            self.log(f"{self.table.name}/{self.profile.name} {dataset}: {n} unit(s) already done, skipped")

    def missing(self, dataset, todo, data_dirs) -> None:
        self.counts["missing_data"] += len(todo)
        self.k += len(todo)
        where = list(data_dirs) or "the default places"
        self.log(
            f"{self.table.name}/{self.profile.name} {dataset}: not found in {where}; {len(todo)} unit(s) "
            "missing (pass --data-dir or --download)"
        )

    def finish(self, dataset, model, seed, outcome) -> None:
        """Count and log a unit; a :class:`Failure` is written to ``seed<k>.error.json`` (a success removes it)."""
        self.k += 1
        error_path = self.path(model, dataset, seed).with_suffix(".error.json")
        head = f"[{self.k}/{self.total}] {self.table.name}/{self.profile.name} {dataset} {model} seed {seed}"
        if isinstance(outcome, Failure):
            self.counts["failed"] += 1
            atomic_write_json(
                error_path, {"error": outcome.error, "message": outcome.message, "traceback": outcome.traceback}
            )
            self.log(f"{head}: FAILED, {outcome.describe()} (recorded in {error_path})")
        else:
            self.counts["run"] += 1
            error_path.unlink(missing_ok=True)
            fit = f"{outcome['metric']} {outcome['value']:.4f} (fit {outcome['fit_s']:.1f} s, "
            self.log(f"{head}: {fit}{outcome['n_parameters']:,} parameters)")
        sys.stdout.flush()
