"""Operations on attention maps: one block of the map path, the map convolution and the map dropout.

The (B, K, N, N) maps dominate the time and memory of evolving attention, so these functions are written
for few passes over them (custom backwards, in-place writes into intermediates). Why each choice was made,
with the measurements, is in docs/long_series.md ("Fast paths").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass(frozen=True)
class MapSettings:
    """Everything of one layer's map path that is not a tensor.

    Parameters
    ----------
    alpha : float
        Paper's alpha: weight of the previous layer's logits (0: not read).
    beta : float
        Paper's beta: weight of the ``ReLU(Conv2d)`` path (0: no convolution).
    dropout : float
        Dropout probability on the attention weights.
    training : bool
        Whether dropout is active.
    need_logits : bool
        Whether the blocked path must return this layer's logits.
    block_elements : int or None
        Map values per block of the blocked path (None: the device's default).
    """

    alpha: float
    beta: float
    dropout: float = 0.0
    training: bool = False
    need_logits: bool = True
    block_elements: int | None = None


def map_block(q, k, v, *, previous, valid, weight, bias, settings: MapSettings, rows=None):
    """The map path for a block of query rows: -> ``A v`` ``(b, K, R, d_head)`` and logits ``(b, K, R, M)``.

    The 1 / sqrt(d_head) scale goes on q, the alpha-mix is fused into the q k^T product (one ``baddbmm``),
    the convolution is :func:`evolve_maps`.

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
    settings : MapSettings
    rows : tuple ``(r0, top, bottom)`` or None
        The block's first row and its halo rows above and below; None: all M rows, no halo.
    """
    m_q = q.shape[2]
    logits = _mixed_scores(q, k, previous, settings.alpha)
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
        logits = evolve_maps(logits, weight, bias, settings.beta, halo, overwrite=True)  # our intermediate
    scores = logits
    if valid is not None:
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
    weights = map_dropout(torch.softmax(scores, dim=-1), settings.dropout, settings.training)
    return torch.matmul(weights, v), logits  # (b, K, R, d_head), (b, K, R, M)


def _mixed_scores(q, k, previous, alpha: float):
    """``alpha * previous + (1 - alpha) * S_i`` ``(b, K, R, M)``, with ``S_i = q k^T / sqrt(d_head)`` (the previous
    logits left out where alpha is 0): the scale goes on q, the mix into one ``baddbmm``."""
    b, heads, m_q, d_head = q.shape
    m = k.shape[2]
    q = q * (1.0 / math.sqrt(d_head))
    if alpha == 0:
        return torch.matmul(q, k.transpose(-1, -2))  # S_i (b, K, rows, M)
    # baddbmm names its two weights beta (on the added tensor) and alpha (on the product): the paper's alpha is the
    # former.
    take_new = 1.0 - alpha
    logits = torch.baddbmm(
        previous.reshape(b * heads, m_q, m),
        q.reshape(b * heads, m_q, d_head),
        k.reshape(b * heads, m, d_head).transpose(1, 2),
        beta=alpha,
        alpha=take_new,
    )
    # not a view for autograd (a .view would make evolve_maps' in-place write a CopySlices)
    return torch.ops.aten._unsafe_view(logits, (b, heads, m_q, m))


def map_dropout(weights: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Dropout on attention weights: ``F.dropout`` on CUDA, :class:`_MapDropout` on the CPU.

    On the CPU ``F.dropout`` draws its mask with ``bernoulli_``, which costs a large share of an attention
    step; :class:`_MapDropout` draws the same distribution (keep probability rounded to a multiple of
    2**-16) several times faster, mask and scaling included (docs/long_series.md, "Fast paths").
    """
    if not training or p == 0:
        return weights
    keep = round((1.0 - p) * 65536)
    if weights.device.type != "cpu" or keep == 0:
        return F.dropout(weights, p, training)
    return _MapDropout.apply(weights, keep)


def _keep_mask(x: torch.Tensor, keep: int) -> torch.Tensor:
    """The 1-byte mask of :class:`_MapDropout` for ``x``: True where a value is kept (probability ``keep / 65536``),
    from 16-bit slices of 64-bit random integers drawn from torch's generator for ``x``'s device."""
    n = x.numel()
    draws = torch.empty((n + 3) // 4, dtype=torch.int64, device=x.device).random_(-(2**63), 2**63 - 1)
    return (draws.view(torch.int16)[:n] < keep - 32768).view(x.shape)


class _MapDropout(torch.autograd.Function):
    """Dropout whose mask comes from 16-bit slices of 64-bit random integers (four values a draw).

    A value is kept where its slice, read as a signed 16-bit integer, is below ``keep - 32768`` with
    ``keep = round((1 - p) * 65536)``: probability ``keep / 65536`` (within 2**-17 of ``1 - p``), and the kept
    values are scaled by ``65536 / keep``, so the expectation is exactly the input. Uses torch's CPU generator
    (``torch.manual_seed`` reproduces it) and saves the 1-byte mask for backward, as ``F.dropout`` does.
    """

    @staticmethod
    def forward(ctx, x, keep):
        mask = _keep_mask(x, keep)
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

    The convolution runs in channels-last layout (faster on CPU for K = 8 channels, the copy included); the
    result is in the standard layout of ``logits``. In training a custom backward (:class:`_EvolveMaps`)
    replaces autograd's: it keeps the ReLU backward in one layout and asks the convolution backward for the
    input and the weight gradients in two calls, which oneDNN runs faster on CPU than the one joint call
    autograd makes (docs/long_series.md, "Fast paths"). Results equal autograd's within float tolerance
    (tested).

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
