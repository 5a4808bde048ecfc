"""An encoder with its pretraining and task heads, as one module."""

from __future__ import annotations

import torch
from torch import nn

from .heads import ReconstructionHead
from .pooling import N_SEGMENTS, get_pooling, pool_steps


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
        Maps the pooled representation ``(B, pooled_width(pooling, d, n_steps, n_segments))`` to outputs.
    pooling : str
        A registered pooling (:data:`~eadct.networks.POOLINGS`), applied to the encoder's last layer by
        :func:`~eadct.networks.pool_steps`; a pooling with weights of its own (``build``) has them built here, as
        ``pooler``.
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
        build = get_pooling(pooling).build
        # the pooling's own weights, if it has any; no module (and no key in the state) otherwise
        self.pooler = build(encoder.d_model, n_steps, n_segments) if build is not None else None

    def reconstruct(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, N, C)`` -> reconstructed ``(B, N, C)``."""
        return self.reconstruction_head(self.encoder(x, valid))

    def represent(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, N, C)`` -> pooled representation Z ``(B, pooled_width(pooling, d, n_steps, n_segments))``."""
        pooler = getattr(self, "pooler", None)  # a network pickled before poolings with weights has none
        return pool_steps(self.encoder(x, valid), valid, self.pooling, self.n_steps, self.n_segments, pooler)

    def fit_input_scales(self, values: torch.Tensor, lengths: torch.Tensor) -> None:
        """Set what the input stem scales from the fit's standardised series, ``values`` ``(B, N, C)`` padded
        after each series' ``lengths``: the differences' scale of ``input_differences``
        (:meth:`InputEmbedding.fit_difference_scale`). A no-op, without any copy, for a stem without one."""
        embedding = getattr(self.encoder, "embedding", None)
        if getattr(embedding, "differences", False):
            valid = torch.arange(values.shape[1], device=values.device)[None, :] < lengths.to(values.device)[:, None]
            embedding.fit_difference_scale(values, valid)

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, N, C)`` -> task outputs ``(B, n_out)``."""
        if self.task_head is None:
            raise RuntimeError("SeriesNetwork has no task head; set one before calling forward")
        return self.task_head(self.represent(x, valid))
