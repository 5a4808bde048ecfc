"""Where the units and search trials of a sweep run: in this process, or as tasks of an existing engine.

The backend names and the meaning of ``backend_params`` follow sktime's ``parallelize``
(``sktime.utils.parallel``): ``"none"`` (this process, in order), ``"loky"`` (joblib's process pool on this
machine), ``"dask"`` (a ``dask.distributed`` cluster) and ``"ray"``. No scheduler is written here: tasks are
submitted to the engine and their results taken as they finish (:func:`run_tasks`), so that the driver can write
each one as it arrives.

``backend_params`` (a dict; ``--backend-params`` takes it as JSON):

- loky: ``n_jobs`` (default: every core), as ``joblib.Parallel``.
- dask: ``address`` of a running scheduler (default: dask's configuration, e.g. ``DASK_SCHEDULER_ADDRESS``,
  else a ``LocalCluster`` is started); ``n_workers``, ``threads_per_worker`` and ``resources`` for that local
  cluster (default: one single-threaded worker process per core); ``retries`` (default 0): how many more times
  dask runs a task that raised before its failure is recorded. A worker that dies is handled by dask itself:
  its tasks are rescheduled on another worker (``distributed.scheduler.allowed-failures``).
- ray: ``address`` for ``ray.init`` (default: ``ray.init``'s own: ``RAY_ADDRESS`` or a local instance), and
  any other ``ray.init`` argument; ``max_retries`` (default 3) for a task whose worker died.
- every backend but "none": ``gpus_per_task`` (default ``"auto"``: 1 when this process sees a CUDA device,
  else 0), claimed as dask worker resources (``GPU``; start workers with ``--resources GPU=1``) or Ray
  ``num_gpus``, so one GPU runs one fit at a time unless a fraction is given. A local cluster started here
  gets the resource: each worker declares ``{"GPU": gpus_per_task}`` where this process sees CUDA (one fit
  at a time per worker; the workers share this machine's default CUDA device). A claim that its workers could
  never meet (no CUDA and no declared ``GPU``, or a declared ``GPU`` below the claim) is a ValueError before
  anything starts; on a running cluster whose connected workers all lack it, a warning says the fits wait.

In a task, torch uses the worker's share of cores (:func:`worker_threads`), not the machine's.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

__all__ = [
    "BACKENDS",
    "BackendUnavailable",
    "Failure",
    "Session",
    "Task",
    "TaskFailed",
    "call_task",
    "run_tasks",
    "worker_threads",
]

BACKENDS = ("none", "loky", "dask", "ray")
_EXTRAS = {"dask": ("distributed", "dask.distributed"), "ray": ("ray", "ray")}  # backend: (module, what to install)


class BackendUnavailable(ImportError):
    """The backend's package (an extra of eadct) is not installed."""


@dataclass
class Task:
    """``fn(**kwargs)`` to run somewhere; ``key`` names it for the driver."""

    key: tuple
    fn: Callable
    kwargs: dict = field(default_factory=dict)
    gpu: bool = False  # whether the task trains a network (and claims a GPU when the backend has them)


@dataclass
class Failure:
    """What a task raised (its type, message and traceback as text), returned instead of a result."""

    error: str
    message: str
    traceback: str = field(repr=False, default="")

    def describe(self) -> str:
        return f"{self.error}: {self.message}"


class TaskFailed(Exception):
    """A task's :class:`Failure`, raised in the worker so that the engine retries the task (dask's ``retries``);
    the driver records ``failure`` once no try is left."""

    def __init__(self, failure: Failure):
        super().__init__(failure.describe())
        self.failure = failure

    def __reduce__(self):  # travels back to the driver whole, whatever the original error was
        return TaskFailed, (self.failure,)


def call_task(fn, kwargs: dict, in_worker: bool = False, keep_freed: bool = False, raise_failure: bool = False):
    """``fn(**kwargs)``, or the :class:`Failure` it raised (the driver records it and the sweep goes on);
    ``raise_failure`` raises it as :class:`TaskFailed` instead, for an engine that retries a task that raised. In
    a worker (``in_worker``), torch first takes the worker's share of cores (:func:`worker_threads`), and
    ``keep_freed`` applies :func:`eadct.runtime.keep_freed_memory` as the driver did (dask's nanny sets
    ``MALLOC_TRIM_THRESHOLD_`` low, which makes every fit's large allocations a round trip to the kernel)."""
    try:
        if in_worker:
            import torch

            from ..runtime import keep_freed_memory

            torch.set_num_threads(worker_threads())
            if keep_freed:
                keep_freed_memory()
        return fn(**kwargs)
    except Exception as err:  # any error of a unit is recorded, never lost
        failure = Failure(type(err).__name__, str(err), traceback.format_exc())
        if raise_failure:
            raise TaskFailed(failure) from None
        return failure


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
    first :meth:`run` that has tasks, so a sweep with nothing to do starts nothing, and stops on exit.

    Everything that can be checked without starting the engine is checked here: the backend's package
    (:class:`BackendUnavailable` naming the extra to install), ``gpus_per_task``, dask's ``retries``, and whether
    the workers of a local Dask cluster could run a task that claims GPUs (a ValueError instead of a sweep that
    waits forever)."""

    def __init__(self, backend: str = "none", backend_params: dict | None = None):
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {list(BACKENDS)}, got {backend!r}.")
        self.backend, self.params = backend, dict(backend_params or {})
        self._client = self._cluster = None
        self._address = self._resources = None
        if backend in _EXTRAS:
            module, package = _EXTRAS[backend]
            try:
                importlib.import_module(module)
            except ImportError as err:
                raise BackendUnavailable(
                    f"backend {backend!r} needs {package}, which is not installed here ({err}): "
                    f'pip install "eadct[{backend}]", or choose another backend ({", ".join(BACKENDS)}).'
                ) from None
        self.gpus = _gpus(self.params) if backend != "none" else 0.0
        self.retries = self.params.get("retries", 0)
        if backend == "dask":
            if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
                raise ValueError(f"backend_params 'retries' must be a whole number >= 0, got {self.retries!r}.")
            import dask

            self._address = self.params.get("address") or dask.config.get("scheduler-address", None)
            if not self._address:
                self._resources = _local_resources(self.params, self.gpus)

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
            yield from ((t, call_task(t.fn, t.kwargs)) for t in tasks)
        elif self.backend == "loky":
            yield from _loky(tasks, self.params)
        elif self.backend == "dask":
            yield from _dask(self._dask_client(), tasks, self.gpus, self.retries)
        else:
            yield from _ray(tasks, self.params, self.gpus)

    def _dask_client(self):
        if self._client is None:
            from distributed import Client, LocalCluster

            if not self._address:
                self._cluster = LocalCluster(
                    n_workers=self.params.get("n_workers", os.cpu_count() or 1),
                    threads_per_worker=self.params.get("threads_per_worker", 1),
                    processes=True,
                    resources=self._resources,
                    dashboard_address=self.params.get("dashboard_address", ":0"),
                )
            self._client = Client(self._address or self._cluster)
            if self._address and self.gpus:
                _warn_unmet_claim(self._client, self._address, self.gpus)
        return self._client


def _keeping() -> bool:
    from ..runtime import keeps_freed_memory

    return keeps_freed_memory()


def _gpus(params: dict) -> float:
    value = params.get("gpus_per_task", "auto")
    if value == "auto":
        import torch

        return 1.0 if torch.cuda.is_available() else 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"gpus_per_task must be 'auto' or a number of GPUs >= 0 (e.g. 1 or 0.5), got {value!r}.")
    return float(value)


def _local_resources(params: dict, gpus: float) -> dict | None:
    """The resources each worker of the local Dask cluster declares: those given (``resources``, else dask's
    ``distributed.worker.resources``), with ``GPU`` added where the fits claim GPUs and this process sees CUDA;
    a ValueError where no worker could ever run a fit that claims ``gpus``."""
    import dask

    given = params.get("resources")
    declared = dict(given if given is not None else dask.config.get("distributed.worker.resources", None) or {})
    if not gpus:
        return given
    fix = (
        'set "gpus_per_task": 0 in backend_params to claim none, or declare the workers\' resource, e.g. '
        f'{{"resources": {{"GPU": {gpus:g}}}}}'
    )
    if "GPU" in declared:
        if float(declared["GPU"]) < gpus:
            raise ValueError(
                f"each fit claims gpus_per_task={gpus:g} GPU, but the local Dask cluster's workers declare "
                f"GPU={float(declared['GPU']):g}, so no fit could ever start and the sweep would wait forever; {fix}."
            )
        return declared
    import torch

    if not torch.cuda.is_available():
        raise ValueError(
            f"each fit claims gpus_per_task={gpus:g} GPU, but this process sees no CUDA device and the local Dask "
            f"cluster's workers declare no GPU resource, so no fit could ever start and the sweep would wait "
            f"forever; {fix}."
        )
    return {**declared, "GPU": gpus}


def _warn_unmet_claim(client, address: str, gpus: float) -> None:
    """A warning when the running cluster has workers and none of them declares the ``GPU`` a fit claims: its
    fitting tasks wait until such a worker joins (one may still be starting, e.g. a queued SLURM job)."""
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    if workers and not any(w.get("resources", {}).get("GPU", 0) >= gpus for w in workers.values()):
        warnings.warn(
            f"each fit claims gpus_per_task={gpus:g} GPU, but none of the {len(workers)} worker(s) of the Dask "
            f"cluster at {address} declares that resource; the fits wait until such a worker joins (start "
            f"workers with --resources GPU=1, or set gpus_per_task to 0).",
            stacklevel=2,
        )


def _loky(tasks: list[Task], params: dict) -> Iterator:
    from joblib import Parallel, delayed

    run = Parallel(n_jobs=params.get("n_jobs", -1), backend="loky", return_as="generator_unordered")
    results = run(delayed(_indexed)(i, t.fn, t.kwargs) for i, t in enumerate(tasks))
    return ((tasks[i], result) for i, result in results)


def _indexed(i, fn, kwargs):
    return i, call_task(fn, kwargs, True, _keeping())


def _dask(client, tasks: list[Task], gpus: float, retries: int) -> Iterator:
    """Submit ``tasks``; with ``retries``, a task that raised runs again (dask's ``retries``) and its
    :class:`Failure` is recorded after the last try."""
    from distributed import as_completed

    keep, futures, by_key = _keeping(), [], {}
    for t in tasks:
        claim = {"GPU": gpus} if t.gpu and gpus else None
        key = f"{t.fn.__name__}-{uuid.uuid4().hex}"  # names the unit or trial on the dashboard
        future = client.submit(
            call_task, t.fn, t.kwargs, True, keep, retries > 0, key=key, retries=retries, resources=claim
        )
        futures.append(future)
        by_key[future.key] = t
    for future in as_completed(futures):
        try:
            result = future.result()
        except TaskFailed as err:  # raised on every try
            result = err.failure
        except Exception as err:  # lost more times than dask allows (workers killed again and again)
            result = Failure(type(err).__name__, str(err))
        yield by_key[future.key], result


def _ray(tasks: list[Task], params: dict, gpus: float) -> Iterator:
    import ray

    if not ray.is_initialized():
        ray.init(**{k: v for k, v in params.items() if k not in ("gpus_per_task", "max_retries")})
    retries = params.get("max_retries", 3)
    remote = ray.remote(call_task)
    pending = {}
    for t in tasks:
        options = dict(num_cpus=1, num_gpus=gpus if t.gpu else 0, max_retries=retries)
        pending[remote.options(**options).remote(t.fn, t.kwargs, True, _keeping())] = t
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            try:
                result = ray.get(ref)
            except Exception as err:  # the worker died more often than max_retries
                result = Failure(type(err).__name__, str(err))
            yield pending.pop(ref), result
