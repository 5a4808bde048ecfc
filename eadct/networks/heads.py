"""Output heads on top of an encoder."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class ReconstructionHead(nn.Module):
    """``Linear(d -> C)`` per time step, for masked-value pretraining (paper Eq. 7)."""

    def __init__(self, d_model: int, n_channels: int):
        super().__init__()
        self.linear = nn.Linear(d_model, n_channels)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """``(B, N, d)`` -> ``(B, N, C)``."""
        return self.linear(h)


class ClassificationHead(nn.Module):
    """GELU (as TST's output layer), dropout, then ``Linear(width -> n_outputs)`` on the pooled representation.

    Returns logits ``(B, n_outputs)``; softmax belongs to the loss / ``predict_proba``.
    """

    def __init__(self, width: int, n_outputs: int, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.linear = nn.Linear(width, n_outputs)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """``(B, width)`` -> ``(B, n_outputs)``."""
        return self.linear(self.dropout(F.gelu(z)))


class RegressionHead(nn.Module):
    """``Linear(width -> n_outputs)`` on the pooled representation (paper Eq. 9)."""

    def __init__(self, width: int, n_outputs: int = 1):
        super().__init__()
        self.linear = nn.Linear(width, n_outputs)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """``(B, width)`` -> ``(B, n_outputs)``."""
        return self.linear(z)
