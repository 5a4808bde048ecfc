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
    """GELU, dropout, then ``Linear(d -> n_classes)``; an optional hidden layer makes it the
    paper's "MLP" classifier.

    Returns logits ``(B, n_classes)``; softmax belongs to the loss / ``predict_proba``.
    """

    def __init__(self, d_in: int, n_classes: int, hidden: int | None = None, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.hidden = nn.Linear(d_in, hidden) if hidden else None
        self.linear = nn.Linear(hidden or d_in, n_classes)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        z = self.dropout(F.gelu(z))
        if self.hidden is not None:
            z = self.dropout(F.gelu(self.hidden(z)))
        return self.linear(z)


class RegressionHead(nn.Module):
    """``Linear(d -> n_targets)`` on the pooled representation (paper Eq. 9); with ``hidden``, a hidden
    layer first (``Linear(d -> hidden)``, GELU, dropout), as the classification head's option."""

    def __init__(self, d_in: int, n_targets: int = 1, hidden: int | None = None, dropout: float = 0.1):
        super().__init__()
        self.hidden = nn.Linear(d_in, hidden) if hidden else None
        self.dropout = nn.Dropout(dropout)
        self.linear = nn.Linear(hidden or d_in, n_targets)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        if self.hidden is not None:
            z = self.dropout(F.gelu(self.hidden(z)))
        return self.linear(z)
