"""Normalisation over valid (unpadded) time steps."""

from __future__ import annotations

import torch
from torch import nn


class MaskedBatchNorm(nn.BatchNorm1d):
    """BatchNorm over the feature axis of ``(B, N, d)``, with statistics from valid steps only.

    Padding must not shift the batch statistics, or a series' representation would
    depend on the lengths of the others in its batch. Padded outputs are zero.
    """

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:  # type: ignore[override]
        b, n, d = x.shape
        if valid is None:
            flat = x.reshape(b * n, d)
            return self._normalize(flat).reshape(b, n, d)
        out = torch.zeros_like(x)
        out[valid] = self._normalize(x[valid])  # x[valid]: (M, d), M valid steps
        return out

    def _normalize(self, flat: torch.Tensor) -> torch.Tensor:
        if self.training and flat.shape[0] < 2:
            # One value per feature has no variance: normalise with the running
            # statistics instead of failing (a batch of one length-1 series).
            return nn.functional.batch_norm(
                flat,
                self.running_mean,
                self.running_var,
                self.weight,
                self.bias,
                False,
                0.0,
                self.eps,
            )
        return super().forward(flat)


class MaskedLayerNorm(nn.LayerNorm):
    """LayerNorm over the feature axis of ``(B, N, d)``; padded outputs are zero."""

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:  # type: ignore[override]
        out = super().forward(x)
        return out if valid is None else out * valid.unsqueeze(-1)


def make_norm(kind: str, d_model: int) -> nn.Module:
    """``"batch"`` -> :class:`MaskedBatchNorm`, ``"layer"`` -> :class:`MaskedLayerNorm`."""
    if kind == "batch":
        return MaskedBatchNorm(d_model)
    if kind == "layer":
        return MaskedLayerNorm(d_model)
    raise ValueError(f"norm must be 'batch' or 'layer', got {kind!r}")
