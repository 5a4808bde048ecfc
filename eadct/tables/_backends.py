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

__all__ = ["BACKENDS", "Failure", "Session", "Task", "call_task", "run_tasks", "worker_threads"]

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


def call_task(fn, args, in_worker: bool = False, keep_freed: bool = False):
    """``fn(*args)``, or the :class:`Failure` it raised (the driver records it and the sweep goes on). In a
    worker (``in_worker``), torch first takes the worker's share of cores (:func:`worker_threads`), and
    ``keep_freed`` applies :func:`eadct.runtime.keep_freed_memory` as the driver did (dask's nanny sets
    ``MALLOC_TRIM_THRESHOLD_`` low, which makes every fit's large allocations a round trip to the kernel)."""
    try:
        if in_worker:
            import torch

            from ..runtime import keep_freed_memory

            torch.set_num_threads(worker_threads())
            if keep_freed:
                keep_freed_memory()
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
    """Yield ``(task, result)`` as each task finishes, in a :class:`Session` of its own (see there)."""
    session = Session(backend, backend_params)
    tasks = list(tasks)

    def results():
        with session:
            yield from session.run(tasks)

    return results()


class Session:
    """One connection to ``backend`` for a whole sweep: the engine (a local Dask cluster, Ray) starts at the
    first :meth:`run` that has tasks, so a sweep with nothing to do starts nothing, and stops on exit."""

    def __init__(self, backend: str = "none", backend_params: dict | None = None):
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {list(BACKENDS)}, got {backend!r}.")
        self.backend, self.params = backend, dict(backend_params or {})
        self._client = self._cluster = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()
        self._client = self._cluster = None

    def run(self, tasks: Iterable[Task]) -> Iterator:
        """Yield ``(task, result)`` as each task finishes; ``result`` is a :class:`Failure` when the task raised.
        The order is the order of completion (the order of ``tasks`` for "none"); every task is yielded once."""
        tasks = list(tasks)
        if not tasks:
            return
        if self.backend == "none":
            yield from ((t, call_task(t.fn, t.args)) for t in tasks)
        elif self.backend == "loky":
            yield from _loky(tasks, self.params)
        elif self.backend == "dask":
            yield from _dask(self._dask_client(), tasks, self.params)
        else:
            yield from _ray(tasks, self.params)

    def _dask_client(self):
        if self._client is None:
            try:
                import dask
                from distributed import Client, LocalCluster
            except ImportError as err:
                raise ImportError("backend='dask' needs dask.distributed: pip install 'eadct[dask]'.") from err
            address = self.params.get("address") or dask.config.get("scheduler-address", None)
            if not address:
                self._cluster = LocalCluster(
                    n_workers=self.params.get("n_workers", os.cpu_count() or 1),
                    threads_per_worker=self.params.get("threads_per_worker", 1),
                    processes=True,
                    resources=self.params.get("resources"),
                    dashboard_address=self.params.get("dashboard_address", ":0"),
                )
            self._client = Client(address or self._cluster)
        return self._client


def _keeping() -> bool:
    from ..runtime import keeps_freed_memory

    return keeps_freed_memory()


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
    return i, call_task(fn, args, True, _keeping())


def _dask(client, tasks: list[Task], params: dict) -> Iterator:
    from distributed import as_completed

    gpus, retries, keep = _gpus(params), params.get("retries", 1), _keeping()
    futures, by_key = [], {}
    for t in tasks:
        claim = {"GPU": gpus} if t.gpu and gpus else None
        key = f"{t.fn.__name__}-{uuid.uuid4().hex}"  # names the unit or trial on the dashboard
        future = client.submit(call_task, t.fn, t.args, True, keep, key=key, retries=retries, resources=claim)
        futures.append(future)
        by_key[future.key] = t
    for future in as_completed(futures):
        try:
            result = future.result()
        except Exception as err:  # lost more times than dask allows (workers killed again and again)
            result = Failure(type(err).__name__, str(err))
        yield by_key[future.key], result


def _ray(tasks: list[Task], params: dict) -> Iterator:
    try:
        import ray
    except ImportError as err:
        raise ImportError("backend='ray' needs ray: pip install 'eadct[ray]'.") from err
    if not ray.is_initialized():
        ray.init(**{k: v for k, v in params.items() if k not in ("gpus_per_task", "max_retries")})
    gpus, retries = _gpus(params), params.get("max_retries", 3)
    remote = ray.remote(call_task)
    pending = {}
    for t in tasks:
        options = dict(num_cpus=1, num_gpus=gpus if t.gpu else 0, max_retries=retries)
        pending[remote.options(**options).remote(t.fn, t.args, True, _keeping())] = t
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            try:
                result = ray.get(ref)
            except Exception as err:  # the worker died more often than max_retries
                result = Failure(type(err).__name__, str(err))
            yield pending.pop(ref), result
