"""Where a result came from: the code's git commit, the package versions and the machine.

Used by the tables runner's result files and the benchmarks, so every reported number names what produced it.
"""

from __future__ import annotations

import os
import platform
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path

__all__ = ["PACKAGES", "cpu_name", "git_commit", "machine_info", "versions"]

PACKAGES = ("eadct", "torch", "numpy", "scikit-learn", "sktime", "numba")


@lru_cache(maxsize=1)
def git_commit() -> dict:
    """``{"commit", "dirty"}`` of the eadct checkout this process runs (None outside a git checkout).

    Read once per process (cached): call it when a sweep starts, before anything could move HEAD.
    """
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        return {"commit": commit, "dirty": bool(dirty)}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def versions() -> dict:
    """Python's and the key packages' versions (None where not installed)."""
    out = {"python": platform.python_version()}
    for pkg in PACKAGES:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info(device: str | None = None) -> dict:
    """Platform, CPU, core count, torch threads, and the device (with the GPU's name on CUDA)."""
    import torch

    info = {
        "platform": platform.platform(),
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "device": device,
    }
    if device is not None and str(device).startswith("cuda"):
        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return info
