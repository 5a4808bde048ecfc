"""Peak-memory estimates of the EA-DC-Transformer, and the memory a device has free.

The (B, K, M, M) attention maps dominate: M = ceil(N / attention_downsample). Per layer, training with stored
maps keeps for backward about 4.25 maps in float32 when the map evolves (the conv input, the ReLU output, the
softmax output, the dropout output and its 1-byte mask) and 2.25 for plain attention (softmax output, dropout
output and mask); backward adds a few maps of gradients at a time. The blocked path (``checkpoint_attention``
True, or "auto" on large maps) keeps one map per layer (the logits handed on) plus, in backward, the incoming
and outgoing logit gradients; its blocks are a few MB. Inference runs in blocks and holds about two maps (the
logits read and the logits written). The coefficients are checked against measurements by
``benchmarks/attention_speed_memory.py`` (its "estimate" column).
"""

from __future__ import annotations

import math
import os

import torch

from .attention import CHUNK_ELEMENTS, CUDA_CHUNK_ELEMENTS, auto_blocks

MAPS_SAVED_EVOLVING = 4.25
MAPS_SAVED_PLAIN = 2.25
MAPS_TRANSIENT_BACKWARD = 3.0
MAPS_BLOCKED_BACKWARD = 2.0
MAPS_TRANSIENT_INFERENCE = 2.0
#: Stored maps under bf16 autocast, as a share of the float32 estimate. Not a half: autocast runs softmax in
#: float32, so the softmax output (saved for its backward), its dropout and a bf16 copy for ``A v`` are kept.
#: Measured on an H100 (benchmarks/attention_speed_memory.py --precision bf16, N = 405 to 2500; docs/long_series.md).
AUTOCAST_STORED_SHARE = {"evolving": 0.66, "plain": 0.85}
MAPS_PER_BLOCK = 4.0  # a block holds about four maps' worth of its CHUNK_ELEMENTS values at a time


def _map_bytes(batch: int, heads: int, length: int, downsample: int, bytes_per_value: int) -> int:
    m = math.ceil(length / downsample)
    return batch * heads * m * m * bytes_per_value


def estimate_stack_training_bytes(
    batch: int,
    length: int,
    d_model: int,
    n_heads: int,
    n_layers: int,
    evolving: bool = True,
    checkpoint: bool | str = False,
    downsample: int = 1,
    d_attention: int | None = None,
    d_ff: int = 256,
    bytes_per_value: int = 4,
    device_type: str = "cpu",
) -> int:
    """Estimated peak bytes of one training step of ``n_layers`` attention layers.

    Parameters
    ----------
    batch, length : int
        B and N.
    d_model, n_heads, n_layers : int
    evolving : bool
        Evolving (map convolution) or plain attention layers.
    checkpoint : bool or "auto"
        ``checkpoint_attention``: the blocked, recomputed map path (True), stored maps (False), or the
        blocked path on maps of at least ``AUTO_BLOCKED_ELEMENTS`` values ("auto").
    downsample : int
        Token pooling factor before attention.
    d_attention : int, optional
        Attention width ``p * d`` (0: no attention branch); defaults to ``d_model``.
    d_ff : int
        Feed-forward width.
    bytes_per_value : int
        4 for float32, 2 for bf16 autocast: the blocked path's maps in 2 bytes; stored maps as
        ``AUTOCAST_STORED_SHARE`` of the float32 estimate (softmax runs in float32 under autocast).
    device_type : str
        Where "auto" checkpointing is resolved ("cpu" or "cuda").
    """
    d_attention = d_model if d_attention is None else d_attention
    per_map = _map_bytes(batch, n_heads, length, downsample, bytes_per_value) if d_attention else 0
    saved = MAPS_SAVED_EVOLVING if evolving else MAPS_SAVED_PLAIN
    if checkpoint == "auto":
        m = math.ceil(length / downsample)
        checkpoint = auto_blocks(batch * n_heads * m * m, device_type)
    if bytes_per_value < 4 and not checkpoint:
        share = AUTOCAST_STORED_SHARE["evolving" if evolving else "plain"]
        full = estimate_stack_training_bytes(
            batch, length, d_model, n_heads, n_layers, evolving, False, downsample, d_attention, d_ff, 4, device_type
        )
        return int(share * full)
    if checkpoint:
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
