"""Thread control (issue 17, point 3): ``n_jobs`` sets torch's threads for the call and restores them."""

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
        assert _threads_used(clf) == {3}


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


def test_default_respects_an_enclosing_threadpoolctl_limit(process_threads, monkeypatch):
    monkeypatch.setattr(runtime, "busy_cores", lambda: 0)
    X, y = make_panel()
    with threadpool_limits(limits=1, user_api="openmp"):
        limited = EADCTClassifier(**DEFAULT_THREADS).fit(X, y)
    free = EADCTClassifier(**DEFAULT_THREADS).fit(X, y)
    assert _threads_used(limited) == {1}
    assert _threads_used(free) == {min(2, runtime.available_cores())}


def test_default_follows_the_load_before_every_epoch(process_threads, monkeypatch):
    """Busy cores seen before each epoch: none, then every core, then none again."""
    cores = runtime.available_cores()
    looks = iter([0, 0] + [cores] * 3 + [0] * 100)
    monkeypatch.setattr(runtime, "busy_cores", lambda: next(looks))
    X, y = make_panel()
    clf = EADCTClassifier(**dict(DEFAULT_THREADS, max_epochs=4, n_iter_no_change=None)).fit(X, y)
    used = [r["threads"] for r in clf.history_]
    assert used[1:4] == [1, 1, 1]
    assert used[-1] == min(2, cores)
    assert torch.get_num_threads() == process_threads


def test_resolve_threads_reads_n_jobs_as_joblib_does(monkeypatch):
    monkeypatch.setattr(runtime, "available_cores", lambda: 8)
    monkeypatch.setattr(runtime, "busy_cores", lambda: 3)
    assert resolve_threads(None, limit=8) == 5  # the idle cores
    assert resolve_threads(None, limit=2) == 2  # the limit in force
    assert resolve_threads(-1, limit=2) == 8
    assert resolve_threads(-2, limit=2) == 7
    assert resolve_threads(-20, limit=2) == 1
    assert resolve_threads(4, limit=1) == 4
    monkeypatch.setattr(runtime, "busy_cores", lambda: 12)
    assert resolve_threads(None, limit=8) == 1
    monkeypatch.setattr(runtime, "busy_cores", lambda: None)  # a system that does not say: the limit
    assert resolve_threads(None, limit=6) == 6


def test_busy_cores_does_not_count_this_process():
    """This process's own torch threads are not "other processes" (Linux only)."""
    busy = runtime.busy_cores()
    if busy is None:
        pytest.skip("no /proc/stat here")
    assert 0 <= busy
    with TorchThreads(1) as threads:
        assert threads.used == [1]


def test_busy_cores_counts_a_busy_process_and_not_a_passing_thread(monkeypatch):
    """A process that keeps a core for the whole reading window counts; one busy reading among quiet ones
    does not (the least reading counts, and the readings stop at the first quiet one)."""
    import subprocess
    import sys
    import time

    if runtime.busy_cores() is None:
        pytest.skip("no /proc/stat here")
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        assert max(runtime.busy_cores() for _ in range(5)) >= 1
    finally:
        spinner.kill()
        spinner.wait()
    counts = iter([1, 0, 1])  # other running threads seen by three successive readings
    monkeypatch.setattr(runtime, "_own_running_threads", lambda: 0)
    monkeypatch.setattr(runtime, "open", lambda *a, **k: _ProcStat(next(counts)), raising=False)
    monkeypatch.setattr(runtime.time, "sleep", lambda s: None)
    assert runtime.busy_cores() == 0


class _ProcStat:
    def __init__(self, running: int):
        self.lines = [f"procs_running {running}\n"]

    def __enter__(self):
        return iter(self.lines)

    def __exit__(self, *exc):
        return False


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
