"""Where the units and search trials of a sweep run: in this process, or as tasks of an existing engine.

The backend names and the meaning of ``backend_params`` follow sktime's ``parallelize``
(``sktime.utils.parallel``): ``"none"`` (this process, in order), ``"loky"`` (joblib's process pool on this
machine), ``"dask"`` (a ``dask.distributed`` cluster) and ``"ray"``. No scheduler is written here: tasks are
submitted to the engine and their results taken as they finish (:func:`run_tasks`), so that the driver can write
each one as it arrives.

``backend_params`` (a dict; ``--backend-params`` takes it as JSON):

- loky: ``n_jobs`` (default: every core), as ``joblib.Parallel``.
- dask: ``address`` of a running scheduler (default: dask's configuration, e.g. ``DASK_SCHEDULER_ADDRESS``,
  else a ``LocalCluster`` is started); ``n_workers`` and ``threads_per_worker`` for that local cluster
  (default: one single-threaded worker process per core); ``retries`` (default 1) for a task that raised.
  A worker that dies is handled by dask itself: its tasks are rescheduled on another worker.
- ray: ``address`` for ``ray.init`` (default: ``ray.init``'s own: ``RAY_ADDRESS`` or a local instance), and
  any other ``ray.init`` argument; ``max_retries`` (default 3) for a task whose worker died.
- every backend but "none": ``gpus_per_task`` (default ``"auto"``: 1 when this process sees a CUDA device,
  else 0), claimed as dask worker resources (``GPU``; start workers with ``--resources GPU=1``) or Ray
  ``num_gpus``, so one GPU runs one fit at a time unless a fraction is given.

In a task, torch uses the worker's share of cores (:func:`worker_threads`), not the machine's.
"""

from __future__ import annotations

import os
import sys
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

__all__ = ["BACKENDS", "Failure", "Task", "call_task", "run_tasks", "worker_threads"]

BACKENDS = ("none", "loky", "dask", "ray")


@dataclass
class Task:
    """``fn(*args)`` to run somewhere; ``key`` names it for the driver."""

    key: tuple
    fn: Callable
    args: tuple = ()
    gpu: bool = False  # whether the task trains a network (and claims a GPU when the backend has them)


@dataclass
class Failure:
    """What a task raised (its type, message and traceback as text), returned instead of a result."""

    error: str
    message: str
    traceback: str = field(repr=False, default="")

    def describe(self) -> str:
        return f"{self.error}: {self.message}"


def call_task(fn, args, in_worker: bool = False):
    """``fn(*args)``, or the :class:`Failure` it raised (the driver records it and the sweep goes on). In a
    worker (``in_worker``), torch first takes the worker's share of cores (:func:`worker_threads`)."""
    try:
        if in_worker:
            import torch

            torch.set_num_threads(worker_threads())
        return fn(*args)
    except Exception as err:  # any error of a unit is recorded, never lost
        return Failure(type(err).__name__, str(err), traceback.format_exc())


def worker_threads() -> int:
    """The cores this worker may use: a dask worker's ``nthreads``, Ray's assigned CPUs, else the
    ``OMP_NUM_THREADS`` that joblib's loky sets for its workers (cores // workers), else torch's count."""
    if "distributed" in sys.modules:
        try:
            return max(1, int(sys.modules["distributed"].get_worker().state.nthreads))
        except ValueError:  # not in a dask worker
            pass
    if "ray" in sys.modules:
        try:
            return max(1, int(sys.modules["ray"].get_runtime_context().get_assigned_resources().get("CPU", 1)))
        except Exception:  # not in a Ray worker
            pass
    if os.environ.get("OMP_NUM_THREADS", "").isdigit():
        return max(1, int(os.environ["OMP_NUM_THREADS"]))
    import torch

    return torch.get_num_threads()


def run_tasks(tasks: Iterable[Task], backend: str = "none", backend_params: dict | None = None) -> Iterator:
    """Yield ``(task, result)`` as each task finishes; ``result`` is a :class:`Failure` when the task raised.

    The order is the order of completion (the order of ``tasks`` for ``"none"``); every task is yielded once.
    """
    tasks, params = list(tasks), dict(backend_params or {})
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {list(BACKENDS)}, got {backend!r}.")
    if not tasks:
        return iter(())
    if backend == "none":
        return ((t, call_task(t.fn, t.args)) for t in tasks)
    return {"loky": _loky, "dask": _dask, "ray": _ray}[backend](tasks, params)


def _gpus(params: dict) -> float:
    value = params.get("gpus_per_task", "auto")
    if value == "auto":
        import torch

        return 1.0 if torch.cuda.is_available() else 0.0
    return float(value)


def _loky(tasks: list[Task], params: dict) -> Iterator:
    from joblib import Parallel, delayed

    run = Parallel(n_jobs=params.get("n_jobs", -1), backend="loky", return_as="generator_unordered")
    results = run(delayed(_indexed)(i, t.fn, t.args) for i, t in enumerate(tasks))
    return ((tasks[i], result) for i, result in results)


def _indexed(i, fn, args):
    return i, call_task(fn, args, in_worker=True)


def _dask(tasks: list[Task], params: dict) -> Iterator:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as err:
        raise ImportError("backend='dask' needs dask.distributed: pip install 'eadct[dask]'.") from err
    import dask

    address = params.get("address") or dask.config.get("scheduler-address", None)
    if address:
        client, cluster = Client(address), None
    else:
        n_workers = params.get("n_workers", os.cpu_count() or 1)
        cluster = LocalCluster(
            n_workers=n_workers, threads_per_worker=params.get("threads_per_worker", 1), processes=True,
            resources=params.get("resources"),
        )  # fmt: skip
        client = Client(cluster)
    gpus = _gpus(params)
    retries = params.get("retries", 1)

    def results():
        try:
            futures, by_key = [], {}
            for t in tasks:
                claim = {"GPU": gpus} if t.gpu and gpus else None
                key = f"{t.fn.__name__}-{uuid.uuid4().hex}"  # names the unit or trial on the dashboard
                future = client.submit(call_task, t.fn, t.args, True, key=key, retries=retries, resources=claim)
                futures.append(future)
                by_key[future.key] = t
            for future in as_completed(futures):
                try:
                    result = future.result()
                except Exception as err:  # lost more times than dask allows (workers killed again and again)
                    result = Failure(type(err).__name__, str(err))
                yield by_key[future.key], result
        finally:
            client.close()
            if cluster is not None:
                cluster.close()

    return results()


def _ray(tasks: list[Task], params: dict) -> Iterator:
    try:
        import ray
    except ImportError as err:
        raise ImportError("backend='ray' needs ray: pip install 'eadct[ray]'.") from err
    init = {k: v for k, v in params.items() if k not in ("gpus_per_task", "max_retries")}
    if not ray.is_initialized():
        ray.init(**init)
    gpus, retries = _gpus(params), params.get("max_retries", 3)
    remote = ray.remote(call_task)

    def results():
        pending = {}
        for t in tasks:
            ref = remote.options(num_cpus=1, num_gpus=gpus if t.gpu else 0, max_retries=retries).remote(
                t.fn, t.args, True
            )
            pending[ref] = t
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                try:
                    result = ray.get(ref)
                except Exception as err:  # the worker died more often than max_retries
                    result = Failure(type(err).__name__, str(err))
                yield pending.pop(ref), result

    return results()
