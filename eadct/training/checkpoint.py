"""Atomic on-disk checkpoints so that a long fit resumes after a crash.

Checkpoints hold only tensors, numbers, strings and containers of them, and are read with
``torch.load(weights_only=True)``: a checkpoint file from elsewhere cannot run code on load. A file at the path
that is not an eadct checkpoint is never overwritten, and a checkpoint that would be resumed is checked entry by
entry against the network and optimizer it is restored into before anything is restored: a damaged or crafted file
is a ValueError that names it and the problem, not a torch error halfway through a restore.
"""

from __future__ import annotations

import os
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path

import torch
from torch import nn

from ..provenance import VERSIONS_KEY, model_versions
from ._checkpoint_checks import FORMER_ENTRIES, _checkpoint_keys, _copied, _problem, _shown, _too_large

#: What the ValueError about a checkpoint file tells the user to do.
_FIX = "Delete the file (the fit then starts afresh) or choose another checkpoint_path."
#: At most this many history records per epoch the fit's stages can train.
_RECORDS_PER_EPOCH = 2
#: At most this many history records where the stages are not known (the checks before any network is built).
_MAX_RECORDS = 2**20


class Checkpointer:
    """Save and load one training-state dict at ``path``, atomically.

    The file is written to a temporary name in the same folder and renamed over the
    old one, so a crash mid-write never leaves a truncated checkpoint.

    Parameters
    ----------
    path : str or Path
    fingerprint : str
        Identifies the run (hyperparameters + data); a checkpoint with another
        fingerprint is not resumed.
    extra : dict, optional
        Saved with every state (for example the seed of a run with no fixed seed); a state that is resumed must
        hold the same entries, with values of the same types.
    warn : callable, optional
        Called with a message when an eadct checkpoint at ``path`` is deleted rather than resumed, because another
        fit or another eadct version wrote it. Default: ``warnings.warn``.
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
        try:
            with os.fdopen(fd, "wb") as f:  # the file mkstemp created, not whatever the name points to by now
                torch.save(state, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)

    def load(
        self,
        network: nn.Module | None = None,
        stages: Mapping[str, tuple[object | None, Callable[[nn.Module], list]]] | None = None,
    ) -> dict | None:
        """The saved state to resume, or None where there is none.

        None when no file exists. A file that is not an eadct checkpoint (not a torch archive, unreadable as
        data, damaged, or data of another kind) is a ValueError naming it: it is never overwritten. An eadct
        checkpoint of another fit (another fingerprint) or of another eadct version is deleted with a message
        through ``warn`` (this fit's own checkpoint takes its place), and None is returned; one written before
        checkpoints recorded versions counts as this version's. With ``network`` (the restore, where ``extra`` holds
        the fit's own values: an ensemble's member files hold the fit's seed), one whose ``extra`` values differ
        is another fit's too. A checkpoint of this fit is checked before it is
        returned: its entries, and with ``network`` every tensor's name, shape and dtype against the network's
        state; with ``stages`` (stage name -> (its settings, or None where this fit does not run it; a function
        from the network to the parameters that stage's optimizer updates)) its optimizer state against a fresh
        optimizer's after one step on zero copies of those parameters (where that step fails, only the
        structure). Any mismatch is a ValueError naming the file and the problem, raised before anything is
        restored. The returned tensors are copies in memory, not views of the file.
        """
        state = self._read()
        self._check_writable()
        if state is None:
            return None
        written, here = _eadct_version(state), model_versions()["eadct"]
        if state["fingerprint"] != self.fingerprint:
            reason = "belongs to another fit (other hyperparameters or data)"
        elif written is not None and written != here:  # None: written before checkpoints recorded versions
            reason = (
                f"was written by eadct {written} and this is eadct {here}; a fit is resumed only by the "
                "version that began it"
            )
        elif network is not None and (other := _other_extra(state, self.extra)):
            reason = (
                f"was written with another {other} ({state[other]!r}; this fit's is {self.extra[other]!r}), "
                "so it belongs to another fit"
            )
        else:
            reason = None
        if reason is not None and not _signed(state, self.extra):
            entries = ", ".join(sorted(map(_shown, state))[:6])
            del state
            raise _stranger(self.path, f"it holds entries ({entries}) that are not those of an eadct checkpoint")
        if reason is not None:
            del state  # unmap the file before deleting it
            self.warn(f"Checkpoint {self.path} {reason}, so it is deleted and this fit starts afresh.")
            self.remove()
            return None
        problem = _problem(state, self.extra, network, stages, _history_limit(stages))
        problem = problem or _too_large(state, self.path.stat().st_size)
        if problem is None:
            return _copied(state)
        del state
        raise ValueError(f"Checkpoint {self.path} belongs to this fit but cannot be resumed: {problem}. {_FIX}")

    def remove(self) -> None:
        if self.path.exists():
            self.path.unlink()

    def _check_writable(self) -> None:
        """A ValueError naming the path where no checkpoint can be written there (a read-only folder, a parent that
        is a file, a name too long for the temporary file written beside it, a NUL byte): found before any
        training, not after its first epoch. A missing folder is created, as the first save would."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
            os.close(fd)
            os.remove(tmp)
        except (OSError, ValueError) as err:  # ValueError: a NUL byte in the path
            why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            raise ValueError(
                f"checkpoint_path {str(self.path)!r} cannot be written: trying to write a file in its folder gave "
                f"{type(err).__name__}: {why}. Choose another checkpoint_path (in a writable folder, with a file "
                "name shorter than 240 characters)."
            ) from None

    def _read(self) -> dict | None:
        """The file's state, its tensors mapped from the file rather than read (a large file that is not a
        checkpoint costs nothing), or None where there is no file; a ValueError where it is not an eadct
        checkpoint."""
        if not self.path.exists():
            return None
        why = "it is a folder" if self.path.is_dir() else _not_a_torch_archive(self.path)
        if why is None:
            try:
                state = torch.load(self.path, map_location="cpu", weights_only=True, mmap=True)
            except Exception as err:  # weights_only's refusal of a global, a damaged pickle or record, ...
                why = f"torch cannot read it as data: {_reason(err)}"
            else:
                if isinstance(state, dict) and isinstance(state.get("fingerprint"), str) and "stage" in state:
                    return state
                why = f"it holds a {type(state).__name__} without a checkpoint's fingerprint and stage"
        raise _stranger(self.path, why)


def _stranger(path: Path, why: str) -> ValueError:
    """The error about a file at ``path`` that is not an eadct checkpoint (``why``)."""
    return ValueError(
        f"checkpoint_path {str(path)!r} is an existing file that is not an eadct checkpoint ({why}), and a "
        f"fit does not overwrite it. Delete the file or choose another checkpoint_path."
    )


def _signed(state: dict, extra: dict) -> bool:
    """Whether ``state`` carries eadct's signature, so that it may be deleted when another fit or version wrote
    it: exactly a checkpoint's entries (of a running or a finished stage; a running stage's of an earlier version
    may add :data:`FORMER_ENTRIES`) and versions naming an eadct version (or, written before checkpoints recorded
    versions, none)."""
    keys = state.keys() - {VERSIONS_KEY}
    running = _checkpoint_keys(extra, True)
    if keys != _checkpoint_keys(extra, False) and keys != running and keys != running | FORMER_ENTRIES:
        return False
    versions = state.get(VERSIONS_KEY, {"eadct": ""})
    return isinstance(versions, dict) and isinstance(versions.get("eadct"), str)


def _other_extra(state: dict, extra: dict) -> str | None:
    """The first entry of ``extra`` that ``state`` holds with the same type and another value, or None."""
    return next((k for k, v in extra.items() if type(state.get(k)) is type(v) and state[k] != v), None)


def _history_limit(stages) -> int:
    """The most history records a checkpoint may hold: a few per epoch that the fit's ``stages`` can train (at most
    ``max_epochs``), and one more per stage."""
    if stages is None:
        return _MAX_RECORDS
    stages = [settings for settings, _ in stages.values() if settings is not None]
    epochs = sum(s.max_epochs + 1 for s in stages)
    return _RECORDS_PER_EPOCH * epochs


def _not_a_torch_archive(path: Path) -> str | None:
    """Why ``path`` is not a zip archive as ``torch.save`` writes it (stored entries, nothing after its end), or
    None. torch reads an archive with bytes appended, and would inflate a compressed entry into memory."""
    size = path.stat().st_size
    if size == 0:
        return "it is empty"
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(max(size - 22, 0))
        tail = f.read(22)
    if head != b"PK\x03\x04":
        return "it is not a zip archive, the format torch.save writes"
    if len(tail) < 22 or tail[:4] != b"PK\x05\x06" or tail[-2:] != b"\x00\x00":
        return "it does not end where its archive ends: truncated, or with bytes appended"
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
    except Exception as err:  # BadZipFile, or struct and value errors of a damaged directory
        return f"its archive is damaged ({type(err).__name__}: {err})"
    if not entries or min(e.header_offset for e in entries) != 0:  # zipfile shifts them by bytes put before the end
        return "its archive's directory does not end at its end record: bytes were appended or inserted"
    if any(e.compress_type != zipfile.ZIP_STORED or e.file_size != e.compress_size for e in entries):
        return "it has compressed entries, which torch.save never writes"
    return None


def _eadct_version(state: dict) -> str | None:
    """The eadct version that wrote ``state``; None where it records none (or not as a string: then the checks of
    :func:`_problem` refuse its versions)."""
    versions = state.get(VERSIONS_KEY)
    written = versions.get("eadct") if isinstance(versions, dict) else None
    return written if isinstance(written, str) else None


def _reason(err: Exception) -> str:
    """The line of a loading error that says what was wrong: for torch's weights-only refusal, the one naming the
    global (not its advice to load the file with ``weights_only=False``)."""
    advice = ("Weights only load failed", "Check the documentation", "Please file an issue")
    lines = [line.strip().removeprefix("WeightsUnpickler error:").strip() for line in str(err).splitlines()]
    lines = [line for line in lines if line and not line.startswith(advice)]
    named = [line for line in lines if "global" in line.lower()]
    line = (named or lines or [""])[0].split(". ")[0]
    return f"{type(err).__name__}: {line}" if line else type(err).__name__
