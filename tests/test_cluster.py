"""Table sweeps and searches on a Dask cluster (issue 18): a local cluster of 2 single-threaded worker processes
started here. The same results as backend="none", a worker killed mid-unit, a failing unit, a rerun that trains
nothing, GPU claims, and GridSearchCV through joblib's dask backend."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel
from test_tables import PROFILES, TABLE, _write_ts

from eadct.tables import load_table, run_table
from eadct.tables._backends import Failure, Task, run_tasks
from eadct.tables._store import result_path

distributed = pytest.importorskip("distributed")

UNITS = dict(datasets=["TinyTabC"], models=["EA-DC-Transformer", "w/o Convolution"])


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("cluster")
    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    X = 0.3 * rng.normal(size=(40, 2, 16))
    X[y == 1, 0] += 1.0
    _write_ts(root / "data", "TinyTabC", X, np.where(y == 1, "b", "a"), regression=False)
    (root / "cfg").mkdir()
    (root / "cfg" / "profiles.toml").write_text(PROFILES)
    (root / "cfg" / "tiny.toml").write_text(TABLE)
    return root, load_table(root / "cfg" / "tiny.toml")


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


def _results(out, table):
    return {
        (m, s): json.loads(result_path(out, table, m, "TinyTabC", "tiny", s).read_text())
        for m in UNITS["models"]
        for s in (0, 1)
    }


def test_dask_sweep_equals_the_sequential_one_and_a_rerun_trains_nothing(setup, tmp_path):
    root, table = setup
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the workers' one thread: results then agree to the last bit
    try:
        run_table(table, "tiny", tmp_path / "none", data_dirs=[root / "data"], log=lambda *_: None, **UNITS)
    finally:
        torch.set_num_threads(threads)
    params = {"n_workers": 2, "resources": {"GPU": 1}, "gpus_per_task": 1}  # a local cluster started for the sweep
    counts = run_table(table, "tiny", tmp_path / "dask", data_dirs=[root / "data"], log=lambda *_: None,
                       backend="dask", backend_params=params, **UNITS)  # fmt: skip
    assert counts == {"run": 4, "skipped": 0, "missing_data": 0, "failed": 0}
    one, other = _results(tmp_path / "none", table), _results(tmp_path / "dask", table)
    for unit in one:
        for key in ("value", "hyperparameters", "n_parameters", "epochs_run"):
            assert one[unit][key] == other[unit][key], (unit, key)
        assert one[unit]["search"]["best"] == other[unit]["search"]["best"]
    trials = lambda out: sorted(  # noqa: E731
        (t["rung"], t["candidate"], t["score"])
        for t in map(
            json.loads,
            (result_path(out, table, "EA-DC-Transformer", "TinyTabC", "tiny", 0).parent / "search_trials.jsonl")
            .read_text()
            .splitlines(),
        )  # fmt: skip
    )
    assert trials(tmp_path / "none") == trials(tmp_path / "dask")
    again = run_table(table, "tiny", tmp_path / "dask", data_dirs=[root / "data"], backend="dask", **UNITS)
    assert again == {"run": 0, "skipped": 4, "missing_data": 0, "failed": 0}


def test_a_worker_killed_mid_unit_costs_only_that_unit(setup, cluster, tmp_path):
    root, table = setup
    client = distributed.Client(cluster)
    pids = client.run(os.getpid)
    logs, done = [], {}

    def sweep():
        where = {"address": cluster.scheduler_address}
        done["counts"] = run_table(table, "tiny", tmp_path, data_dirs=[root / "data"], log=logs.append,
                                   backend="dask", backend_params=where, **UNITS)  # fmt: skip

    runner = threading.Thread(target=sweep)
    runner.start()
    killed = None
    deadline = time.time() + 120
    while killed is None and time.time() < deadline and runner.is_alive():
        busy = [w for w, tasks in client.processing().items() if tasks and w in pids]
        if busy and any("unit_task" in str(t) for t in client.processing()[busy[0]]):
            killed = pids[busy[0]]
            os.kill(killed, signal.SIGKILL)
        time.sleep(0.05)
    runner.join(timeout=300)
    client.close()
    assert killed is not None, "no unit was seen running"
    assert done["counts"] == {"run": 4, "skipped": 0, "missing_data": 0, "failed": 0}
    finished = [line for line in logs if line.startswith("[")]
    assert len(finished) == 4 and len({line.split(":")[0].split("] ")[1] for line in finished}) == 4
    assert len(_results(tmp_path, table)) == 4


def _maybe_fail(x):
    if x == 2:
        raise ValueError("bad data in unit 2")
    return x * 10


def test_a_failing_task_is_returned_as_a_failure_and_the_others_finish(cluster):
    tasks = [Task((i,), _maybe_fail, {"x": i}) for i in range(4)]
    out = dict((t.key[0], r) for t, r in run_tasks(tasks, "dask", {"address": cluster.scheduler_address}))
    assert sorted(out) == [0, 1, 2, 3]
    assert isinstance(out[2], Failure) and out[2].describe() == "ValueError: bad data in unit 2"
    assert [out[i] for i in (0, 1, 3)] == [0, 10, 30]


def test_a_failing_unit_is_recorded_and_the_sweep_goes_on(setup, tmp_path, monkeypatch):
    import eadct.tables._runner as runner

    root, table = setup
    real = runner.run_unit

    def flaky(table, model, data, profile, seed, *args, **kwargs):
        if model == "w/o Convolution" and seed == 1:
            raise ValueError("bad data")
        return real(table, model, data, profile, seed, *args, **kwargs)

    monkeypatch.setattr(runner, "run_unit", flaky)
    counts = run_table(table, "tiny", tmp_path, data_dirs=[root / "data"], log=lambda *_: None, **UNITS)
    assert counts == {"run": 3, "skipped": 0, "missing_data": 0, "failed": 1}
    error = result_path(tmp_path, table, "w/o Convolution", "TinyTabC", "tiny", 1).with_suffix(".error.json")
    assert json.loads(error.read_text())["message"] == "bad data"
    monkeypatch.setattr(runner, "run_unit", real)
    again = run_table(table, "tiny", tmp_path, data_dirs=[root / "data"], log=lambda *_: None, **UNITS)
    assert again == {"run": 1, "skipped": 3, "missing_data": 0, "failed": 0} and not error.exists()


def test_grid_search_through_joblibs_dask_backend_equals_the_local_one(cluster):
    import joblib
    from sklearn.model_selection import GridSearchCV

    from eadct import EADCTClassifier

    X, y = make_panel(n=24)
    grid = {"alpha": [0.1, 0.9]}
    local = GridSearchCV(EADCTClassifier(**TINY), grid, cv=2).fit(X, y)
    with distributed.Client(cluster), joblib.parallel_config(backend="dask"):
        remote = GridSearchCV(EADCTClassifier(**TINY), grid, cv=2, n_jobs=2).fit(X, y)
    np.testing.assert_allclose(remote.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"])
    assert remote.best_params_ == local.best_params_


def test_loky_and_sequential_backends_yield_every_task_once():
    tasks = [Task((i,), _maybe_fail, {"x": i}) for i in range(4)]
    for backend, params in (("none", None), ("loky", {"n_jobs": 2})):
        out = {t.key[0]: r for t, r in run_tasks(tasks, backend, params)}
        assert sorted(out) == [0, 1, 2, 3] and isinstance(out[2], Failure) and out[3] == 30
    with pytest.raises(ValueError, match=r"backend must be one of \['none', 'loky', 'dask', 'ray'\]"):
        list(run_tasks(tasks, "spark"))


def _threads_of_fit(estimator, X, y):
    """A scorer that reports the torch threads the fit used (its last epoch's record)."""
    return float(estimator.history_[-1]["threads"])


def test_grid_search_fits_in_dask_workers_use_the_workers_one_thread(cluster):
    import joblib
    from sklearn.model_selection import GridSearchCV

    from eadct import EADCTClassifier

    X, y = make_panel(n=24)
    params = {k: v for k, v in TINY.items() if k != "n_jobs"}  # the default n_jobs=None: the worker's limit
    with distributed.Client(cluster), joblib.parallel_config(backend="dask"):
        search = GridSearchCV(EADCTClassifier(**params), {"alpha": [0.1, 0.9]}, cv=2, n_jobs=2,
                              scoring=_threads_of_fit, refit=False).fit(X, y)  # fmt: skip
    assert set(search.cv_results_["mean_test_score"]) == {1.0}


def test_ray_sweep_equals_the_sequential_one(setup, tmp_path):
    """Runs where ray is installed (``pip install -e ".[ray]"``; not in ``dev``, so CI skips it)."""
    ray = pytest.importorskip("ray")
    root, table = setup
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run_table(table, "tiny", tmp_path / "none", data_dirs=[root / "data"], log=lambda *_: None, **UNITS)
    finally:
        torch.set_num_threads(threads)
    params = {"num_cpus": 2, "include_dashboard": False}
    try:
        counts = run_table(table, "tiny", tmp_path / "ray", data_dirs=[root / "data"], log=lambda *_: None,
                           backend="ray", backend_params=params, **UNITS)  # fmt: skip

        def fail_on_two(x):  # local, so pickled by value: Ray's workers cannot import the tests
            if x == 2:
                raise ValueError("bad data in unit 2")
            return x * 10

        failed = {t.key[0]: r for t, r in run_tasks([Task((i,), fail_on_two, {"x": i}) for i in range(4)], "ray")}
        again = run_table(table, "tiny", tmp_path / "ray", data_dirs=[root / "data"], backend="ray", **UNITS)
    finally:
        ray.shutdown()
    assert counts == {"run": 4, "skipped": 0, "missing_data": 0, "failed": 0}
    one, other = _results(tmp_path / "none", table), _results(tmp_path / "ray", table)
    assert all(one[u]["value"] == other[u]["value"] and one[u]["hyperparameters"] == other[u]["hyperparameters"]
               for u in one)  # fmt: skip
    assert isinstance(failed[2], Failure) and failed[3] == 30
    assert again == {"run": 0, "skipped": 4, "missing_data": 0, "failed": 0}


def _claims_gpu(x):
    return x + 1


def test_the_local_cluster_gets_the_gpu_its_fits_claim(monkeypatch):
    """gpus_per_task="auto" where the driver sees CUDA (simulated: is_available patched): the local cluster's
    workers declare GPU=1, so a task that claims it runs; before, no worker had it and the sweep waited forever."""
    from eadct.tables._backends import Session

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    session = Session("dask", {"n_workers": 1})
    assert session.gpus == 1.0 and session._resources == {"GPU": 1.0}
    declared = Session("dask", {"resources": {"GPU": 2, "MEM": 1}, "gpus_per_task": 0.5})
    assert declared._resources == {"GPU": 2, "MEM": 1}  # given resources are used as given
    out, worker_resources = {}, {}

    def sweep():
        with session:
            out.update(
                (t.key[0], r) for t, r in session.run([Task((i,), _claims_gpu, {"x": i}, gpu=True) for i in range(2)])
            )
            info = session._client.scheduler_info(n_workers=-1)["workers"].values()
            worker_resources.update(next(iter(info))["resources"])

    runner = threading.Thread(target=sweep, daemon=True)
    runner.start()
    runner.join(timeout=120)
    assert not runner.is_alive(), "a task that claims a GPU waited on the local cluster"
    assert out == {0: 1, 1: 2} and worker_resources == {"GPU": 1.0}


def test_a_gpu_claim_no_local_worker_could_meet_is_refused_before_anything_runs(setup, tmp_path, monkeypatch, capsys):
    """The issue's reproduction on CPU (gpus_per_task=1, no GPU resource), and a declared GPU below the claim:
    a ValueError naming the fixes from run_table, one line and exit 2 from the command line, nothing written."""
    from eadct.tables.cli import main

    root, table = setup
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for params in ({"gpus_per_task": 1}, {"gpus_per_task": 1, "resources": {"GPU": 0.5}}):
        with pytest.raises(ValueError, match="no fit could ever start") as err:
            run_table(
                table,
                "tiny",
                tmp_path / "out",
                data_dirs=[root / "data"],
                backend="dask",
                backend_params=params,
                **UNITS,
            )
        assert '"gpus_per_task": 0' in str(err.value) and '{"resources": {"GPU": 1}}' in str(err.value)
        argv = ["run", str(root / "cfg" / "tiny.toml"), "--profile", "tiny", "--data-dir", str(root / "data")]
        argv += ["--out", str(tmp_path / "out"), "--backend", "dask", "--backend-params", json.dumps(params)]
        assert main(argv) == 2
        text = capsys.readouterr().err
        assert text.startswith("eadct-tables: error: each fit claims gpus_per_task=1 GPU") and text.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_running_cluster_without_the_gpu_resource_warns(cluster):
    tasks = [Task((i,), _maybe_fail, {"x": i}) for i in (0, 1)]  # no claim: they run; a fit would wait
    with pytest.warns(UserWarning, match=r"none of the 2 worker\(s\) of the Dask cluster at .* declares"):
        out = {
            t.key[0]: r for t, r in run_tasks(tasks, "dask", {"address": cluster.scheduler_address, "gpus_per_task": 1})
        }
    assert out == {0: 0, 1: 10}


def _fails_first(log, fails):
    """Log one try in ``log`` (a file: the tries may run in different workers); raise on the first ``fails``."""
    with open(log, "a") as fh:
        fh.write("try\n")
    tries = len(open(log).read().splitlines())
    if tries <= fails:
        raise ValueError(f"try {tries} failed")
    return tries


def test_dask_retries_run_a_task_that_raised_again_and_record_only_the_last_try(cluster, tmp_path):
    address = cluster.scheduler_address
    log = {name: tmp_path / name for name in ("once", "flaky", "broken")}
    [(_, once)] = run_tasks([Task((0,), _fails_first, {"log": log["once"], "fails": 1})], "dask", {"address": address})
    assert isinstance(once, Failure) and once.describe() == "ValueError: try 1 failed"  # default: no retry
    assert log["once"].read_text() == "try\n"
    tasks = [
        Task(("flaky",), _fails_first, {"log": log["flaky"], "fails": 1}),
        Task(("broken",), _fails_first, {"log": log["broken"], "fails": 9}),
    ]
    out = {t.key[0]: r for t, r in run_tasks(tasks, "dask", {"address": address, "retries": 2})}
    assert out["flaky"] == 2  # failed once, then ran again
    assert isinstance(out["broken"], Failure) and out["broken"].describe() == "ValueError: try 3 failed"
    assert "ValueError: try 3 failed" in out["broken"].traceback and log["broken"].read_text() == "try\n" * 3
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="'retries' must be a whole number"):
            run_tasks(tasks, "dask", {"address": address, "retries": bad})
