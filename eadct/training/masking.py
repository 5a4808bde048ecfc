"""Geometric run-length masks and the masked MSE of pretraining (paper Eq. 7-8)."""

from __future__ import annotations

import math

import torch


def make_geometric_mask(
    shape: tuple[int, int, int],
    ratio: float = 0.15,
    mean_length: float = 3.0,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Draw a boolean mask, True = masked, of shape ``(B, N, C)``.

    Each (sample, channel) is an independent two-state Markov chain over time, as in
    mvts_transformer (Zerveas et al. 2021): masked runs have geometric lengths with
    mean ``mean_length``, unmasked runs with mean ``mean_length * (1 - ratio) / ratio``,
    so the expected masked share is ``ratio``. The first state is masked with
    probability ``ratio`` (the stationary law; geometric runs are memoryless, so the
    chain is stationary from the first step).

    Vectorised: run lengths are drawn for all chains at once and positions are mapped
    to runs with ``searchsorted``, with no Python loop over time.

    Parameters
    ----------
    shape : (B, N, C)
    ratio : float
        Expected masked share r, in (0, 1).
    mean_length : float
        Mean length of a masked run (>= 1).
    generator : torch.Generator, optional
        Source of randomness (CPU generator), for reproducible masks.
    device : torch.device, optional
        Device of the returned mask.
    """
    if not 0.0 < ratio < 1.0:
        raise ValueError(f"mask ratio must be in (0, 1), got {ratio!r}")
    if mean_length < 1.0:
        raise ValueError(f"mean masked run length must be >= 1, got {mean_length!r}")
    b, n, c = shape
    chains = b * c
    p_leave_masked = 1.0 / mean_length
    p_leave_unmasked = p_leave_masked * ratio / (1.0 - ratio)
    mean_pair = mean_length + 1.0 / p_leave_unmasked
    n_pairs = max(2, math.ceil(1.5 * n / mean_pair) + 4)

    starts_masked = torch.rand(chains, generator=generator) < ratio  # (chains,)
    runs = torch.empty(chains, 2 * n_pairs)
    while True:
        masked_runs = torch.empty(chains, n_pairs).geometric_(p_leave_masked, generator=generator)
        unmasked_runs = torch.empty(chains, n_pairs).geometric_(p_leave_unmasked, generator=generator)
        # Alternate run types, starting with the chain's first state.
        runs[:, 0::2] = torch.where(starts_masked[:, None], masked_runs, unmasked_runs)
        runs[:, 1::2] = torch.where(starts_masked[:, None], unmasked_runs, masked_runs)
        ends = runs.cumsum(dim=1)  # (chains, 2 * n_pairs): exclusive end of each run
        if bool((ends[:, -1] >= n).all()):
            break
        n_pairs *= 2  # rare: draw longer sequences of runs
        runs = torch.empty(chains, 2 * n_pairs)
    t = torch.arange(n, dtype=ends.dtype).expand(chains, n).contiguous()
    run_index = torch.searchsorted(ends, t, right=True)  # (chains, N)
    masked = (run_index % 2 == 0) == starts_masked[:, None]
    mask = masked.view(b, c, n).transpose(1, 2)  # (B, N, C)
    return mask.to(device) if device is not None else mask


def masked_mse(
    prediction: torch.Tensor,
    target: torch.Tensor,
    mask: torch.Tensor,
    valid: torch.Tensor | None = None,
) -> torch.Tensor:
    """Mean squared error over masked, non-padded entries only (paper Eq. 8).

    Parameters
    ----------
    prediction, target : Tensor ``(B, N, C)``
    mask : Tensor ``(B, N, C)`` of bool
        True where the input was masked.
    valid : Tensor ``(B, N)`` of bool, optional
        True at real steps; padded steps never count.

    Returns
    -------
    Tensor, scalar
        ``sum(mask * (prediction - target) ** 2) / sum(mask)``; 0 (with a graph) when
        nothing is masked.
    """
    weight = mask if valid is None else mask & valid.unsqueeze(-1)
    weight = weight.to(prediction.dtype)
    total = weight.sum()
    squared = (prediction - target) ** 2 * weight
    return squared.sum() / total.clamp_min(1.0)
