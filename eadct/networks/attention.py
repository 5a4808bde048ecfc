"""Evolving attention: attention logits that evolve layer to layer through a residual 2D conv."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


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
        self.map_conv = nn.Conv2d(n_heads, n_heads, kernel_size, padding=kernel_size // 2) if self.beta > 0 else None
        self.dropout = nn.Dropout(dropout)

    @property
    def uses_previous(self) -> bool:
        """Whether this layer reads the previous layer's logits."""
        return self.alpha > 0

    def forward(
        self,
        x: torch.Tensor,
        previous_logits: torch.Tensor | None = None,
        valid: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Attend over ``x`` ``(B, N, d_model)``.

        Parameters
        ----------
        x : Tensor ``(B, N, d_model)``
        previous_logits : Tensor ``(B, K, N, N)`` or None
            ``A_logit`` of the previous layer; required when ``alpha > 0``.
        valid : Tensor ``(B, N)`` of bool or None
            True at real (unpadded) steps; None means all steps are real.

        Returns
        -------
        h : Tensor ``(B, N, d_attention)``
            ``concat_heads(A v) W_O``.
        logits : Tensor ``(B, K, N, N)``
            ``A_logit`` of this layer, before any mask or softmax, for the next layer.
        """
        b, n, _ = x.shape
        qkv = self.qkv(x).view(b, n, 3, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # each (B, K, N, d_head)
        logits = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d_head)  # S_i (B, K, N, N)

        if self.alpha > 0:
            if previous_logits is None:
                raise ValueError("alpha > 0 needs the previous layer's attention logits")
            logits = self.alpha * previous_logits + (1.0 - self.alpha) * logits
        if self.map_conv is not None:
            if valid is not None:
                # Zero logits where query or key is padded, so the conv sees the same
                # neighbourhood whatever the padding: (B, 1, N, N).
                pair = (valid.unsqueeze(2) & valid.unsqueeze(1)).unsqueeze(1)
                logits = logits * pair
            logits = self.beta * F.relu(self.map_conv(logits)) + (1.0 - self.beta) * logits

        scores = logits
        if valid is not None:
            scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        h = torch.matmul(weights, v)  # (B, K, N, d_head)
        h = h.transpose(1, 2).reshape(b, n, self.n_heads * self.d_head)  # (B, N, K * d_head)
        return self.out(h), logits
