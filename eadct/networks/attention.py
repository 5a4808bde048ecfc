"""Evolving attention: attention logits that evolve layer to layer through a residual 2D conv."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint


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
    checkpoint_maps : bool
        Recompute the map path (logits, convolution, softmax, ``A v``) in backward: per layer only
        the logits passed on stay in memory instead of about six (B, K, N, N) tensors.
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
        checkpoint_maps: bool = False,
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
        elif self.checkpoint_maps and self.training and torch.is_grad_enabled():
            h, logits = checkpoint(self._attend, q, k, v, previous_logits, valid, use_reentrant=False)
        else:
            h, logits = self._attend(q, k, v, previous_logits, valid)

        h = h.transpose(1, 2).reshape(b, m, self.n_heads * self.d_head)  # (B, M, K * d_head)
        if r > 1:
            h = h.repeat_interleave(r, dim=1)[:, :n]  # back to (B, N, K * d_head)
        return self.out(h), logits

    def _attend(self, q, k, v, previous_logits, valid):
        """The map path: ``(B, K, M, d_head)`` q, k, v -> ``A v`` and this layer's logits.

        Written for few passes over the (B, K, M, M) maps, which dominate time and memory: the
        1 / sqrt(d_head) scale goes on q, the alpha-mix is fused into the q k^T product (one
        ``baddbmm``), and the map convolution runs in channels-last layout (about 3x faster on CPU
        for K = 8 channels than the default layout, copies included).
        """
        b, heads, m, d_head = q.shape
        q = q * (1.0 / math.sqrt(d_head))
        if self.alpha > 0:
            if previous_logits is None:
                raise ValueError("alpha > 0 needs the previous layer's attention logits")
            # alpha * prev + (1 - alpha) * q k^T, in one product: (B * K, M, M)
            logits = torch.baddbmm(
                previous_logits.reshape(b * heads, m, m),
                q.reshape(b * heads, m, d_head),
                k.reshape(b * heads, m, d_head).transpose(1, 2),
                beta=self.alpha,
                alpha=1.0 - self.alpha,
            ).view(b, heads, m, m)
        else:
            logits = torch.matmul(q, k.transpose(-1, -2))  # S_i (B, K, M, M)
        if self.map_conv is not None:
            if valid is not None:
                # Zero logits where query or key is padded, so the conv sees the same
                # neighbourhood whatever the padding: (B, 1, M, M).
                pair = (valid.unsqueeze(2) & valid.unsqueeze(1)).unsqueeze(1)
                logits = logits.masked_fill(~pair, 0.0)
            a_in = logits.contiguous(memory_format=torch.channels_last)
            evolved = F.relu(self.map_conv(a_in), inplace=True)  # conv backward does not need its output
            # logits (standard layout) and a_in hold the same values; reading the former makes lerp
            # write a standard-layout result, which saves a separate copy back.
            logits = torch.lerp(logits, evolved, self.beta)
        scores = logits
        if valid is not None:
            scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return torch.matmul(weights, v), logits  # (B, K, M, d_head), (B, K, M, M)


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
