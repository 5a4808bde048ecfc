"""Evolving attention: attention logits that evolve layer to layer through a residual 2D conv."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..runtime import keeps_freed_memory
from .maps import MapSettings, evolve_maps, map_block, map_dropout

__all__ = [
    "EvolvingAttention",
    "MapSettings",
    "auto_blocks",
    "chunked_map_path",
    "evolve_maps",
    "map_block",
    "map_dropout",
]


class EvolvingAttention(nn.Module):
    """Multi-head self-attention whose logits take part in a chain across layers.

    With the paper's names (Eq. 1 and 6), for layer ``i > 1``::

        A_in    = alpha * A_logit_{i-1} + (1 - alpha) * S_i
        A_logit = beta * ReLU(Conv2d(A_in)) + (1 - beta) * A_in
        A       = softmax(A_logit + key_padding_bias)

    where ``S_i = q k^T / sqrt(d_head)``. The first layer (``evolve=False``) returns
    ``A_logit = S_1``, which seeds the chain. ``alpha`` weighs the previous layer's
    logits and ``beta`` the convolution path; the authors' code swaps these two names.

    Parameters
    ----------
    d_model : int
        Width of the input x.
    d_attention : int
        Width ``p * d`` of this branch, split over ``n_heads``.
    n_heads : int
        Heads K; they are the channels of the 2D convolution.
    alpha, beta : float
        Mixing weights above. ``beta == 0`` builds no convolution; ``alpha == 0``
        ignores the previous logits. Both zero: plain attention (DC-Transformer).
    kernel_size : int
        Odd kernel of the ``Conv2d(K -> K)`` over the maps (padding ``k // 2``).
    dropout : float
        Dropout on the attention weights.
    evolve : bool
        False for the first layer of the chain.
    recompute : bool or "auto"
        True: run the map path in blocks of query rows and recompute it block by block in backward
        (:func:`chunked_map_path`). False: store its maps. "auto": :func:`auto_blocks`. Without gradients
        (inference) the map path always runs in blocks.
    downsample : int
        Average-pool the tokens by this factor before attention and repeat the output back to N
        steps (maps of ``ceil(N / r)`` squared); every layer of a chain must use the same factor.
    fast_plain : bool
        Use ``F.scaled_dot_product_attention`` (fused, never materialises the map) when this
        layer neither evolves a map nor has to return one.
    """

    def __init__(
        self,
        d_model: int,
        d_attention: int,
        n_heads: int,
        *,
        alpha: float = 0.5,
        beta: float = 0.3,
        kernel_size: int = 3,
        dropout: float = 0.1,
        evolve: bool = True,
        recompute: bool | str = False,
        downsample: int = 1,
        fast_plain: bool = True,
    ):
        super().__init__()
        if d_attention % n_heads:
            raise ValueError(f"d_attention={d_attention} is not divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        self.d_head = d_attention // n_heads
        self.alpha = float(alpha) if evolve else 0.0
        self.beta = float(beta) if evolve else 0.0
        self.qkv = nn.Linear(d_model, 3 * d_attention)
        self.out = nn.Linear(d_attention, d_attention)  # W_O
        self.map_conv = None
        if self.beta > 0:
            # channels-last weights match the channels-last maps (no reorder inside the conv)
            conv = nn.Conv2d(n_heads, n_heads, kernel_size, padding=kernel_size // 2)
            self.map_conv = conv.to(memory_format=torch.channels_last)
        self.dropout = nn.Dropout(dropout)
        self.recompute = recompute
        self.downsample = int(downsample)
        self.fast_plain = fast_plain

    @property
    def uses_previous(self) -> bool:
        """Whether this layer reads the previous layer's logits."""
        return self.alpha > 0

    def forward(
        self,
        x: torch.Tensor,
        previous_logits: torch.Tensor | None = None,
        valid: torch.Tensor | None = None,
        need_logits: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Attend over ``x`` ``(B, N, d_model)``.

        Parameters
        ----------
        x : Tensor ``(B, N, d_model)``
        previous_logits : Tensor ``(B, K, M, M)`` or None
            ``A_logit`` of the previous layer (M = N, or ``ceil(N / downsample)``); required when
            ``alpha > 0``.
        valid : Tensor ``(B, N)`` of bool or None
            True at real (unpadded) steps; None means all steps are real.
        need_logits : bool
            Whether the caller needs this layer's logits (the next layer evolves them, or they are
            inspected); when not, a plain layer may take the fused fast path and return None.

        Returns
        -------
        h : Tensor ``(B, N, d_attention)``
            ``concat_heads(A v) W_O``.
        logits : Tensor ``(B, K, M, M)`` or None
            ``A_logit`` of this layer, before any mask or softmax, for the next layer.
        """
        b, n, _ = x.shape
        r = self.downsample
        if r > 1:
            x, valid = _pool_tokens(x, valid, r)  # (B, M, d), (B, M)
        m = x.shape[1]
        qkv = self.qkv(x).view(b, m, 3, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # each (B, K, M, d_head)
        if self.fast_plain and not need_logits and self.alpha == 0 and self.map_conv is None:
            mask = None if valid is None else valid[:, None, None, :]  # (B, 1, 1, M), True = attend
            p_drop = self.dropout.p if self.training else 0.0
            h, logits = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p_drop), None
        else:
            h, logits = self._map_path(q, k, v, previous_logits, valid, need_logits)
        h = h.transpose(1, 2).reshape(b, m, self.n_heads * self.d_head)  # (B, M, K * d_head)
        if r > 1:
            h = h.repeat_interleave(r, dim=1)[:, :n]  # back to (B, N, K * d_head)
        return self.out(h), logits

    def _map_path(self, q, k, v, previous_logits, valid, need_logits):
        """``(B, K, M, d_head)`` q, k, v -> ``A v`` and this layer's logits, stored or in blocks."""
        if self.alpha > 0 and previous_logits is None:
            raise ValueError("alpha > 0 needs the previous layer's attention logits")
        b, heads, m, _ = q.shape
        conv = self.map_conv
        tensors = dict(
            previous=previous_logits if self.alpha > 0 else None,
            valid=valid,
            weight=None if conv is None else conv.weight,
            bias=None if conv is None else conv.bias,
        )
        settings = MapSettings(
            alpha=self.alpha, beta=self.beta, dropout=self.dropout.p, training=self.training, need_logits=need_logits
        )
        if runs_in_blocks(self.recompute, b * heads * m * m, q.device):
            return chunked_map_path(q, k, v, **tensors, settings=settings)
        return map_block(q, k, v, **tensors, settings=settings)


#: Map size (B * K * M * M values per layer) from which "auto" recomputation runs the map path in blocks on
#: the CPU (:func:`auto_blocks`; measured in docs/long_series.md).
AUTO_BLOCKED_ELEMENTS = 2**24


def auto_blocks(elements: int, device_type: str, keeps_freed: bool | None = None) -> bool:
    """The rule of ``recompute_attention="auto"`` for a layer's maps of ``elements`` values: the one place
    it is defined.

    Blocks (recomputes) on the CPU from ``AUTO_BLOCKED_ELEMENTS`` on, where blocking measured both faster
    and leaner than stored maps (page faults and cache misses on large fresh maps cost more than the
    recomputation), unless the process keeps freed memory (``keeps_freed``; None reads
    :func:`eadct.runtime.keeps_freed_memory`): without page faults stored maps measured faster. On CUDA
    the maps are stored (blocking saves as much memory there but measured slower); the memory guard
    proposes ``recompute_attention=True`` where stored maps do not fit. Measurements: docs/long_series.md.
    """
    if keeps_freed is None:
        keeps_freed = keeps_freed_memory()
    return device_type == "cpu" and elements >= AUTO_BLOCKED_ELEMENTS and not keeps_freed


def runs_in_blocks(setting, elements: int, device: torch.device) -> bool:
    """Whether the map path runs in blocks: always without gradients, else per ``recompute_attention``."""
    if not torch.is_grad_enabled():
        return True
    if setting == "auto":
        return auto_blocks(elements, device.type)
    return bool(setting)


#: Elements of one (b, K, rows, M) block of the map path on CPU (about 4 MB in float32): small enough that a
#: block's maps stay in cache, large enough that the Python loop over blocks costs little. On CUDA blocks are
#: larger (``CUDA_CHUNK_ELEMENTS``, 64 MB), where the cost is a kernel launch per operation and block.
CHUNK_ELEMENTS = 2**20
CUDA_CHUNK_ELEMENTS = 2**24


def _chunks(b: int, heads: int, m: int, halo: int, elements: int):
    """Blocks ``(b0, b1, r0, r1)`` covering the (b, M) rows, each about ``elements`` map entries."""
    per_sample = heads * m * m
    if per_sample <= elements:
        step = max(1, elements // per_sample)
        return [(b0, min(b, b0 + step), 0, m) for b0 in range(0, b, step)]
    rows = max(1, elements // (heads * m) - 2 * halo)
    return [(b0, b0 + 1, r0, min(m, r0 + rows)) for b0 in range(b) for r0 in range(0, m, rows)]


def _block_inputs(q, previous, chunk, halo, m):
    """Slices of q and previous logits for a block with its halo rows: views, and the halo sizes."""
    b0, b1, r0, r1 = chunk
    lo, hi = max(0, r0 - halo), min(m, r1 + halo)
    prev = None if previous is None else previous[b0:b1, :, lo:hi]
    return q[b0:b1, :, lo:hi], prev, (r0, r0 - lo, hi - r1)


def chunked_map_path(q, k, v, *, previous, valid, weight, bias, settings: MapSettings):
    """The map path in blocks of query rows, recomputed block by block in backward.

    Same arguments and results as the full map path (:func:`map_block` over all rows); ``logits`` is None
    when ``settings.need_logits`` is False. Recomputation at the granularity of a block: for backward only
    q, k, v and the previous logits are kept (one map per layer), and the recomputation holds one block's
    maps at a time instead of a layer's. The convolution of a block reads ``kernel // 2`` halo rows of its
    neighbours, so results equal the full path within float tolerance (without dropout; with dropout the
    masks are drawn block by block, from the same distribution, and replayed exactly in backward).
    """
    return _ChunkedMaps.apply(q, k, v, previous, valid, weight, bias, settings)


def _blocks(q, k, v, previous, valid, weight, settings: MapSettings):
    """The blocks of the map path in a fixed order: ``(chunk, rows, (q, k, v, previous, valid))`` slices."""
    b, heads, m, _ = q.shape
    halo = 0 if weight is None else weight.shape[-1] // 2
    default = CHUNK_ELEMENTS if q.device.type == "cpu" else CUDA_CHUNK_ELEMENTS
    for chunk in _chunks(b, heads, m, halo, settings.block_elements or default):
        b0, b1 = chunk[:2]
        q_c, prev_c, rows = _block_inputs(q, previous, chunk, halo, m)
        yield chunk, rows, (q_c, k[b0:b1], v[b0:b1], prev_c, None if valid is None else valid[b0:b1])


class _ChunkedMaps(torch.autograd.Function):
    """Autograd of :func:`chunked_map_path`: forward without a graph, backward recomputes block by block."""

    @staticmethod
    def forward(ctx, q, k, v, previous, valid, weight, bias, settings):
        ctx.set_materialize_grads(False)
        need_logits = settings.need_logits
        device = q.device.type
        ctx.autocast = (torch.is_autocast_enabled(device), torch.get_autocast_dtype(device))
        ctx.rng = _rng_state(q.device)
        b, heads, m, d_head = q.shape
        h_all = logits_all = None
        for (b0, b1, r0, r1), rows, (q_c, k_c, v_c, prev_c, valid_c) in _blocks(
            q, k, v, previous, valid, weight, settings
        ):
            tensors = dict(previous=prev_c, valid=valid_c, weight=weight, bias=bias)
            h, logits = map_block(q_c, k_c, v_c, **tensors, settings=settings, rows=rows)
            if h_all is None:
                h_all = h.new_empty(b, heads, m, d_head)
                logits_all = logits.new_empty(b, heads, m, m) if need_logits else None
            h_all[b0:b1, :, r0:r1] = h
            if need_logits:
                logits_all[b0:b1, :, r0:r1] = logits
            del h, logits
        ctx.save_for_backward(q, k, v, previous, valid, weight, bias)
        ctx.settings = settings
        return h_all, logits_all

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_h, grad_logits):
        q, k, v, previous, valid, weight, bias = ctx.saved_tensors
        inputs = (q, k, v, previous, weight, bias)
        needs = (*ctx.needs_input_grad[:4], *ctx.needs_input_grad[5:7])
        wants = [t is not None and need for t, need in zip(inputs, needs, strict=True)]
        grads = [torch.zeros_like(t) if w else None for t, w in zip(inputs, wants, strict=True)]
        if grad_h is None and grad_logits is None:
            return (*grads[:4], None, *grads[4:], None)
        device = q.device
        enabled, dtype = ctx.autocast
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else [], device_type=device.type):
            _set_rng_state(device, ctx.rng)  # the same dropout masks as forward, block by block
            with torch.enable_grad(), torch.autocast(device.type, dtype=dtype, enabled=enabled):
                for (b0, b1, r0, r1), rows, (q_c, k_c, v_c, prev_c, valid_c) in _blocks(
                    q, k, v, previous, valid, weight, ctx.settings
                ):
                    leaves = [
                        None if x is None else x.detach().requires_grad_(w)
                        for x, w in zip((q_c, k_c, v_c, prev_c, weight, bias), wants, strict=True)
                    ]
                    q_l, k_l, v_l, prev_l, w_l, b_l = leaves
                    tensors = dict(previous=prev_l, valid=valid_c, weight=w_l, bias=b_l)
                    h, logits = map_block(q_l, k_l, v_l, **tensors, settings=ctx.settings, rows=rows)
                    outs, outs_grad = [], []
                    if grad_h is not None:
                        outs.append(h)
                        outs_grad.append(grad_h[b0:b1, :, r0:r1])
                    if grad_logits is not None:
                        outs.append(logits)
                        outs_grad.append(grad_logits[b0:b1, :, r0:r1])
                    idx = [i for i, w in enumerate(wants) if w]
                    got = torch.autograd.grad(outs, [leaves[i] for i in idx], outs_grad, allow_unused=True)
                    lo, hi = r0 - rows[1], r1 + rows[2]
                    for i, g in zip(idx, got, strict=True):
                        if g is None:
                            continue
                        if i in (0, 3):  # q and previous logits: this block's rows with the halo
                            grads[i][b0:b1, :, lo:hi].add_(g)
                        elif i in (1, 2):
                            grads[i][b0:b1].add_(g)
                        else:
                            grads[i].add_(g)
                    del h, logits, outs, outs_grad, got, leaves, tensors, q_l, k_l, v_l, prev_l, w_l, b_l
        return (*grads[:4], None, *grads[4:], None)


def _rng_state(device: torch.device):
    if device.type == "cuda":
        return torch.cuda.get_rng_state(device)
    return torch.get_rng_state()


def _set_rng_state(device: torch.device, state) -> None:
    if device.type == "cuda":
        torch.cuda.set_rng_state(state, device)
    else:
        torch.set_rng_state(state)


def _pool_tokens(x: torch.Tensor, valid: torch.Tensor | None, r: int):
    """Mean over windows of ``r`` steps, zero-padding the end: ``(B, N, d)`` -> ``(B, ceil(N/r), d)``.

    Padded steps are zero, so a window's mean is the same whether a series stands alone or inside a
    batch of longer ones; a pooled token is valid when any step of its window is.
    """
    b, n, d = x.shape
    m = -(-n // r)
    x = F.pad(x, (0, 0, 0, m * r - n)).view(b, m, r, d).mean(dim=2)
    if valid is not None:
        valid = F.pad(valid, (0, m * r - n)).view(b, m, r).any(dim=2)
    return x, valid
