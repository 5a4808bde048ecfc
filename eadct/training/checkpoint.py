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

#: The training stages a checkpoint can hold.
STAGES = ("pretrain", "finetune")
#: What the ValueError about a checkpoint file tells the user to do.
_FIX = "Delete the file (the fit then starts afresh) or choose another checkpoint_path."
_PLAIN = (type(None), bool, int, float, str)
#: At most this many entries in a history record, and this many records per epoch the fit's stages can train.
_RECORD_KEYS, _RECORDS_PER_EPOCH = 32, 2
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
            reason = (f"was written by eadct {written} and this is eadct {here}; a fit is resumed only by the "
                      "version that began it")  # fmt: skip
        elif network is not None and (other := _other_extra(state, self.extra)):
            reason = (f"was written with another {other} ({state[other]!r}; this fit's is {self.extra[other]!r}), "
                      "so it belongs to another fit")  # fmt: skip
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


def _checkpoint_keys(extra: dict, running: bool) -> set:
    """The entries of a checkpoint (besides its versions) of a finished or a ``running`` stage."""
    keys = {"stage", "stage_done", "network", "history", "rng", "fingerprint", *extra}
    return keys | _progress_keys() | {"optimizer"} if running else keys


def _signed(state: dict, extra: dict) -> bool:
    """Whether ``state`` carries eadct's signature, so that it may be deleted when another fit or version wrote
    it: exactly a checkpoint's entries (of a running or a finished stage) and versions naming an eadct version
    (or, written before checkpoints recorded versions, none)."""
    keys = state.keys() - {VERSIONS_KEY}
    if keys != _checkpoint_keys(extra, False) and keys != _checkpoint_keys(extra, True):
        return False
    versions = state.get(VERSIONS_KEY, {"eadct": ""})
    return isinstance(versions, dict) and isinstance(versions.get("eadct"), str)


def _other_extra(state: dict, extra: dict) -> str | None:
    """The first entry of ``extra`` that ``state`` holds with the same type and another value, or None."""
    return next((k for k, v in extra.items() if type(state.get(k)) is type(v) and state[k] != v), None)


def _history_limit(stages) -> int:
    """The most history records a checkpoint may hold: a few per epoch that the fit's ``stages`` can train (at most
    ``max_epochs``, or ``min_steps`` where that raises it: ``StageSettings.capped``), and one more per stage."""
    if stages is None:
        return _MAX_RECORDS
    stages = [settings for settings, _ in stages.values() if settings is not None]
    epochs = sum(max(s.max_epochs, s.min_steps or 0) + 1 for s in stages)
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


def _problem(state: dict, extra: dict, network: nn.Module | None, stages, max_records: int) -> str | None:
    """What makes ``state`` (of this fit) unfit to resume, or None."""
    if problem := _shared_problem(state):
        return problem
    if not isinstance(state.get("stage_done", False), bool):
        return f"its stage_done is {_shown(state['stage_done'])}, not True or False"
    running = state.get("stage_done") is False
    expected = _checkpoint_keys(extra, running)
    missing, unknown = expected - state.keys(), state.keys() - expected - {VERSIONS_KEY}
    if missing:
        return f"it lacks the entries {sorted(missing)}"
    if unknown:
        return f"it has entries a checkpoint does not have: {', '.join(sorted(map(repr, unknown))[:5])}"
    if state["stage"] not in STAGES:
        return f"its stage is {_shown(state['stage'])}, not one of {list(STAGES)}"
    for name, value in extra.items():
        if type(state[name]) is not type(value) or (isinstance(value, int) and not 0 <= state[name] < 2**31):
            kind = "an int in [0, 2**31)" if isinstance(value, int) else f"of type {type(value).__name__}"
            return f"its {name} is {_shown(state[name])}, not {kind}"
    versions = state.get(VERSIONS_KEY, {})
    if not (isinstance(versions, dict) and all(isinstance(v, (str, type(None))) for v in versions.values())):
        return "its versions are not a dict of version strings"
    like = None if network is None else network.state_dict()
    problem = (
        _tensors_problem("network", state["network"], like)
        or _history_problem(state["history"], max_records)
        or _rng_problem(state["rng"])
    )
    if problem or not running:
        return problem
    settings, parameters_of = (None, None) if stages is None else stages.get(state["stage"], (None, None))
    if stages is not None and settings is None:
        return f"it holds the {state['stage']} stage, which this fit does not run"
    parameters = None if network is None or parameters_of is None else list(parameters_of(network))
    return _progress_problem(state, like) or _optimizer_problem(state["optimizer"], settings, parameters)


def _progress_keys() -> set:
    """The entries of a running stage's progress (``_Progress.state``), read where it is defined."""
    from .loop import _Progress  # loop imports this module

    return set(_Progress().state())


def _progress_problem(state: dict, like: dict | None) -> str | None:
    for name in ("epoch", "bad_epochs", "averaged"):
        if type(state[name]) is not int or state[name] < 0:
            return f"its {name} is {_shown(state[name])}, not a count"
    key = state["best_key"]
    if key is not None and not (isinstance(key, tuple) and all(_is_real(k) for k in key)):
        return f"its best_key is {_shown(key)}, not None or a tuple of numbers"
    if (state["averaged"] > 0) != (state["average_sum"] is not None):
        return "its averaged count and its average_sum disagree"
    sums = ("average_sum", "moving_sum")
    for name in sorted(_progress_keys() - {"epoch", "bad_epochs", "averaged", "best_key"}):
        value = state[name]
        if isinstance(value, dict) or name == "best_state" or name in sums:
            if value is not None and (problem := _tensors_problem(name, value, like, float64=name in sums)):
                return problem
        elif not (isinstance(value, _PLAIN) or (isinstance(value, tuple) and all(_is_real(v) for v in value))):
            return f"its {name} is {_shown(value)}, not a number"
    return None


def _tensors_problem(name: str, tensors, like: dict | None, float64: bool = False) -> str | None:
    """What is wrong with a network state ``tensors`` (entry ``name``): not a dict of tensors, or, given the
    network's state ``like``, other names, shapes or dtypes (``float64``: floating-point entries in float64, as
    the running sums keep them)."""
    if not isinstance(tensors, dict) or not all(isinstance(k, str) for k in tensors):
        return f"its {name} is {_shown(tensors)}, not a dict of named tensors"
    for key, tensor in tensors.items():
        if not _is_tensor(tensor):
            return f"its {name} entry {key!r} is {_shown(tensor)}, not a dense tensor"
    if like is None:
        return None
    if tensors.keys() != like.keys():
        extra, lacking = sorted(tensors.keys() - like.keys()), sorted(like.keys() - tensors.keys())
        return f"its {name} does not match this fit's network: names not in it {extra[:3]}, names missing {lacking[:3]}"
    for key, tensor in tensors.items():
        dtype = torch.float64 if float64 and like[key].is_floating_point() else like[key].dtype
        if tuple(tensor.shape) != tuple(like[key].shape) or tensor.dtype != dtype:
            return (f"its {name} entry {key!r} is {_shown(tensor)} where this fit's network needs a "
                    f"{tuple(like[key].shape)} {dtype} one")  # fmt: skip
    return None


def _shared_problem(state: dict) -> str | None:
    """A non-empty dict, list or tuple that appears more than once in ``state`` (tensors aside): a checkpoint
    holds none, and a file crafted with shared references multiplies its size in memory (and on disk once saved
    again)."""
    seen, stack = set(), [state]
    while stack:
        value = stack.pop()
        if isinstance(value, (dict, list, tuple)) and len(value):
            if id(value) in seen:
                return f"it holds the same {type(value).__name__} more than once, which a checkpoint never does"
            seen.add(id(value))
            stack.extend(value.values() if isinstance(value, dict) else value)
    return None


def _history_problem(history, max_records: int) -> str | None:
    if not isinstance(history, list):
        return f"its history is {_shown(history)}, not a list of records"
    if len(history) > max_records:
        return f"its history holds {len(history)} records, more than the {max_records} this fit's epochs can make"
    for record in history:
        if problem := _record_problem(record):
            return problem
    return None


def _record_problem(record) -> str | None:
    """What is wrong with a history record: a record is a dict of at most :data:`_RECORD_KEYS` names and plain
    scalars, with a stage of :data:`STAGES`, an epoch count and a float train_loss (and reference_loss)."""
    if (
        not isinstance(record, dict)
        or len(record) > _RECORD_KEYS
        or not all(isinstance(k, str) and len(k) <= 64 and _is_scalar(v) for k, v in record.items())
    ):
        return f"its history holds {_shown(record)}, not a record of at most {_RECORD_KEYS} names and numbers"
    if record.get("stage") not in STAGES:
        return f"its history holds a record whose stage is {_shown(record.get('stage'))}, not one of {list(STAGES)}"
    if type(record.get("epoch")) is not int or record["epoch"] < 0:
        return f"its history holds a record whose epoch is {_shown(record.get('epoch'))}, not a count"
    for name in ("train_loss", "reference_loss"):
        if (name == "train_loss" or name in record) and type(record.get(name)) is not float:
            return f"its history holds a record whose {name} is {_shown(record.get(name))}, not a float"
    return None


def _is_scalar(value) -> bool:
    """None, a bool, a float, a 64-bit int or a string of at most 1000 characters."""
    if type(value) is int:
        return -(2**63) <= value < 2**63
    return type(value) in (type(None), bool, float) or (type(value) is str and len(value) <= 1000)


def _rng_problem(rng) -> str | None:
    """What is wrong with the random states that ``set_rng_state`` would restore: each must be a state of the
    generator it is restored into (a byte tensor of the same length)."""
    if not isinstance(rng, dict) or not {"generator", "cpu"} <= rng.keys() <= {"generator", "cpu", "cuda"}:
        return f"its rng is {_shown(rng)}, not the states of the generators"
    cpu = torch.get_rng_state()
    for name in ("generator", "cpu"):
        if not _is_tensor(rng[name]) or rng[name].dtype != torch.uint8 or rng[name].shape != cpu.shape:
            return f"its rng {name} state is {_shown(rng[name])}, not a generator's {tuple(cpu.shape)} bytes"
        if not _settable(torch.Generator(), rng[name]):
            return f"its rng {name} state is not a valid generator state"
    cuda = rng.get("cuda", [])
    if not isinstance(cuda, list) or not all(_is_tensor(s) and s.dtype == torch.uint8 for s in cuda):
        return "its rng cuda states are not a list of byte tensors"
    if "cuda" in rng and torch.cuda.is_available():
        if len(cuda) > torch.cuda.device_count():
            return f"it has the random states of {len(cuda)} GPUs and this machine has {torch.cuda.device_count()}"
        for i, s in enumerate(cuda):
            if s.shape != torch.cuda.get_rng_state(i).shape or not _settable(torch.Generator(f"cuda:{i}"), s):
                return f"its rng state of GPU {i} is not a valid generator state"
    return None


def _settable(generator: torch.Generator, state: torch.Tensor) -> bool:
    """Whether ``generator`` (a throwaway one) accepts ``state``: torch checks more than its length."""
    try:
        generator.set_state(state.clone())
        return True
    except RuntimeError:
        return False


def _optimizer_problem(saved, settings, parameters: list | None) -> str | None:
    """What is wrong with a saved optimizer state: not ``Optimizer.state_dict``'s structure, or, given the stage's
    ``settings`` and ``parameters``, other parameter groups or per-parameter entries than the optimizer's."""
    if not isinstance(saved, dict) or saved.keys() != {"state", "param_groups"}:
        return f"its optimizer is {_shown(saved)}, not an optimizer's state"
    groups, per_parameter = saved["param_groups"], saved["state"]
    if not isinstance(groups, list) or not all(
        isinstance(g, dict) and isinstance(g.get("params"), list) for g in groups
    ):
        return "its optimizer's param_groups are not a list of groups with their params"
    indices = [i for g in groups for i in g["params"]]
    if indices != list(range(len(indices))) or not all(type(i) is int for i in indices):
        return "its optimizer's param_groups do not number their parameters 0, 1, 2, ..."
    for group in groups:
        for key, value in group.items():
            plain = isinstance(value, _PLAIN) or (isinstance(value, (tuple, list)) and all(map(_is_real, value)))
            if key != "params" and not (isinstance(key, str) and plain):
                return f"its optimizer's setting {key!r} is {_shown(value)}, not a number"
    if not isinstance(per_parameter, dict) or not per_parameter.keys() <= set(indices):
        return "its optimizer's state is not a dict over the numbered parameters"
    for i, entry in per_parameter.items():
        if not isinstance(entry, dict) or not all(
            isinstance(k, str) and (isinstance(v, _PLAIN) or _is_tensor(v)) for k, v in entry.items()
        ):
            return f"its optimizer's state of parameter {i} is not a dict of named numbers and tensors"
    if parameters is None:
        return None
    if len(indices) != len(parameters):
        return f"its optimizer has {len(indices)} parameters where this stage's has {len(parameters)}"
    reference = _fresh_optimizer_state(settings, parameters)
    if reference is None:
        return None
    if [g["params"] for g in groups] != [g["params"] for g in reference["param_groups"]]:
        return "its optimizer's parameter groups are not this stage's"
    for group, fresh in zip(groups, reference["param_groups"], strict=True):
        for key, value in fresh.items():
            if key != "params" and (key not in group or _kind(group[key]) != _kind(value)):
                got = _shown(group[key]) if key in group else "missing"
                return f"its optimizer's setting {key!r} is {got} where this stage's optimizer has {_shown(value)}"
    for i, entry in per_parameter.items():
        for key, value in reference["state"].get(i, {}).items():
            got = entry.get(key)
            if key not in entry:
                return f"its optimizer's state of parameter {i} lacks {key!r}"
            if _is_tensor(value) and not (_is_tensor(got) and got.shape == value.shape and got.dtype == value.dtype):
                return (f"its optimizer's {key!r} of parameter {i} is {_shown(got)} where this stage's optimizer "
                        f"keeps a {tuple(value.shape)} {value.dtype} tensor")  # fmt: skip
            if not _is_tensor(value) and _is_tensor(got):
                return f"its optimizer's {key!r} of parameter {i} is a tensor, not a number"
    return None


def _fresh_optimizer_state(settings, parameters: list) -> dict | None:
    """The state of the stage's optimizer (``settings.optimizer`` with ``settings.optimizer_kwargs``) after one step
    on zero-gradient copies of ``parameters``: what a checkpoint of the stage holds per parameter. None where the
    optimizer cannot take that step."""
    copies = [torch.zeros_like(p).requires_grad_(True) for p in parameters]
    try:
        optimizer = settings.optimizer(copies, lr=settings.lr, **settings.optimizer_kwargs)
        for c in copies:
            c.grad = torch.zeros_like(c)
        optimizer.step()
        return optimizer.state_dict()
    except Exception:  # an optimizer that needs a closure, for instance: training reports it itself
        return None


def _too_large(state: dict, file_size: int) -> str | None:
    """Whether copying ``state``'s tensors would take more memory than the file holds: a checkpoint's tensors
    share no storage, so more means views crafted to multiply the file."""
    total = sum(t.numel() * t.element_size() for t in _tensors(state))
    if total > file_size:
        return f"its tensors would take {total} bytes, more than its {file_size} bytes hold"
    return None


def _tensors(value, depth: int = 0):
    if _is_tensor(value):
        yield value
    elif isinstance(value, (dict, list, tuple)) and depth < 8:  # checked structures are 4 levels deep
        for item in value.values() if isinstance(value, dict) else value:
            yield from _tensors(item, depth + 1)


def _copied(value):
    """``value`` with every tensor copied into memory (contiguous, detached from the file's mapping)."""
    if _is_tensor(value):
        return value.detach().clone(memory_format=torch.contiguous_format)
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(v) for v in value)
    return value


def _is_tensor(value) -> bool:
    """Whether ``value`` is a tensor as checkpoints hold them: a plain (not a subclass) dense tensor with its data
    in CPU memory, not a meta (dataless), nested, sparse or quantized one."""
    return (
        type(value) in (torch.Tensor, nn.Parameter)
        and value.device.type == "cpu"
        and not value.is_nested
        and value.layout == torch.strided
        and not value.is_quantized
    )


def _kind(value):
    """What a setting must stay: None, a bool, a number, a string, or a sequence of those kinds."""
    if isinstance(value, (tuple, list)):
        return tuple(map(_kind, value))
    return "number" if _is_real(value) else type(value).__name__


def _is_real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shown(value) -> str:
    """A short description of a value read from a file, for messages."""
    if isinstance(value, torch.Tensor):
        if value.is_nested:
            return "a nested tensor"
        kind = "" if value.device.type == "cpu" else f" {value.device.type}"
        kind += "" if value.layout == torch.strided else f" {str(value.layout).removeprefix('torch.')}"
        return f"a {tuple(value.shape)} {value.dtype}{kind} tensor"
    text = repr(value) if isinstance(value, _PLAIN) else f"a {type(value).__name__}"
    return text if len(text) <= 60 else text[:57] + "..."


def _reason(err: Exception) -> str:
    """The line of a loading error that says what was wrong: for torch's weights-only refusal, the one naming the
    global (not its advice to load the file with ``weights_only=False``)."""
    advice = ("Weights only load failed", "Check the documentation", "Please file an issue")
    lines = [line.strip().removeprefix("WeightsUnpickler error:").strip() for line in str(err).splitlines()]
    lines = [line for line in lines if line and not line.startswith(advice)]
    named = [line for line in lines if "global" in line.lower()]
    line = (named or lines or [""])[0].split(". ")[0]
    return f"{type(err).__name__}: {line}" if line else type(err).__name__
