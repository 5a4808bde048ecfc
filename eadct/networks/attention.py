"""Evolving attention: attention logits that evolve layer to layer through a residual 2D conv."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..runtime import keeps_freed_memory


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
    checkpoint_maps : bool or "auto"
        True: run the map path (logits, convolution, softmax, ``A v``) in blocks of query rows and
        recompute it block by block in backward (:func:`chunked_map_path`): per layer only the logits
        passed on stay in memory instead of about four (B, K, N, N) tensors. False: store them.
        "auto": :func:`auto_blocks` (True on CPU where a layer's maps hold at least
        ``AUTO_BLOCKED_ELEMENTS`` values and the process does not keep freed memory), else False.
        Without gradients (inference) the map path always runs in blocks.
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
        alpha: float = 0.5,
        beta: float = 0.3,
        kernel_size: int = 3,
        dropout: float = 0.1,
        evolve: bool = True,
        checkpoint_maps: bool | str = False,
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
        self.checkpoint_maps = checkpoint_maps
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
            h = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, dropout_p=self.dropout.p if self.training else 0.0
            )
            logits = None
        elif _blocked(self.checkpoint_maps, b * self.n_heads * m * m, x.device):
            if self.alpha > 0 and previous_logits is None:
                raise ValueError("alpha > 0 needs the previous layer's attention logits")
            conv = self.map_conv
            h, logits = chunked_map_path(
                q,
                k,
                v,
                previous_logits if self.alpha > 0 else None,
                valid,
                None if conv is None else conv.weight,
                None if conv is None else conv.bias,
                self.alpha,
                self.beta,
                self.dropout.p,
                self.training,
                need_logits,
            )
        else:
            h, logits = self._attend(q, k, v, previous_logits, valid)

        h = h.transpose(1, 2).reshape(b, m, self.n_heads * self.d_head)  # (B, M, K * d_head)
        if r > 1:
            h = h.repeat_interleave(r, dim=1)[:, :n]  # back to (B, N, K * d_head)
        return self.out(h), logits

    def _attend(self, q, k, v, previous_logits, valid):
        """The map path over all rows: ``(B, K, M, d_head)`` q, k, v -> ``A v`` and this layer's logits."""
        if self.alpha > 0 and previous_logits is None:
            raise ValueError("alpha > 0 needs the previous layer's attention logits")
        conv = self.map_conv
        return _map_block(
            q,
            k,
            v,
            previous_logits if self.alpha > 0 else None,
            valid,
            None if conv is None else conv.weight,
            None if conv is None else conv.bias,
            self.alpha,
            self.beta,
            self.dropout.p,
            self.training,
        )


def _map_block(q, k, v, previous, valid, weight, bias, alpha, beta, p_drop, training, rows=None):
    """The map path for a block of query rows: -> ``A v`` ``(b, K, R, d_head)`` and logits ``(b, K, R, M)``.

    Written for few passes over the (b, K, R, M) maps, which dominate time and memory: the 1 / sqrt(d_head)
    scale goes on q, the alpha-mix is fused into the q k^T product (one ``baddbmm``), the convolution is
    :func:`evolve_maps`.

    Parameters
    ----------
    q : ``(b, K, R + top + bottom, d_head)``
        Queries of the block's rows and, with a convolution, of up to ``kernel // 2`` halo rows on
        either side (the rows the convolution reads).
    k, v : ``(b, K, M, d_head)``
    previous : ``(b, K, R + top + bottom, M)`` or None
        The previous layer's logits on the same rows as ``q``; None when ``alpha == 0``.
    valid : ``(b, M)`` bool or None
        Real (unpadded) steps.
    weight, bias : convolution parameters, or None for no convolution
    rows : tuple ``(r0, top, bottom)`` or None
        The block's first row and its halo rows above and below; None: all M rows, no halo.
    """
    b, heads, m_q, d_head = q.shape
    m = k.shape[2]
    q = q * (1.0 / math.sqrt(d_head))
    if alpha > 0:
        # alpha * prev + (1 - alpha) * q k^T, in one product: (b * K, rows, M)
        logits = torch.baddbmm(
            previous.reshape(b * heads, m_q, m),
            q.reshape(b * heads, m_q, d_head),
            k.reshape(b * heads, m, d_head).transpose(1, 2),
            beta=alpha,
            alpha=1.0 - alpha,
        )
        # not a view for autograd (a .view would make evolve_maps' in-place write a CopySlices)
        logits = torch.ops.aten._unsafe_view(logits, (b, heads, m_q, m))
    else:
        logits = torch.matmul(q, k.transpose(-1, -2))  # S_i (b, K, rows, M)
    r0, top, bottom = (0, 0, 0) if rows is None else rows
    if weight is not None:
        if valid is not None:
            # Zero logits where query or key is padded, so the conv sees the same
            # neighbourhood whatever the padding: (b, 1, rows, M).
            query_ok = valid[:, r0 - top : r0 - top + m_q]
            pair = (query_ok.unsqueeze(2) & valid.unsqueeze(1)).unsqueeze(1)
            logits = logits.masked_fill(~pair, 0.0)
        halo = 0
        if rows is not None:
            halo = weight.shape[-1] // 2
            logits = F.pad(logits, (0, 0, halo - top, halo - bottom))  # zero rows beyond the map's edge
        logits = evolve_maps(logits, weight, bias, beta, halo, overwrite=True)  # logits: our intermediate
    scores = logits
    if valid is not None:
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
    weights = map_dropout(torch.softmax(scores, dim=-1), p_drop, training)
    return torch.matmul(weights, v), logits  # (b, K, R, d_head), (b, K, R, M)


def map_dropout(weights: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Dropout on attention weights: ``F.dropout`` on CUDA, :class:`_MapDropout` on the CPU.

    On the CPU ``F.dropout`` draws its mask with ``bernoulli_`` at about 8 ns a value on the project's 2-core
    machine: 43 ms for one (32, 8, 144, 144) map, half of a plain attention training step at N = 144.
    :class:`_MapDropout` draws the same distribution (keep probability rounded to a multiple of 2**-16) about
    3.5x faster, mask and scaling included.
    """
    if not training or p == 0:
        return weights
    keep = round((1.0 - p) * 65536)
    if weights.device.type != "cpu" or keep == 0:
        return F.dropout(weights, p, training)
    return _MapDropout.apply(weights, keep)


class _MapDropout(torch.autograd.Function):
    """Dropout whose mask comes from 16-bit slices of 64-bit random integers (four values a draw).

    A value is kept where its slice, read as a signed 16-bit integer, is below ``keep - 32768`` with
    ``keep = round((1 - p) * 65536)``: probability ``keep / 65536`` (within 2**-17 of ``1 - p``), and the kept
    values are scaled by ``65536 / keep``, so the expectation is exactly the input. Uses torch's CPU generator
    (``torch.manual_seed`` reproduces it) and saves the 1-byte mask for backward, as ``F.dropout`` does.
    """

    @staticmethod
    def forward(ctx, x, keep):
        n = x.numel()
        draws = torch.empty((n + 3) // 4, dtype=torch.int64, device=x.device).random_(-(2**63), 2**63 - 1)
        mask = (draws.view(torch.int16)[:n] < keep - 32768).view(x.shape)
        ctx.save_for_backward(mask)
        ctx.scale = 65536.0 / keep
        return x.mul(mask).mul_(ctx.scale)

    @staticmethod
    def backward(ctx, grad):
        (mask,) = ctx.saved_tensors
        return grad.mul(mask).mul_(ctx.scale), None


def evolve_maps(
    logits: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    beta: float,
    halo: int = 0,
    overwrite: bool = False,
) -> torch.Tensor:
    """``(1 - beta) * A + beta * ReLU(Conv2d(A))`` for ``(B, K, R, M)`` logits ``A``, zero "same" padding.

    With ``halo > 0`` (``kernel // 2``) the input carries ``halo`` extra rows above and below (real
    neighbouring rows, or zeros at the map's edge) and the result has the ``R - 2 halo`` rows between.

    The convolution runs in channels-last layout (about 2x faster on CPU than the default layout for
    K = 8 channels, the copy included); the result is in the standard layout of ``logits``. In training a
    custom backward (:class:`_EvolveMaps`) replaces autograd's: it keeps the ReLU backward in one layout (a
    ReLU backward that mixes layouts ran about 7x slower) and asks the convolution backward for the input
    and the weight gradients in two calls, which oneDNN runs about 2x faster on CPU than the one joint call
    autograd makes. Results equal autograd's within float tolerance (tested).

    ``overwrite=True`` (with ``halo == 0``) writes the result into ``logits``, which the caller must not
    need afterwards (the map path passes its own intermediate): one (B, K, R, M) allocation fewer, which
    on the CPU also saves its page faults.
    """
    overwrite = overwrite and halo == 0 and not (logits.is_leaf and logits.requires_grad)
    if torch.is_grad_enabled() and (logits.requires_grad or weight.requires_grad):
        return _EvolveMaps.apply(logits, weight, bias, beta, halo, overwrite)
    return _evolve_forward(logits, weight, bias, beta, halo, overwrite)[0]


def _evolve_forward(logits, weight, bias, beta, halo, overwrite=False):
    # The conv runs in the maps' dtype (bf16 under autocast, as autocast would run it).
    weight = weight.to(logits.dtype)
    bias = None if bias is None else bias.to(logits.dtype)
    pad = weight.shape[-1] // 2
    a_in = logits.contiguous(memory_format=torch.channels_last)
    evolved = F.conv2d(a_in, weight, bias, padding=(pad - halo, pad)).relu_()
    # logits (standard layout) and a_in hold the same values; reading the former makes lerp write a
    # standard-layout result, which saves a copy back.
    if overwrite:
        return logits.lerp_(evolved, beta), a_in, evolved, weight
    core = logits if halo == 0 else logits[:, :, halo:-halo]
    return torch.lerp(core, evolved, beta), a_in, evolved, weight


class _EvolveMaps(torch.autograd.Function):
    """Autograd of :func:`evolve_maps`, written for few passes over the maps."""

    @staticmethod
    def forward(ctx, logits, weight, bias, beta, halo, overwrite):
        with torch.autocast(logits.device.type, enabled=False):
            out, a_in, evolved, weight_used = _evolve_forward(logits, weight, bias, beta, halo, overwrite)
        if overwrite:
            ctx.mark_dirty(logits)
        ctx.save_for_backward(a_in, evolved, weight_used)
        ctx.beta, ctx.halo = beta, halo
        ctx.has_bias = bias is not None
        ctx.param_dtype = weight.dtype
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_out):
        a_in, evolved, weight = ctx.saved_tensors
        beta, halo = ctx.beta, ctx.halo
        pad = weight.shape[-1] // 2
        grad_out = grad_out.to(a_in.dtype)
        # dL/dE, before the factor beta: the ReLU mask on the incoming gradient, all in channels-last (in place
        # when the layout change made a copy: one map fewer to allocate).
        grad_e = grad_out.contiguous(memory_format=torch.channels_last)
        if grad_e.data_ptr() != grad_out.data_ptr():
            torch.ops.aten.threshold_backward.grad_input(grad_e, evolved, 0, grad_input=grad_e)
        else:
            grad_e = torch.ops.aten.threshold_backward(grad_e, evolved, 0)
        grad_in = grad_w = grad_b = None
        conv_args = ([1, 1], [pad - halo, pad], [1, 1], False, [0, 0], 1)
        if ctx.needs_input_grad[0]:
            grad_conv = torch.ops.aten.convolution_backward(
                grad_e, a_in, weight, None, *conv_args, [True, False, False]
            )[0]
            if halo == 0:
                grad_in = torch.lerp(grad_out, grad_conv, beta)  # (1 - beta) g + beta conv^T(g_E)
            else:
                grad_in = grad_conv.mul_(beta)
                grad_in[:, :, halo:-halo].add_(grad_out, alpha=1.0 - beta)
        if ctx.needs_input_grad[1] or (ctx.has_bias and ctx.needs_input_grad[2]):
            bias_sizes = [weight.shape[0]] if ctx.has_bias else None
            _, grad_w, grad_b = torch.ops.aten.convolution_backward(
                grad_e, a_in, weight, bias_sizes, *conv_args, [False, True, ctx.has_bias]
            )
            grad_w = (grad_w * beta).to(ctx.param_dtype)
            grad_b = (grad_b * beta).to(ctx.param_dtype) if grad_b is not None else None
        return grad_in, grad_w, grad_b, None, None, None


#: Map size (B * K * M * M values per layer) from which ``checkpoint_attention="auto"`` runs the map path in
#: blocks on CPU: measured on the project's 2-core CPU (benchmarks/attention_speed_memory.py), blocking is
#: slower below (recomputation, with maps that fit in cache anyway) and faster above (page faults and cache
#: misses on the stored maps cost more than the recomputation). On CUDA "auto" stores the maps: blocking
#: there saves as much memory but measured 1.6x to 1.9x the stored step on an H100 (N = 405 to 1751, no page
#: faults to save; docs/long_series.md); the memory guard proposes
#: ``checkpoint_attention=True`` where stored maps do not fit.
AUTO_BLOCKED_ELEMENTS = 2**24


def auto_blocks(elements: int, device_type: str) -> bool:
    """What ``checkpoint_attention="auto"`` does for a layer's maps of ``elements`` values.

    Blocks on CPU from ``AUTO_BLOCKED_ELEMENTS`` on, unless the process keeps freed memory
    (:func:`eadct.runtime.keep_freed_memory`): then stored maps cost no page faults and measured faster
    (1.48x against 2.90x the plain step at N = 405), so they stay stored as long as they fit (the memory
    guard proposes ``checkpoint_attention=True`` where they do not).
    """
    return device_type == "cpu" and elements >= AUTO_BLOCKED_ELEMENTS and not keeps_freed_memory()


def _blocked(setting, elements: int, device: torch.device) -> bool:
    """Whether the map path runs in blocks: always without gradients, else per ``checkpoint_attention``."""
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


def chunked_map_path(
    q, k, v, previous, valid, weight, bias, alpha, beta, p_drop, training, need_logits=True, elements=None
):
    """The map path in blocks of query rows, recomputed block by block in backward.

    Same arguments and results as the full map path (:func:`_map_block` over all rows); ``logits`` is
    None when ``need_logits`` is False. Activation checkpointing at the granularity of a block: for
    backward only q, k, v and the previous logits are kept (one map per layer), and the recomputation
    holds one block's maps at a time instead of a layer's. The convolution of a block reads
    ``kernel // 2`` halo rows of its neighbours, so results equal the full path within float tolerance
    (without dropout; with dropout the masks are drawn block by block, from the same distribution, and
    replayed exactly in backward).
    """
    return _ChunkedMaps.apply(
        q, k, v, previous, valid, weight, bias, (alpha, beta, p_drop, training, need_logits, elements)
    )


def _blocks(q, k, v, previous, valid, weight, settings):
    """The blocks of the map path in a fixed order: ``(chunk, rows, (q, k, v, previous, valid))`` slices."""
    b, heads, m, _ = q.shape
    halo = 0 if weight is None else weight.shape[-1] // 2
    default = CHUNK_ELEMENTS if q.device.type == "cpu" else CUDA_CHUNK_ELEMENTS
    for chunk in _chunks(b, heads, m, halo, settings[5] or default):
        b0, b1 = chunk[:2]
        q_c, prev_c, rows = _block_inputs(q, previous, chunk, halo, m)
        yield chunk, rows, (q_c, k[b0:b1], v[b0:b1], prev_c, None if valid is None else valid[b0:b1])


class _ChunkedMaps(torch.autograd.Function):
    """Autograd of :func:`chunked_map_path`: forward without a graph, backward recomputes block by block."""

    @staticmethod
    def forward(ctx, q, k, v, previous, valid, weight, bias, settings):
        ctx.set_materialize_grads(False)
        alpha, beta, p_drop, training, need_logits, _ = settings
        device = q.device.type
        ctx.autocast = (torch.is_autocast_enabled(device), torch.get_autocast_dtype(device))
        ctx.rng = _rng_state(q.device)
        b, heads, m, d_head = q.shape
        h_all = logits_all = None
        for (b0, b1, r0, r1), rows, (q_c, k_c, v_c, prev_c, valid_c) in _blocks(
            q, k, v, previous, valid, weight, settings
        ):
            h, logits = _map_block(q_c, k_c, v_c, prev_c, valid_c, weight, bias, alpha, beta, p_drop, training, rows)
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
        alpha, beta, p_drop, training, _, _ = ctx.settings
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
                    h, logits = _map_block(*leaves[:4], valid_c, *leaves[4:], alpha, beta, p_drop, training, rows)
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
                    del h, logits, outs, outs_grad, got, leaves
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
