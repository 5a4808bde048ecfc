"""Peak-memory estimates of the EA-DC-Transformer, and the memory a device has free.

The (B, K, M, M) attention maps dominate: M = ceil(N / attention_downsample). Per layer, training with stored
maps keeps for backward about 4.25 maps in float32 when the map evolves (the conv input, the ReLU output, the
softmax output, the dropout output and its 1-byte mask) and 2.25 for plain attention (softmax output, dropout
output and mask); backward adds a few maps of gradients at a time. The blocked path (``recompute_attention``
True, or "auto" on large maps) keeps one map per layer (the logits handed on) plus, in backward, the incoming
and outgoing logit gradients; its blocks are a few MB. Inference runs in blocks and holds about two maps (the
logits read and the logits written). The coefficients are checked against measurements by
``benchmarks/attention_speed_memory.py`` (its "estimate" column).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

from .attention import CHUNK_ELEMENTS, CUDA_CHUNK_ELEMENTS, auto_blocks

MAPS_SAVED_EVOLVING = 4.25
MAPS_SAVED_PLAIN = 2.25
MAPS_TRANSIENT_BACKWARD = 3.0
MAPS_BLOCKED_BACKWARD = 2.0
MAPS_TRANSIENT_INFERENCE = 2.0
#: Stored maps under bf16 autocast, as a share of the float32 estimate. Not a half: autocast runs softmax in
#: float32, so the softmax output (saved for its backward), its dropout and a bf16 copy for ``A v`` are kept.
#: Measured on a GPU (docs/long_series.md, bf16 autocast).
AUTOCAST_STORED_SHARE = {"evolving": 0.66, "plain": 0.85}
MAPS_PER_BLOCK = 4.0  # a block holds about four maps' worth of its CHUNK_ELEMENTS values at a time


def _map_bytes(batch: int, heads: int, length: int, downsample: int, bytes_per_value: int) -> int:
    m = math.ceil(length / downsample)
    return batch * heads * m * m * bytes_per_value


def estimate_stack_training_bytes(
    batch: int,
    length: int,
    *,
    d_model: int,
    n_heads: int,
    n_layers: int,
    evolving: bool = True,
    recompute: bool | str = False,
    downsample: int = 1,
    d_attention: int | None = None,
    d_ff: int = 256,
    bytes_per_value: int = 4,
    device_type: str = "cpu",
    keeps_freed: bool | None = None,
) -> int:
    """Estimated peak bytes of one training step of ``n_layers`` attention layers, batch B, length N.

    ``evolving``: evolving (map convolution) or plain layers. ``recompute``: ``recompute_attention``, the
    blocked map path (True), stored maps (False) or the rule of :func:`~eadct.networks.attention.auto_blocks`
    ("auto", resolved for ``device_type`` and ``keeps_freed``; None reads this process's setting).
    ``downsample``: token pooling before attention. ``d_attention``: attention width ``p * d`` (0: no attention
    branch; default ``d_model``). ``bytes_per_value``: 4 for float32, 2 for bf16 autocast (the blocked path's
    maps in 2 bytes; stored maps as ``AUTOCAST_STORED_SHARE`` of the float32 estimate, softmax staying float32).
    """
    d_attention = d_model if d_attention is None else d_attention
    per_map = _map_bytes(batch, n_heads, length, downsample, bytes_per_value) if d_attention else 0
    saved = MAPS_SAVED_EVOLVING if evolving else MAPS_SAVED_PLAIN
    if recompute == "auto":
        m = math.ceil(length / downsample)
        recompute = auto_blocks(batch * n_heads * m * m, device_type, keeps_freed)
    if bytes_per_value < 4 and not recompute:
        share = AUTOCAST_STORED_SHARE["evolving" if evolving else "plain"]
        stack = dict(d_model=d_model, n_heads=n_heads, n_layers=n_layers, d_attention=d_attention, d_ff=d_ff)
        full = estimate_stack_training_bytes(
            batch, length, **stack, evolving=evolving, downsample=downsample, device_type=device_type
        )
        return int(share * full)
    if recompute:
        # the logits handed on (none in plain attention, where no layer passes them) and their gradients
        handed_on = max(n_layers - 1, 0) + MAPS_BLOCKED_BACKWARD if evolving else 0.0
        block = CHUNK_ELEMENTS if device_type == "cpu" else CUDA_CHUNK_ELEMENTS
        maps = handed_on + MAPS_PER_BLOCK * min(block * bytes_per_value / max(per_map, 1), 1.0)
    else:
        maps = n_layers * saved + MAPS_TRANSIENT_BACKWARD
    # Step activations: embedding, qkv, branches, residuals, norms and FFN (about 2 d_ff + 14 d per step).
    steps = n_layers * batch * length * (2 * d_ff + 14 * d_model) * 4
    return int(maps * per_map + steps)


def estimate_stack_inference_bytes(
    batch: int,
    length: int,
    *,
    d_model: int,
    n_heads: int,
    downsample: int = 1,
    d_attention: int | None = None,
    bytes_per_value: int = 4,
) -> int:
    """Estimated peak bytes of a forward pass without gradients (blocked map path, freed layer by layer)."""
    d_attention = d_model if d_attention is None else d_attention
    per_map = _map_bytes(batch, n_heads, length, downsample, bytes_per_value) if d_attention else 0
    return int(MAPS_TRANSIENT_INFERENCE * per_map + batch * length * 16 * d_model * 4)


def available_memory_bytes(device: torch.device | str = "cpu") -> int:
    """Free memory of ``device``: ``torch.cuda.mem_get_info`` on CUDA, MemAvailable on Linux CPUs."""
    device = torch.device(device)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free)
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES"))


# ----------------------------------------------------------------------------------------------- planning
MEMORY_GUARDS = ("raise", "auto", "off")
MEMORY_HEADROOM = 0.9  # share of the free memory a fit may plan to use
INFERENCE_HEADROOM = 0.5  # share of the free memory an inference chunk may use
GB = 2**30


@dataclass(frozen=True)
class MemoryPlan:
    """What :func:`plan_training_memory` decided.

    Attributes
    ----------
    overrides : dict
        Settings to train with instead of the given ones (``{}``: train as given); ``batch_size`` and
        encoder settings (``recompute_attention``, ``attention_downsample``).
    need_bytes, free_bytes : int or None
        The estimate for the given settings and the free memory (None with ``guard="off"``).
    options : tuple of (dict, int)
        The alternatives that fit, in order of preference, with their estimates.
    message : str
        What happened, for a warning ("auto" picked an option) or an error (nothing chosen); empty when
        the given settings fit.
    """

    overrides: dict = field(default_factory=dict)
    need_bytes: int | None = None
    free_bytes: int | None = None
    options: tuple = ()
    message: str = ""

    @property
    def fits(self) -> bool:
        """Whether training can go ahead (as given, with ``overrides``, or unchecked)."""
        return not self.message or bool(self.overrides)


def _alternatives(config, batch: int) -> list[dict]:
    """Settings to try when the given ones do not fit, in order of preference."""
    out = [] if config.recompute_attention is True else [{"recompute_attention": True}]
    for b in (16, 8, 4, 2, 1):
        if b < batch:
            out += [{"batch_size": b}, {"batch_size": b, "recompute_attention": True}]
    for r in (2, 4, 8, 16):
        if r > config.attention_downsample:
            both = {"attention_downsample": r, "batch_size": min(batch, 8), "recompute_attention": True}
            out += [{"attention_downsample": r}, both]
    return out


def plan_training_memory(
    config,
    training_bytes,
    *,
    batch_size: int,
    n_train: int,
    length: int,
    device: torch.device | str,
    guard: str,
    free_bytes: int,
    keeps_freed: bool,
    bytes_per_value: int = 4,
    owner: str = "eadct",
) -> MemoryPlan:
    """Check the estimated training peak against the free memory: a pure function of its arguments.

    ``config`` holds the resolved encoder settings and ``training_bytes`` is the architecture's estimate
    (:attr:`Architecture.training_bytes`); ``batch_size`` is asked for, a batch holds at most ``n_train``
    series of at most ``length`` steps. The process state comes in as arguments: ``free_bytes``
    (:func:`available_memory_bytes`) and ``keeps_freed`` (the "auto" recomputation rule reads it), so two
    estimators with equal parameters plan alike for the same inputs. ``guard`` is ``memory_guard``: "off"
    plans nothing; "auto" picks the first alternative that fits; "raise" (or "auto" with none that fits)
    returns no overrides and the error in ``message``. ``bytes_per_value`` is 2 under bf16 autocast;
    ``owner`` (the estimator's class) starts the messages.
    """
    if guard == "off":
        return MemoryPlan()
    device = torch.device(device)
    memory = dict(bytes_per_value=bytes_per_value, device_type=device.type, keeps_freed=keeps_freed)
    batch = min(batch_size, max(n_train, 1))
    need = training_bytes(config, batch, length, **memory)
    budget = MEMORY_HEADROOM * free_bytes
    if need <= budget:
        return MemoryPlan(need_bytes=need, free_bytes=free_bytes)
    options = []
    for option in _alternatives(config, batch):
        encoder_part = {k: v for k, v in option.items() if k != "batch_size"}
        est = training_bytes(replace(config, **encoder_part), option.get("batch_size", batch), length, **memory)
        if est <= budget:
            options.append((option, est))
    if guard == "auto" and options:
        option, est = options[0]
        message = (
            f"{owner}: training needs about {need / GB:.1f} GB but {device} has {free_bytes / GB:.1f} GB "
            f"free; training with {option} instead (about {est / GB:.1f} GB). The choice is in memory_plan_."
        )
        return MemoryPlan(option, need, free_bytes, tuple(options), message)
    shown = "; ".join(
        ", ".join(f"{k}={v}" for k, v in option.items()) + f" (about {est / GB:.1f} GB)" for option, est in options[:4]
    )
    message = (
        f"{owner}: training would need about {need / GB:.1f} GB (batch {batch}, {length} steps, "
        f"{config.n_heads} heads, {config.n_layers} layers) but {device} has {free_bytes / GB:.1f} GB free. "
        + (f"Settings that would fit: {shown}. " if options else "No setting tried would fit. ")
        + "Pass one of them (batch_size as a parameter, the others in options, e.g. options={'recompute_attention': "
        "True}), or options={'memory_guard': 'auto'} to pick one, or options={'memory_guard': 'off'} to try anyway."
    )
    return MemoryPlan({}, need, free_bytes, tuple(options), message)


def out_of_memory_message(
    config,
    training_bytes,
    *,
    batch_size: int,
    n_train: int,
    length: int,
    device,
    keeps_freed: bool,
    bytes_per_value: int = 4,
    owner: str = "eadct",
) -> str:
    """The memory guard's message for an out-of-memory error that happened although the estimate fitted
    (other processes took memory, or the estimate is low for this GPU): settings that need at most half of
    the estimate for the given ones. Arguments as for :func:`plan_training_memory`."""
    device = torch.device(device)
    memory = dict(bytes_per_value=bytes_per_value, device_type=device.type, keeps_freed=keeps_freed)
    batch = min(batch_size, max(n_train, 1))
    need = training_bytes(config, batch, length, **memory)
    options = []
    for option in _alternatives(config, batch):
        encoder_part = {k: v for k, v in option.items() if k != "batch_size"}
        est = training_bytes(replace(config, **encoder_part), option.get("batch_size", batch), length, **memory)
        if est <= need / 2:
            options.append(", ".join(f"{k}={v}" for k, v in option.items()) + f" (about {_size(est)})")
    return (
        f"{owner}: {device} ran out of memory during training, although the estimate for these settings (about "
        f"{_size(need)}: batch {batch}, {length} steps, {config.n_heads} heads, {config.n_layers} layers) "
        "fitted its free memory; other processes may hold memory, or the estimate is low for this GPU. "
        + (f"Settings that need at most half as much: {'; '.join(options[:4])}. " if options else "")
        + "Pass one of them, or free memory on the GPU, and fit again."
    )


def _size(n_bytes: float) -> str:
    return f"{n_bytes / GB:.1f} GB" if n_bytes >= GB / 10 else f"{n_bytes / 2**20:.0f} MB"


@contextlib.contextmanager
def explain_out_of_memory(message: Callable[[], str]):
    """Turn ``torch.OutOfMemoryError`` inside the block into a ValueError with ``message()`` (the memory
    guard's words: :func:`out_of_memory_message`), after giving the cached CUDA memory back."""
    try:
        yield
    except torch.OutOfMemoryError as err:
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        raise ValueError(message()) from err


def inference_batch_size(config, *, attention: bool, batch_size: int, length: int, free_bytes: int) -> int:
    """Largest chunk (at most ``max(batch_size, 256)``) whose estimated inference peak fits in
    ``INFERENCE_HEADROOM`` of ``free_bytes``; ``attention`` says whether the encoder has attention maps."""
    chunk = max(batch_size, 256)
    while chunk > 1:
        est = estimate_stack_inference_bytes(
            chunk,
            length,
            d_model=config.d_model,
            n_heads=config.n_heads,
            downsample=config.attention_downsample,
            d_attention=config.d_attention if attention else 0,
        )
        if est <= INFERENCE_HEADROOM * free_bytes:
            break
        chunk //= 2
    return chunk
