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

__all__ = [
    "PACKAGES",
    "VERSIONS_KEY",
    "VERSIONS_OF",
    "cpu_name",
    "git_commit",
    "machine_info",
    "model_versions",
    "versions",
    "InconsistentVersionWarning",
    "warn_if_other_version",
]

PACKAGES = ("eadct", "torch", "numpy", "scikit-learn", "sktime", "numba")
#: Entries of a saved estimator's or checkpoint's state that are not attributes: the :func:`model_versions`
#: that wrote it, and (on load) the file it was read from, for messages.
VERSIONS_KEY, VERSIONS_OF = "_eadct_versions", "_eadct_file"


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


class InconsistentVersionWarning(UserWarning):
    """A model or checkpoint written by another eadct version was read (check its predictions, or refit)."""


def model_versions() -> dict:
    """The versions a saved model or checkpoint records: eadct, torch, scikit-learn and numpy.

    A package's ``__version__`` when it is imported (a checkout that is not installed names its own), else its
    installed version; nothing is imported (``eadct.training`` stays free of scikit-learn).
    """
    import sys

    from . import __version__

    out = {"eadct": __version__}
    for module, dist in (("torch", "torch"), ("sklearn", "scikit-learn"), ("numpy", "numpy")):
        loaded = sys.modules.get(module)
        try:
            out[dist] = str(loaded.__version__) if loaded is not None else metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def warn_if_other_version(versions: dict | None, what: str) -> None:
    """An :class:`InconsistentVersionWarning` when ``versions`` (recorded with a file) name another eadct;
    nothing when the file recorded none (files written before versions were recorded)."""
    written, here = (versions or {}).get("eadct"), model_versions()["eadct"]
    if written is not None and written != here:
        import warnings

        warnings.warn(
            f"{what} was written by eadct {written} and is read by eadct {here}; it loaded, but check its "
            "predictions, or refit with this version.",
            InconsistentVersionWarning,
            stacklevel=3,
        )
