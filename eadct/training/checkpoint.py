"""Atomic on-disk checkpoints so that a long fit resumes after a crash.

Checkpoints hold only tensors, numbers, strings and containers of them, and are read with
``torch.load(weights_only=True)``: a checkpoint file from elsewhere cannot run code on load.
"""

from __future__ import annotations

import os
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

import torch

from ..provenance import VERSIONS_KEY, model_versions


class Checkpointer:
    """Save and load one training-state dict at ``path``, atomically.

    The file is written to a temporary name in the same folder and renamed over the
    old one, so a crash mid-write never leaves a truncated checkpoint.

    Parameters
    ----------
    path : str or Path
    fingerprint : str
        Identifies the run (hyperparameters + data); a checkpoint with another
        fingerprint is ignored rather than resumed.
    extra : dict, optional
        Saved with every state (for example the seed of a run with no fixed seed).
    warn : callable, optional
        Called with a message when a checkpoint file exists but is not resumed because it cannot be read
        (corrupt, truncated, or holding more than data) or was written by another eadct version; the fit then
        starts afresh. Default: ``warnings.warn``.
    """

    def __init__(self, path, fingerprint: str, extra: dict | None = None, warn: Callable[[str], None] | None = None):
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.extra = dict(extra or {})
        self.warn = warn or (lambda message: warnings.warn(message, stacklevel=3))

    def save(self, state: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        state = {**state, **self.extra, "fingerprint": self.fingerprint, VERSIONS_KEY: model_versions()}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        os.close(fd)
        try:
            torch.save(state, tmp)
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)

    def load(self) -> dict | None:
        """The saved state if it exists, can be read as data and belongs to this run (same fingerprint, same
        eadct version), else None; a file that exists but is not resumed for another reason than its
        fingerprint is reported through ``warn``."""
        if not self.path.exists():
            return None
        try:
            state = torch.load(self.path, map_location="cpu", weights_only=True)
            if not isinstance(state, dict):
                raise TypeError(f"it holds a {type(state).__name__}, not a training state")
        except Exception as err:  # a corrupt file is no reason to refuse a fresh fit, but say so
            self.warn(f"Checkpoint {self.path} cannot be read safely ({_reason(err)}); starting a fresh fit.")
            return None
        if state.get("fingerprint") != self.fingerprint:
            return None
        written, here = state.get(VERSIONS_KEY, {}).get("eadct"), model_versions()["eadct"]
        if written is not None and written != here:  # None: written before checkpoints recorded versions
            self.warn(f"Checkpoint {self.path} was written by eadct {written} and this is eadct {here}; "
                      "a fit is resumed only by the version that began it, so this one starts afresh.")  # fmt: skip
            return None
        return state

    def remove(self) -> None:
        if self.path.exists():
            self.path.unlink()


def _reason(err: Exception) -> str:
    """The line of a loading error that says what was wrong (torch's weights-only refusal names the global)."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    named = [line for line in lines if line.startswith("WeightsUnpickler error:")]
    line = named[0].removeprefix("WeightsUnpickler error:").split(". ")[0] if named else (lines or [""])[0]
    return f"{type(err).__name__}: {line}" if line else type(err).__name__
