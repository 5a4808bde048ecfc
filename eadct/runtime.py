"""CPU runtime settings: the torch threads of a call (:class:`TorchThreads`, the estimators' ``n_jobs``) and
glibc's handling of freed memory (:func:`keep_freed_memory`, opt-in: it changes the whole process)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os

__all__ = [
    "TorchThreads",
    "available_cores",
    "keep_freed_memory",
    "keeps_freed_memory",
    "resolve_threads",
]

_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
_keeping = False


def keep_freed_memory(enable: bool = True) -> bool:
    """Make glibc keep freed memory for reuse instead of handing large blocks back to the OS.

    Every (B, K, N, N) attention map is a large allocation, which glibc serves with a fresh ``mmap``
    whose pages are faulted in (and zeroed by the kernel) on first touch, then unmapped when freed. Keeping
    them on the heap avoids that work, which makes attention steps with large maps much faster on the CPU
    (``benchmarks/attention_speed_memory.py --keep-freed-memory``; docs/long_series.md). The cost: the
    process keeps its peak memory until it exits. The same effect without code: ``MALLOC_MMAP_MAX_=0
    MALLOC_TRIM_THRESHOLD_=68719476736`` in the environment.

    Parameters
    ----------
    enable : bool
        True keeps freed memory; False restores glibc's defaults for new allocations.

    Returns
    -------
    bool
        Whether the setting was applied (False where the C library is not glibc).
    """
    global _keeping
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError, TypeError):
        return False
    if enable:
        ok = mallopt(_M_MMAP_MAX, 0) and mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)
    else:
        ok = mallopt(_M_MMAP_MAX, 65536) and mallopt(_M_TRIM_THRESHOLD, 128 * 1024)
    _keeping = bool(ok) and enable
    return bool(ok)


def keeps_freed_memory() -> bool:
    """Whether this process keeps freed memory: :func:`keep_freed_memory` is on, or ``MALLOC_MMAP_MAX_=0``.

    ``recompute_attention="auto"`` reads it: without page faults on fresh maps, stored maps measured
    faster than the blocked path on CPU (docs/long_series.md).
    """
    return _keeping or os.environ.get("MALLOC_MMAP_MAX_") == "0"


# ---------------------------------------------------------------------------------------------- threads
def available_cores() -> int:
    """CPU cores this process may use: its affinity mask and any cgroup (container) quota, as
    :func:`joblib.cpu_count` counts them."""
    from joblib import cpu_count

    return max(1, int(cpu_count()))


def resolve_threads(n_jobs, limit: int) -> int:
    """The torch threads for ``n_jobs`` (the estimators' parameter, joblib's meaning for ints).

    None: the ``limit`` in force (``torch.get_num_threads()`` when the call started, which
    ``OMP_NUM_THREADS``, a ``threadpoolctl.threadpool_limits`` block, a joblib worker's share or the caller's
    ``torch.set_num_threads`` lowers), and no more than :func:`available_cores` (the CPU affinity and any
    container quota). It reads only this setting of the process, never the machine's load, so the same call in
    the same environment always gets the same count, and with it the same rounding and the same results. A
    positive int: that many, and no more than :func:`available_cores` (intra-op threads beyond the cores only
    contend; and a model fitted with ``n_jobs=64``, or a file that says ``n_jobs=10**6``, must not start that many
    threads here); -1: every available core; -2: all but one, and so on.
    """
    if n_jobs is None:
        return max(1, min(limit, available_cores()))
    if n_jobs < 0:
        return max(1, available_cores() + 1 + n_jobs)
    return min(int(n_jobs), available_cores())


class TorchThreads:
    """Sets torch's intra-op threads for one call (``with TorchThreads(n_jobs) as threads:``), once, from
    :func:`resolve_threads`, and restores the process's count afterwards. ``threads.count`` is the count set."""

    def __init__(self, n_jobs=None):
        self.n_jobs = n_jobs
        self.count: int | None = None

    def __enter__(self) -> TorchThreads:
        import torch

        self._before = torch.get_num_threads()
        self.count = resolve_threads(self.n_jobs, self._before)
        if self.count != self._before:
            torch.set_num_threads(self.count)
        return self

    def __exit__(self, *exc) -> None:
        import torch

        if torch.get_num_threads() != self._before:
            torch.set_num_threads(self._before)
