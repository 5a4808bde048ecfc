"""Process-level settings that speed up training on CPU. Opt-in: they change the whole process."""

from __future__ import annotations

import ctypes
import ctypes.util
import os

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
