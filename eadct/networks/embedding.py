"""Input stem: per-step linear projection plus a learnable absolute position table."""

from __future__ import annotations

import math

import torch
from torch import nn


class InputEmbedding(nn.Module):
    """``Linear(C -> d) * sqrt(d)`` per time step plus a learnable positional embedding (TST stem).

    Parameters
    ----------
    n_channels : int
        Input channels C.
    d_model : int
        Output width d.
    max_len : int
        Rows of the positional table. Positions at or past ``max_len`` (series longer
        than any seen in training) reuse the last row: the model has never been trained
        on those positions, and the last learned position is the closest it knows.
    dropout : float
        Dropout after the sum.
    """

    def __init__(self, n_channels: int, d_model: int, max_len: int, dropout: float = 0.1):
        super().__init__()
        self.projection = nn.Linear(n_channels, d_model)
        self.position = nn.Parameter(torch.empty(max_len, d_model).uniform_(-0.02, 0.02))
        self.scale = math.sqrt(d_model)
        self.dropout = nn.Dropout(dropout)

    def positions(self, n_steps: int) -> torch.Tensor:
        """Positional rows for ``n_steps`` steps, shape ``(N, d)``."""
        max_len = self.position.shape[0]
        if n_steps <= max_len:
            return self.position[:n_steps]
        extra = self.position[-1:].expand(n_steps - max_len, -1)
        return torch.cat([self.position, extra], dim=0)

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Embed ``x`` of shape ``(B, N, C)``; ``valid`` ``(B, N)`` is True at real steps."""
        if valid is not None:
            x = x * valid.unsqueeze(-1)  # padded steps carry no signal
        h = self.projection(x) * self.scale + self.positions(x.shape[1])
        h = self.dropout(h)
        if valid is not None:
            h = h * valid.unsqueeze(-1)
        return h
