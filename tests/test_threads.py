"""Thread control (issue 17, point 3; issue 84, item 5): ``n_jobs`` sets torch's threads once per call, from the
environment only, and restores them."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel
from sklearn.model_selection import cross_validate
from threadpoolctl import threadpool_limits

import eadct.runtime as runtime
from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.runtime import TorchThreads, resolve_threads

DEFAULT_THREADS = dict(TINY, n_jobs=None)


@pytest.fixture
def process_threads():
    """Run the test with the process at 2 torch threads, and put back what it had."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield 2
    torch.set_num_threads(before)


def _threads_used(estimator) -> set[int]:
    return {r["threads"] for r in estimator.history_}


@pytest.mark.parametrize("n_jobs", [None, 1, -1, 3])
def test_fit_predict_and_maps_restore_the_process_threads(process_threads, n_jobs):
    X, y = make_panel()
    clf = EADCTClassifier(**dict(TINY, n_jobs=n_jobs)).fit(X, y)
    assert torch.get_num_threads() == process_threads
    clf.predict_proba(X)
    clf.transform(X)
    clf.attention_maps(X[:2])
    assert torch.get_num_threads() == process_threads
    if n_jobs == 3:
        assert _threads_used(clf) == {min(3, runtime.available_cores())}


@pytest.mark.parametrize("Estimator", [EADCTRegressor, EADCTRepresentation])
def test_every_estimator_restores_threads(process_threads, Estimator):
    X, y = make_panel()
    params = dict(TINY, n_jobs=1)
    if Estimator is EADCTRepresentation:
        params.pop("pretrain_epochs")
        Estimator(**params).fit(X).transform(X)
    else:
        Estimator(**params).fit(X, y.astype(float)).predict(X)
    assert torch.get_num_threads() == process_threads


def test_threads_are_restored_when_the_fit_fails(process_threads, monkeypatch):
    import eadct.estimators._base as base

    def boom(*args, **kwargs):
        assert torch.get_num_threads() == 1
        raise RuntimeError("training failed")

    monkeypatch.setattr(base, "train_two_stage", boom)
    X, y = make_panel()
    with pytest.raises(RuntimeError, match="training failed"):
        EADCTClassifier(**dict(TINY, n_jobs=1)).fit(X, y)
    assert torch.get_num_threads() == process_threads


def test_default_respects_an_enclosing_threadpoolctl_limit(process_threads):
    X, y = make_panel()
    with threadpool_limits(limits=1, user_api="openmp"):
        limited = EADCTClassifier(**DEFAULT_THREADS).fit(X, y)
    free = EADCTClassifier(**DEFAULT_THREADS).fit(X, y)
    assert _threads_used(limited) == {1}
    assert _threads_used(free) == {min(2, runtime.available_cores())}


def test_resolve_threads_reads_n_jobs_as_joblib_does(monkeypatch):
    monkeypatch.setattr(runtime, "available_cores", lambda: 8)
    assert resolve_threads(None, limit=2) == 2  # the limit in force
    assert resolve_threads(None, limit=16) == 8  # at most the usable cores (affinity, container quota)
    assert resolve_threads(-1, limit=2) == 8
    assert resolve_threads(-2, limit=2) == 7
    assert resolve_threads(-20, limit=2) == 1
    assert resolve_threads(4, limit=1) == 4
    assert resolve_threads(64, limit=1) == 8  # never more threads than cores: a model fitted elsewhere, or a file
    assert resolve_threads(10**6, limit=1) == resolve_threads(2**63, limit=1) == 8  # (10**6 aborted libgomp)
    with TorchThreads(1) as threads:
        assert threads.count == 1 and torch.get_num_threads() == 1


def test_same_seed_same_result_beside_a_busy_process(process_threads):
    """The default reads the environment once per call, never the load: a fit beside a process that keeps a core
    busy runs on the same threads as one without it, so the same random_state predicts identically. (Before, the
    default counted busy cores before every epoch, and a fit beside a busy process ran on fewer threads, which
    round differently.)"""
    import subprocess
    import sys
    import time

    if runtime.available_cores() < 2:
        pytest.skip("one usable core: every thread count rule gives one thread")
    X, y = make_panel()
    params = dict(DEFAULT_THREADS, max_epochs=4)
    quiet = EADCTClassifier(**params).fit(X, y)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)  # the spinner is running before the fit starts
        busy = EADCTClassifier(**params).fit(X, y)
        beside = busy.predict_proba(X)
    finally:
        spinner.kill()
        spinner.wait()
    assert _threads_used(quiet) == _threads_used(busy) == {2}
    np.testing.assert_array_equal(quiet.predict_proba(X), beside)


@pytest.mark.parametrize("bad", [0, 1.5, "2", True])
def test_invalid_n_jobs_is_named(bad):
    X, y = make_panel()
    with pytest.raises(ValueError, match="n_jobs must be None or a non-zero int"):
        EADCTClassifier(**dict(TINY, n_jobs=bad)).fit(X, y)


def test_n_jobs_does_not_change_the_checkpoint(tmp_path, process_threads):
    """A fit resumed with another n_jobs still finds its checkpoint (threads are not a result setting)."""
    X, y = make_panel()
    path = tmp_path / "fit.ckpt"
    first = EADCTClassifier(**dict(TINY, n_jobs=1, checkpoint_path=str(path))).fit(X, y)
    again = EADCTClassifier(**dict(TINY, n_jobs=2, checkpoint_path=str(path))).fit(X, y)
    assert _threads_used(again) == {1}  # loaded from the checkpoint, not retrained with 2 threads
    np.testing.assert_array_equal(first.predict_proba(X), again.predict_proba(X))


def test_cross_validation_workers_get_their_share():
    """joblib's workers start with cpu_count // n_jobs threads; the default fit stays within that."""
    X, y = make_panel()
    out = cross_validate(EADCTClassifier(**DEFAULT_THREADS), X, y, cv=2, n_jobs=2, return_estimator=True)
    share = max(1, runtime.available_cores() // 2)
    for est in out["estimator"]:
        assert max(_threads_used(est)) <= share


def test_a_tables_worker_fits_within_its_share(process_threads, monkeypatch):
    """The tables runner's workers set torch to their share of the cores before a task (a loky worker's
    OMP_NUM_THREADS, cores // workers), and the default n_jobs of the task's fits stays within it."""
    from eadct.tables._backends import call_task

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    X, y = make_panel()
    fitted = call_task(lambda: EADCTClassifier(**DEFAULT_THREADS).fit(X, y), {}, in_worker=True)
    assert _threads_used(fitted) == {1}
