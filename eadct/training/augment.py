"""Augmentation of fine-tuning batches: magnitude (random per-channel scaling plus jitter), time (window
slicing), masking (the pretraining's masks) and mixup.

Scaling and jittering are the two magnitude transforms of Um et al. (2017, "Data augmentation of wearable
sensor data") that Iwana and Uchida's survey (2021, PLoS ONE 16(7)) found safe across time-series
classification sets; their usual strengths, 0.1 for the scale and 0.03 for the noise, fix the ratio below.
Window slicing is Le Guennec et al.'s (2016, "Data augmentation for time series classification using
convolutional neural networks"): a random window of each series, stretched back to the series' length.
Masking zeroes runs of values as pretraining does (:func:`eadct.training.make_geometric_mask`), so the
network is fine-tuned on the kind of gaps its pretraining taught it to fill, a form of input dropout in runs.
Mixup is Zhang et al.'s (2018, "mixup: Beyond empirical risk minimization", ICLR): the batch is trained on convex
combinations of pairs of its series, and the loss on the same combination of the pair's targets.
"""

from __future__ import annotations

import math

import torch

from .masking import make_geometric_mask

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


def augment_window_slice(
    x: torch.Tensor, valid: torch.Tensor | None, share: float, generator: torch.Generator
) -> torch.Tensor:
    """A copy of the batch ``x`` ``(B, N, C)`` in which every series is a random window of itself, stretched
    back to its own length.

    Series i of valid length ``L`` (the count of ``valid``'s True steps; ``N`` without ``valid``) is read on
    a window of ``(1 - share) * L`` steps that starts at a uniformly random place, and resampled linearly to
    ``L`` steps; padded steps stay 0. One draw per series from ``generator`` (CPU).
    """
    b, n, c = x.shape
    lengths = torch.full((b,), float(n)) if valid is None else valid.sum(dim=1).float().cpu()
    width = (1.0 - share) * lengths
    start = torch.rand(b, generator=generator) * (lengths - width)
    steps = torch.arange(n, dtype=torch.float32)
    last = (lengths - 1.0).clamp(min=0.0)
    position = start[:, None] + steps[None, :] * ((width - 1.0).clamp(min=0.0) / last.clamp(min=1.0))[:, None]
    position = torch.minimum(position, last[:, None]).to(x.device)
    low = position.floor().long()
    high = torch.minimum(low + 1, last.to(x.device).long()[:, None])
    frac = (position - low).unsqueeze(-1).to(x.dtype)
    take = lambda i: x.gather(1, i.unsqueeze(-1).expand(-1, -1, c))  # noqa: E731
    out = (1.0 - frac) * take(low) + frac * take(high)
    return out if valid is None else out.masked_fill(~valid.unsqueeze(-1), 0.0)


def augment_mask(
    x: torch.Tensor, valid: torch.Tensor | None, ratio: float, mean_length: float, generator: torch.Generator
) -> torch.Tensor:
    """A copy of the batch ``x`` ``(B, N, C)`` with a share ``ratio`` of its values set to 0 (the channel mean
    after standardisation), in runs of geometric length with mean ``mean_length`` drawn independently per series
    and channel: the masks of pretraining (:func:`eadct.training.make_geometric_mask`). Padded steps stay 0.
    Draws come from ``generator`` (CPU)."""
    mask = make_geometric_mask(tuple(x.shape), ratio, mean_length, generator).to(x.device)
    return x.masked_fill(mask, 0.0)


def beta_draw(alpha: float, generator: torch.Generator) -> float:
    """One draw from ``Beta(alpha, alpha)`` from ``generator``'s draws (torch's Beta sampler takes no generator).

    ``alpha <= 1``: Johnk's (1964) rejection method, ``U ** (1 / alpha) / (U ** (1 / alpha) + V ** (1 / alpha))``
    for the first uniform pair with ``U ** (1 / alpha) + V ** (1 / alpha) <= 1``, drawn 256 pairs at a time (at
    least half are accepted at ``alpha <= 1``; the acceptance falls factorially above it). ``alpha > 1``: the ratio
    ``G1 / (G1 + G2)`` of two ``Gamma(alpha)`` draws by Marsaglia and Tsang's (2000) method."""
    if alpha <= 1.0:
        while True:
            u, v = torch.rand((2, 256), generator=generator, dtype=torch.float64) ** (1.0 / alpha)
            accepted = torch.nonzero((u + v <= 1.0) & (u + v > 0.0))
            if len(accepted):
                i = int(accepted[0, 0])
                return float(u[i] / (u[i] + v[i]))
    g1, g2 = _gamma_draw(alpha, generator), _gamma_draw(alpha, generator)
    return g1 / (g1 + g2)


def _gamma_draw(shape: float, generator: torch.Generator) -> float:
    """One ``Gamma(shape)`` draw, ``shape >= 1`` (Marsaglia and Tsang 2000), from ``generator``'s draws."""
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = float(torch.randn((), generator=generator, dtype=torch.float64))
        v = (1.0 + c * x) ** 3
        u = float(torch.rand((), generator=generator, dtype=torch.float64))
        if v > 0 and math.log(max(u, 1e-300)) < 0.5 * x * x + d - d * v + d * math.log(v):
            return d * v


def mixup_batch(
    x: torch.Tensor, valid: torch.Tensor | None, alpha: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor, float]:
    """The batch ``x`` ``(B, N, C)`` mixed with a permutation of itself: ``(mixed, valid, partner, weight)``.

    One weight ``lam ~ Beta(alpha, alpha)`` per batch (Zhang et al. 2018; :func:`beta_draw`) and one random
    permutation ``partner`` of the batch; series i becomes ``lam * x[i] + (1 - lam) * x[partner[i]]``. The
    loss of the mixed batch is ``lam * loss(y) + (1 - lam) * loss(y[partner])`` (the caller's). Series of
    unequal length mix over the union of their valid steps (a padded step counts as 0, as the network sees
    it), so the returned ``valid`` is ``valid | valid[partner]``. Both draws come from ``generator`` (CPU), so a
    seeded fit is reproducible and a resumed one continues the same sequence.
    """
    lam = beta_draw(alpha, generator)
    partner = torch.randperm(x.shape[0], generator=generator).to(x.device)
    mixed = lam * x + (1.0 - lam) * x[partner]
    return mixed, None if valid is None else valid | valid[partner], partner, lam
