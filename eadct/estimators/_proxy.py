"""The kernel ridge proxy of ``input_differences="auto"``: do the channels' slopes tell the targets better?

No network is trained. Each series is read as the means of ``N_PARTS`` consecutive equal parts of its valid steps
(the head's :func:`eadct.networks.part_means`), of each channel standardised over TRAIN's valid steps and of its
first differences scaled to unit standard deviation (as the stem reads them). Gaussian kernel ridge regression on
the values' parts, then on the values' and the differences' parts together, is scored by its lowest leave-one-out
RMSE over ``ALPHAS``, in closed form (one eigendecomposition per treatment). Where the second score is well below
the first, the slopes carry what the level hides, as on spectra. A linear model could not tell this: the
differences are a linear function of the values. The proxy's design and its first measured choices are in
research/accuracy-diary.md, section "Candidate default: the treatment chosen by a kernel ridge proxy"; its choices on
TRAIN subsets, now that it alone decides, in research/reports/differences_train_cv.md.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from sklearn.utils import check_random_state

from ..networks import part_means

#: Parts per channel (fewer where the shortest series is shorter).
N_PARTS = 16
#: The ridge strengths the leave-one-out scores choose among.
ALPHAS = np.logspace(-3, 3, 13)
#: Below this many series the proxy does not score.
MIN_SERIES = 12
#: Above this many series the proxy scores a random subset of this size (seeded): its cost grows as the cube of the
#: series' count (about a second at this size).
MAX_SERIES = 2000


def _valid_steps(series) -> list[np.ndarray]:
    """Each series as a float array (C, L_i) of its valid steps (steps with a NaN in any channel dropped)."""
    out = []
    for s in series:
        s = np.asarray(s, dtype=np.float64)
        s = s[None, :] if s.ndim == 1 else s
        out.append(s[:, ~np.isnan(s).any(axis=0)])
    return out


def _part_means(s: np.ndarray, n_parts: int) -> np.ndarray:
    """(C, L) -> the head's means of ``n_parts`` consecutive equal parts of the steps, part by part (C * n_parts)."""
    return part_means(torch.from_numpy(np.ascontiguousarray(s.T))[None], None, n_parts).numpy()[0]


def features(series) -> tuple[np.ndarray, np.ndarray] | None:
    """(values' part means, differences' part means) of the series (each (C, L_i) or (L_i,)); None where a series
    has fewer than 2 valid steps."""
    series = _valid_steps(series)
    n_parts = min(N_PARTS, min(s.shape[1] for s in series))
    if n_parts < 2:
        return None
    steps = np.concatenate(series, axis=1)
    mean, std = steps.mean(axis=1, keepdims=True), steps.std(axis=1, keepdims=True)
    values = [(s - mean) / np.where(std > 0, std, 1.0) for s in series]
    diffs = [np.diff(v, axis=1, prepend=v[:, :1]) for v in values]
    d_std = np.concatenate(diffs, axis=1).std(axis=1, keepdims=True)
    diffs = [d / np.where(d_std > 0, d_std, 1.0) for d in diffs]
    return (np.stack([_part_means(v, n_parts) for v in values]), np.stack([_part_means(d, n_parts) for d in diffs]))


def loo_rmse(F: np.ndarray, y: np.ndarray) -> float:
    """The lowest leave-one-out RMSE of Gaussian kernel ridge (kernel ``exp(-|a - b|^2 / D)``, D features) over
    ``ALPHAS``, features and targets standardised (targets' standard deviations, averaged over the targets)."""
    std = F.std(axis=0)
    F = np.where(std > 0, (F - F.mean(axis=0)) / np.where(std > 0, std, 1.0), 0.0)
    y = y.reshape(len(y), -1)
    y = (y - y.mean(axis=0)) / np.where(y.std(axis=0) > 0, y.std(axis=0), 1.0)
    sq = (F**2).sum(axis=1)
    K = np.exp(-np.maximum(sq[:, None] + sq[None, :] - 2 * F @ F.T, 0.0) / F.shape[1])
    lam, Q = np.linalg.eigh(K)
    lam = np.clip(lam, 0.0, None)
    Qty = Q.T @ y
    best = math.inf
    for alpha in ALPHAS:
        shrink = lam / (lam + alpha)
        fitted = Q @ (shrink[:, None] * Qty)
        h = (Q**2) @ shrink
        resid = (y - fitted) / (1.0 - h)[:, None]
        best = min(best, float(np.sqrt(np.mean(resid**2))))
    return best


def proxy_scores(series, y, random_state=None) -> tuple[float, float] | None:
    """The proxy's scores (leave-one-out RMSE in the targets' standard deviations) without and with the
    differences, or None where there are fewer than ``MIN_SERIES`` series or a series has under 2 valid steps.
    ``random_state`` draws the subset where there are more than ``MAX_SERIES`` series."""
    y = np.asarray(y, dtype=np.float64)
    if len(y) < MIN_SERIES:
        return None
    if len(y) > MAX_SERIES:
        keep = np.sort(check_random_state(random_state).choice(len(y), MAX_SERIES, replace=False))
        series, y = [series[i] for i in keep], y[keep]
    made = features(series)
    if made is None:
        return None
    values, diffs = made
    return loo_rmse(values, y), loo_rmse(np.concatenate([values, diffs], axis=1), y)
