"""What an eadct checkpoint may hold, entry by entry: the checks :class:`eadct.training.checkpoint.Checkpointer`
makes of a file before anything in it is restored (its entries, progress, history, tensors, random-generator and
optimizer states), each returning the problem it found as text, or None."""

from __future__ import annotations

import torch
from torch import nn

from ..provenance import VERSIONS_KEY

#: The training stages a checkpoint can hold.
STAGES = ("pretrain", "finetune")
_PLAIN = (type(None), bool, int, float, str)
#: At most this many entries in a history record.
_RECORD_KEYS = 32
#: Entries of a running stage's checkpoint that earlier eadct versions wrote and this one does not (the moving
#: average of the weights that ``average_decay`` kept): such a file is still recognised as an eadct checkpoint, so
#: that a fit replaces it with a warning rather than refusing it as a stranger's; it is never resumed.
FORMER_ENTRIES = frozenset({"moving_sum"})


def _checkpoint_keys(extra: dict, running: bool) -> set:
    """The entries of a checkpoint (besides its versions) of a finished or a ``running`` stage."""
    keys = {"stage", "stage_done", "network", "history", "rng", "fingerprint", *extra}
    return keys | _progress_keys() | {"optimizer"} if running else keys


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
    for name in sorted(_progress_keys() - {"epoch", "bad_epochs", "averaged", "best_key"}):
        value = state[name]
        if isinstance(value, dict) or name in ("best_state", "average_sum"):
            if value is not None and (problem := _tensors_problem(name, value, like, float64=name == "average_sum")):
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
            return (
                f"its {name} entry {key!r} is {_shown(tensor)} where this fit's network needs a "
                f"{tuple(like[key].shape)} {dtype} one"
            )
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
                return (
                    f"its optimizer's {key!r} of parameter {i} is {_shown(got)} where this stage's optimizer "
                    f"keeps a {tuple(value.shape)} {value.dtype} tensor"
                )
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
