"""Atomic on-disk checkpoints so that a long fit resumes after a crash."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch


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
    """

    def __init__(self, path, fingerprint: str, extra: dict | None = None):
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.extra = dict(extra or {})

    def save(self, state: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        state = {**state, **self.extra, "fingerprint": self.fingerprint}
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
        os.close(fd)
        try:
            torch.save(state, tmp)
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)

    def load(self) -> dict | None:
        """The saved state if it exists and belongs to this run, else None."""
        if not self.path.exists():
            return None
        try:
            state = torch.load(self.path, map_location="cpu", weights_only=False)
        except Exception:  # a corrupt file is no reason to refuse a fresh fit
            return None
        if state.get("fingerprint") != self.fingerprint:
            return None
        return state

    def remove(self) -> None:
        if self.path.exists():
            self.path.unlink()
