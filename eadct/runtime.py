"""CPU runtime settings: the torch threads of a call (:class:`TorchThreads`, the estimators' ``n_jobs``) and
glibc's handling of freed memory (:func:`keep_freed_memory`, opt-in: it changes the whole process)."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import time

__all__ = [
    "TorchThreads",
    "available_cores",
    "busy_cores",
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


def _own_running_threads() -> int:
    running = 0
    for stat in os.scandir("/proc/self/task"):
        try:
            with open(f"{stat.path}/stat") as fh:
                running += fh.read().rpartition(")")[2].split()[0] == "R"
        except (OSError, IndexError):
            continue
    return running


#: Readings of the load :func:`busy_cores` takes at most, and the seconds between them: a core counts as busy
#: only if it is busy in every reading over about 20 ms, so that a passing thread (an OpenMP worker changing
#: state between two reads, a short-lived system task) does not make an epoch run on fewer threads
#: (measured in docs/threads.md).
BUSY_READINGS, BUSY_READING_GAP_S = 5, 0.005


def busy_cores(readings: int = BUSY_READINGS, gap_s: float = BUSY_READING_GAP_S) -> int | None:
    """Threads of other processes that are running or waiting for a core now (Linux: ``procs_running``
    of ``/proc/stat`` less this process's running threads, counted just before and just after); the least
    of ``readings`` readings ``gap_s`` apart (stopping at the first 0), so that a passing thread does not
    count; None where the system does not say."""
    seen = []
    for i in range(readings):
        try:
            own = _own_running_threads()
            with open("/proc/stat") as fh:
                total = next(int(line.split()[1]) for line in fh if line.startswith("procs_running"))
            seen.append(max(0, total - max(own, _own_running_threads())))
        except (OSError, StopIteration, ValueError):
            return None
        if seen[-1] == 0:
            return 0
        if i < readings - 1:
            time.sleep(gap_s)
    return min(seen)


def resolve_threads(n_jobs, limit: int) -> int:
    """The torch threads for ``n_jobs`` (the estimators' parameter, joblib's meaning for ints).

    None: the ``limit`` in force (``torch.get_num_threads()`` when the call started, which a
    ``threadpoolctl.threadpool_limits`` block, ``OMP_NUM_THREADS``, a joblib worker's share or the caller's
    ``torch.set_num_threads`` lowers), and no more than the cores that other processes leave idle (at least
    1), so that a fit beside busy processes does not oversubscribe the machine. A positive int: that many;
    -1: every available core; -2: all but one, and so on.
    """
    if n_jobs is None:
        busy = busy_cores()
        idle = available_cores() - (busy or 0)
        return max(1, min(limit, idle))
    if n_jobs < 0:
        return max(1, available_cores() + 1 + n_jobs)
    return int(n_jobs)


class TorchThreads:
    """Sets torch's intra-op threads for one call (``with TorchThreads(n_jobs) as threads:``) and restores
    the process's count afterwards; ``threads.adapt()`` (before each epoch) follows the load again when
    ``n_jobs`` is None. ``threads.used`` lists the counts set."""

    def __init__(self, n_jobs=None):
        self.n_jobs = n_jobs
        self.used: list[int] = []

    def __enter__(self) -> TorchThreads:
        import torch

        self._before = torch.get_num_threads()
        self._current = self._before
        self.adapt(force=True)
        return self

    def adapt(self, force: bool = False) -> None:
        if self.n_jobs is not None and not force:
            return
        n = resolve_threads(self.n_jobs, self._before)
        if n != self._current:
            import torch

            torch.set_num_threads(n)
            self._current = n
        if not self.used or self.used[-1] != n:
            self.used.append(n)

    def __exit__(self, *exc) -> None:
        if self._current != self._before:
            import torch

            torch.set_num_threads(self._before)
