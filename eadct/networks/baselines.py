"""Baseline encoders of the paper's tables (docs/model.md, "The other rows of the paper's tables"): LSTM, GRU
and ResNet.

Each maps ``x`` ``(B, N, C)`` and ``valid`` ``(B, N)`` to ``(B, N, d)`` with zeros at padded steps and
exposes ``d_model``, like :class:`~eadct.networks.EADCTEncoder`, so the same heads, training loop and
estimators serve them. The transformer-family rows (Transformer = TST, DC-Transformer, DilatedConv) are
settings of :class:`~eadct.networks.EADCTEncoder` (see ``ARCHITECTURES`` in the estimators).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .norm import MaskedBatchNorm


class RecurrentEncoder(nn.Module):
    """``nn.LSTM`` or ``nn.GRU`` over the steps; padded steps are skipped (packed sequences), so a series
    gives the same outputs alone and inside a batch of longer ones.

    Parameters
    ----------
    kind : {"lstm", "gru"}
    n_channels : int
    d_model : int
        Hidden size.
    n_layers : int
    dropout : float
        Between recurrent layers (when ``n_layers > 1``).
    """

    def __init__(self, kind: str, n_channels: int, d_model: int = 64, n_layers: int = 2, dropout: float = 0.1):
        super().__init__()
        cls = {"lstm": nn.LSTM, "gru": nn.GRU}[kind]
        self.rnn = cls(n_channels, d_model, n_layers, batch_first=True, dropout=dropout if n_layers > 1 else 0.0)
        self.d_model = d_model

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        if valid is None:
            return self.rnn(x)[0]
        lengths = valid.sum(dim=1).cpu()
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = pad_packed_sequence(self.rnn(packed)[0], batch_first=True, total_length=x.shape[1])
        return out


class ResNetEncoder(nn.Module):
    """Wang et al. (2017) ResNet: three residual blocks of Conv1d with kernels 8, 5, 3, BatchNorm and ReLU,
    64-128-128 filters, a 1x1 shortcut; d_model = 128.

    Convolutions pad with zeros ("same"), BatchNorm uses valid steps only, and padded steps are zeroed
    after every block, so padding never reaches a valid step's output.
    """

    WIDTH = 128  # d_model of the default filters

    def __init__(self, n_channels: int, filters: tuple[int, int, int] = (64, 128, 128)):
        super().__init__()
        blocks, c_in = [], n_channels
        for c_out in filters:
            blocks.append(_ResidualBlock(c_in, c_out))
            c_in = c_out
        self.blocks = nn.ModuleList(blocks)
        self.d_model = c_in

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        if valid is not None:
            x = x * valid.unsqueeze(-1)
        for block in self.blocks:
            x = block(x, valid)
        return x


class _ResidualBlock(nn.Module):
    def __init__(self, c_in: int, c_out: int):
        super().__init__()
        self.kernels = (8, 5, 3)
        self.convs = nn.ModuleList(
            nn.Conv1d(a, c_out, k) for a, k in zip((c_in, c_out, c_out), self.kernels, strict=True)
        )
        self.norms = nn.ModuleList(MaskedBatchNorm(c_out) for _ in range(3))
        self.shortcut = nn.Conv1d(c_in, c_out, 1)
        self.shortcut_norm = MaskedBatchNorm(c_out)

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None) -> torch.Tensor:
        """``(B, N, c_in)`` -> ``(B, N, c_out)``."""
        h = x
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms, strict=True)):
            k = self.kernels[i]
            # "same" zero padding, the extra step on the right for even kernels (as torch's padding="same")
            padded = F.pad(h.transpose(1, 2), ((k - 1) // 2, k - 1 - (k - 1) // 2))
            h = norm(conv(padded).transpose(1, 2), valid)
            if i < 2:
                h = F.relu(h)
            if valid is not None:
                h = h * valid.unsqueeze(-1)  # the next convolution must see zeros past the end
        short = self.shortcut_norm(self.shortcut(x.transpose(1, 2)).transpose(1, 2), valid)
        out = F.relu(h + short)
        return out if valid is None else out * valid.unsqueeze(-1)
