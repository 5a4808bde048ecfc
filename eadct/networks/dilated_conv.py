"""Dilated causal convolution branch (Franceschi et al. 2019 block)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.parametrizations import weight_norm


class DilatedConvBranch(nn.Module):
    """Two weight-normed causal ``Conv1d`` with LeakyReLU, plus a residual projection.

    Causal (left-padded, equivalent to the "right chomp" of the original code), so the
    output at step t sees only steps <= t: right padding never reaches a valid step.

    Parameters
    ----------
    d_in, d_out : int
        Channels in and out (``d`` and ``(1 - p) * d`` in the EA-DC layer).
    kernel_size : int
        Convolution kernel.
    dilation : int
        Dilation (``2 ** block_index``; ``2 ** layer_index`` with ``dilation_per_layer``).
    """

    def __init__(self, d_in: int, d_out: int, kernel_size: int = 3, dilation: int = 1):
        super().__init__()
        self.left_pad = (kernel_size - 1) * dilation
        self.conv1 = weight_norm(nn.Conv1d(d_in, d_out, kernel_size, dilation=dilation))
        self.conv2 = weight_norm(nn.Conv1d(d_out, d_out, kernel_size, dilation=dilation))
        self.residual = nn.Conv1d(d_in, d_out, 1) if d_in != d_out else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, N, d_in)`` -> ``(B, N, d_out)``."""
        h = x.transpose(1, 2)  # (B, d_in, N)
        out = F.leaky_relu(self.conv1(F.pad(h, (self.left_pad, 0))))
        out = F.leaky_relu(self.conv2(F.pad(out, (self.left_pad, 0))))
        return (out + self.residual(h)).transpose(1, 2)
