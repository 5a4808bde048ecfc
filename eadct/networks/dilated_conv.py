"""Dilated causal convolution branch (Franceschi et al. 2019 block), or its centred variant."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.parametrizations import weight_norm


class DilatedConvBranch(nn.Module):
    """Two weight-normed causal ``Conv1d`` with LeakyReLU, plus a residual projection.

    Causal (left-padded, equivalent to the "right chomp" of the original code), so the
    output at step t sees only steps <= t: right padding never reaches a valid step. With
    ``causal=False`` (ours, not the paper's) each convolution is centred on its step (the padding split
    between the two sides), and the first convolution's output is zeroed at padded steps (``valid``),
    so that a series reads the same alone and padded in a batch.

    Parameters
    ----------
    d_in, d_out : int
        Channels in and out (``d`` and ``(1 - p) * d`` in the EA-DC layer).
    kernel_size : int
        Convolution kernel.
    dilation : int
        Dilation (``2 ** block_index``; ``2 ** layer_index`` with ``dilation_per_layer``).
    causal : bool
        Whether the output at step t reads steps <= t only (the paper's), or the steps around it.
    """

    def __init__(self, d_in: int, d_out: int, kernel_size: int = 3, dilation: int = 1, causal: bool = True):
        super().__init__()
        self.left_pad = (kernel_size - 1) * dilation
        self.causal = causal
        self.conv1 = weight_norm(nn.Conv1d(d_in, d_out, kernel_size, dilation=dilation))
        self.conv2 = weight_norm(nn.Conv1d(d_out, d_out, kernel_size, dilation=dilation))
        self.residual = nn.Conv1d(d_in, d_out, 1) if d_in != d_out else nn.Identity()

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, N, d_in)`` (zero at padded steps) -> ``(B, N, d_out)``; ``valid`` ``(B, N)``: real steps."""
        h = x.transpose(1, 2)  # (B, d_in, N)
        if getattr(self, "causal", True):  # a network pickled before the option was causal
            out = F.leaky_relu(self.conv1(F.pad(h, (self.left_pad, 0))))
            out = F.leaky_relu(self.conv2(F.pad(out, (self.left_pad, 0))))
            return (out + self.residual(h)).transpose(1, 2)
        pad = (self.left_pad // 2, self.left_pad - self.left_pad // 2)
        out = F.leaky_relu(self.conv1(F.pad(h, pad)))
        if valid is not None:
            out = out * valid.unsqueeze(1)  # padded steps read as the zeros beyond a series' end
        out = F.leaky_relu(self.conv2(F.pad(out, pad)))
        return (out + self.residual(h)).transpose(1, 2)
