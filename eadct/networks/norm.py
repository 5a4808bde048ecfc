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
        if x.is_cuda and self.running_mean is not None:
            return self._normalize_weighted(x, valid)
        out = torch.zeros_like(x)
        out[valid] = self._normalize(x[valid])  # x[valid]: (M, d), M valid steps
        return out

    def _normalize_weighted(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
        """The same normalisation as ``x[valid]`` through :meth:`_normalize`, with the statistics as sums over
        ``valid``: indexing by a mask makes the host wait for the GPU (twice per layer), which left a CUDA step
        of short series waiting. Used on CUDA; the CPU keeps the indexed form that its results were fitted
        with (the two round differently). Statistics in float32 also under autocast."""
        work = torch.promote_types(x.dtype, torch.float32)
        m = valid.unsqueeze(-1).to(work)  # (B, N, 1)
        xf = x.to(work)
        mean, var = self.running_mean, self.running_var
        if self.training:
            count = m.sum()
            enough = count >= 2  # one value per feature has no variance: the running statistics, as _normalize
            batch_mean = (xf * m).sum((0, 1)) / count.clamp_min(1)
            batch_var = ((xf - batch_mean).square() * m).sum((0, 1)) / count.clamp_min(1)
            with torch.no_grad():
                self.num_batches_tracked.add_(enough.long())
                factor = self.momentum if self.momentum is not None else 1.0 / self.num_batches_tracked.clamp_min(1)
                unbiased = (batch_var * count / (count - 1).clamp_min(1)).to(var.dtype)
                self.running_mean.copy_(torch.where(enough, torch.lerp(mean, batch_mean.to(mean.dtype), factor), mean))
                self.running_var.copy_(torch.where(enough, torch.lerp(var, unbiased, factor), var))
            mean = torch.where(enough, batch_mean, mean.to(work))
            var = torch.where(enough, batch_var, var.to(work))
        out = (xf - mean) * torch.rsqrt(var + self.eps)
        if self.affine:
            out = out * self.weight + self.bias
        return (out * m).to(x.dtype)

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
