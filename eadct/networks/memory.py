"""Peak-memory estimates of the EA-DC-Transformer, and the memory a device has free.

The (B, K, M, M) attention maps dominate: M = ceil(N / attention_downsample). Per layer, training keeps
for backward about 4.25 maps in float32 when the map evolves (the conv input, the ReLU output, the softmax
output, the dropout output and its 1-byte mask) and 2.25 for plain attention (softmax output, dropout
output and mask); backward adds a few maps of gradients at a time. Activation checkpointing keeps one map
per layer (the logits handed on) and recomputes one layer at a time. The coefficients are checked against
measurements by ``benchmarks/attention_speed_memory.py`` (its "estimate" column).
"""

from __future__ import annotations

import math
import os

import torch

MAPS_SAVED_EVOLVING = 4.25
MAPS_SAVED_PLAIN = 2.25
MAPS_TRANSIENT_BACKWARD = 3.0
MAPS_TRANSIENT_INFERENCE = 4.0


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
    checkpoint: bool = False,
    downsample: int = 1,
    d_attention: int | None = None,
    d_ff: int = 256,
    bytes_per_value: int = 4,
) -> int:
    """Estimated peak bytes of one training step of ``n_layers`` attention layers.

    Parameters
    ----------
    batch, length : int
        B and N.
    d_model, n_heads, n_layers : int
    evolving : bool
        Evolving (map convolution) or plain attention layers.
    checkpoint : bool
        Activation checkpointing of the map path.
    downsample : int
        Token pooling factor before attention.
    d_attention : int, optional
        Attention width ``p * d`` (0: no attention branch); defaults to ``d_model``.
    d_ff : int
        Feed-forward width.
    bytes_per_value : int
        4 for float32, 2 for bf16 autocast (maps are stored in the compute dtype).
    """
    d_attention = d_model if d_attention is None else d_attention
    per_map = _map_bytes(batch, n_heads, length, downsample, bytes_per_value) if d_attention else 0
    saved = MAPS_SAVED_EVOLVING if evolving else MAPS_SAVED_PLAIN
    if checkpoint:
        maps = n_layers * 1.0 + saved + MAPS_TRANSIENT_BACKWARD
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
    """Estimated peak bytes of a forward pass without gradients (maps are freed layer by layer)."""
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
