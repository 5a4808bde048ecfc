"""Magnitude augmentation of fine-tuning batches: random per-channel scaling plus jitter.

Scaling and jittering are the two magnitude transforms of Um et al. (2017, "Data augmentation of wearable
sensor data") that Iwana and Uchida's survey (2021, PLoS ONE 16(7)) found safe across time-series
classification sets; their usual strengths, 0.1 for the scale and 0.03 for the noise, fix the ratio below.
"""

from __future__ import annotations

import torch

#: The jitter's standard deviation as a share of the scaling's (0.03 / 0.1, Um et al. 2017).
JITTER_SHARE = 0.3


def augment_magnitude(
    x: torch.Tensor, valid: torch.Tensor | None, strength: float, generator: torch.Generator
) -> torch.Tensor:
    """A randomly scaled and jittered copy of the standardised batch ``x`` ``(B, N, C)``.

    Every channel of every series is multiplied by ``1 + strength * z`` (one ``z ~ N(0, 1)`` per series and
    channel), and every value gets noise of standard deviation ``JITTER_SHARE * strength``. Padded steps
    (``valid`` False) stay 0. Draws come from ``generator`` (CPU), so a seeded fit is reproducible and a
    resumed one continues the same sequence.
    """
    b, n, c = x.shape
    scale = 1.0 + strength * torch.randn((b, 1, c), generator=generator)
    noise = (JITTER_SHARE * strength) * torch.randn((b, n, c), generator=generator)
    out = x * scale.to(x.device, x.dtype) + noise.to(x.device, x.dtype)
    return out if valid is None else out.masked_fill(~valid.unsqueeze(-1), 0.0)
