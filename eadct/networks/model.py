"""An encoder with its pretraining and task heads, as one module."""

from __future__ import annotations

import torch
from torch import nn

from .encoder import N_SEGMENTS, pool_steps
from .heads import ReconstructionHead


class SeriesNetwork(nn.Module):
    """Encoder + reconstruction head (pretraining) + task head (fine-tuning).

    Parameters
    ----------
    encoder : nn.Module
        Maps ``x`` ``(B, N, C)`` and ``valid`` ``(B, N)`` to ``(B, N, d)``; exposes
        ``d_model``.
    n_channels : int
        C, for the reconstruction head.
    task_head : nn.Module or None
        Maps the pooled ``(B, d)`` representation (``(B, n_steps * d)`` when flattened) to outputs.
    pooling : str
        One of :data:`~eadct.networks.POOLINGS` (:func:`~eadct.networks.pool_steps`): over valid steps, or
        ``"flatten"`` (TST's head: all steps, zero-padded to ``n_steps``).
    n_steps : int or None
        The series length a flattening head is built for (the longest training series).
    n_segments : int
        The parts of each series that ``pooling="segments"`` averages separately.
    """

    def __init__(
        self,
        encoder: nn.Module,
        n_channels: int,
        task_head: nn.Module | None = None,
        pooling: str = "mean",
        n_steps: int | None = None,
        n_segments: int = N_SEGMENTS,
    ):
        super().__init__()
        self.encoder = encoder
        self.reconstruction_head = ReconstructionHead(encoder.d_model, n_channels)
        self.task_head = task_head
        self.pooling = pooling
        self.n_steps = n_steps
        self.n_segments = n_segments

    def reconstruct(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, N, C)`` -> reconstructed ``(B, N, C)``."""
        return self.reconstruction_head(self.encoder(x, valid))

    def represent(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, N, C)`` -> pooled representation Z ``(B, d)`` (``(B, n_steps * d)`` when flattened)."""
        return pool_steps(self.encoder(x, valid), valid, self.pooling, self.n_steps, self.n_segments)

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, N, C)`` -> task outputs ``(B, n_out)``."""
        if self.task_head is None:
            raise RuntimeError("SeriesNetwork has no task head; set one before calling forward")
        return self.task_head(self.represent(x, valid))
