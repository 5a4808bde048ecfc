"""Data steps of a fit, as functions: the log of heavy-tailed channels, channel standardisation, the validation
split, the fit's fingerprint."""

from __future__ import annotations

import hashlib
import json
import warnings

import numpy as np
import torch

from ..training import SeriesTensors
from ._input import Panel
from ._warn import warn_user

#: ``wide_scales="auto"`` acts on a channel whose TRAIN series' standard deviations spread wider than this ratio
#: between their 90th and 10th percentiles: three orders of magnitude, where the channel standardisation leaves the
#: quiet series a thousandth of the loud ones' size. Set from TRAIN inputs after PLAID's failure was seen: above every
#: shared set's ratio (at most 10^1.75 for classification, BasicMotions; 10^2.45 for Covid3Month) and below PLAID's
#: 10^5.1 (``research/benchmarks/scale_spread.py``; research/accuracy-diary.md, "Candidate default: series whose scales
#: span orders of
#: magnitude"). ``EADCTClassifier``'s default is the lower threshold of 10^2, which acts on Covid3Month's counts too
#: (research/accuracy-diary.md, "Candidate default: a classifier threshold of 10^2 for wide_scales").
SCALE_SPREAD = 1e3


def scale_spread(panel: Panel) -> np.ndarray:
    """Per channel (``(C,)``), the ratio of the 90th to the 10th percentile of the series' standard deviations over
    their real, finite steps; series of fewer than two such steps or of no spread are left out, and a channel with
    fewer than three series left reads 1."""
    values = np.where(panel.valid_mask()[..., None], panel.values, np.nan)  # (n, N_max, C)
    count = np.isfinite(values).sum(axis=1)  # (n, C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a series with no finite step in a channel
        std = np.nanstd(values, axis=1)
    out = np.ones(panel.n_channels)
    for c in range(panel.n_channels):
        kept = std[(count[:, c] >= 2) & (std[:, c] > 0), c]
        if kept.size >= 3:
            low, high = np.quantile(kept, [0.1, 0.9])
            out[c] = high / low
    return out


def spread_threshold(wide_scales) -> float | None:
    """The spread (:func:`scale_spread`) above which ``wide_scales`` acts on a channel: :data:`SCALE_SPREAD` for
    ``"auto"``, the number itself for a number, None for False (nowhere)."""
    if isinstance(wide_scales, str):
        return SCALE_SPREAD
    return float(wide_scales) if wide_scales else None


def wide_scale_channels(panel: Panel, wide_scales) -> np.ndarray:
    """Per channel (``(C,)`` bool), whether ``wide_scales`` acts on it: where its series' scales spread wider than
    :func:`spread_threshold` (:func:`scale_spread`); with False, nowhere."""
    threshold = spread_threshold(wide_scales)
    if threshold is None:
        return np.zeros(panel.n_channels, dtype=bool)
    return scale_spread(panel) > threshold


def differences_rule(n_channels: int, any_wide: bool) -> bool:
    """``EADCTClassifier(input_differences="auto")``'s rule: the stem reads the first differences where X has one
    channel and ``wide_scales`` acts on none. With one channel the per-step stem sees one number per step, and the
    slopes carry the shape that a standardised univariate series keeps; a channel of wide scales is read series by
    series already, and there the differences lost (research/accuracy-diary.md, "Candidate default: the first
    differences for
    one channel"). Also what the tables' keys decide from a set's registry entry."""
    return bool(n_channels == 1 and not any_wide)


def univariate_differences(panel: Panel, wide_scales) -> bool:
    """:func:`differences_rule` on ``panel`` under ``wide_scales``."""
    return differences_rule(panel.n_channels, bool(wide_scale_channels(panel, wide_scales).any()))


def log_scales(panel: Panel, channels: np.ndarray) -> np.ndarray:
    """Per channel, the scale ``s`` of the signed log ``sign(x) * log1p(|x| / s)`` applied to the ``channels``
    (``(C,)`` bool, :func:`wide_scale_channels`) before the standardisation (``(C,)``; 0 where the channel stays as
    it is): ``s`` is the median of the channel's non-zero absolute TRAIN values (1 when it has none), so that the
    log is the same whatever unit the channel comes in."""
    scales = np.zeros(panel.n_channels)
    if not np.any(channels):
        return scales
    real = panel.values[panel.valid_mask()]  # (M, C)
    for c in np.flatnonzero(channels):
        v = real[:, c][np.isfinite(real[:, c])]
        nonzero = np.abs(v[v != 0])
        scales[c] = float(np.median(nonzero)) if nonzero.size else 1.0
    return scales


def logged(panel: Panel, scales: np.ndarray | None) -> Panel:
    """``panel`` with each channel that has a scale (:func:`log_scales`) replaced by its signed log; ``panel``
    itself when none has (``scales`` None: a model saved without ``channel_log_scale_``)."""
    if scales is None or not np.any(scales):
        return panel
    values = panel.values.copy()
    on = scales > 0
    x = values[..., on]
    values[..., on] = np.sign(x) * np.log1p(np.abs(x) / scales[on])
    return Panel(values, panel.lengths)


def channel_statistics(panel: Panel) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel mean and standard deviation over the valid steps, ignoring NaN (``(C,)`` each); an
    all-NaN channel gets mean 0, a constant one std 1."""
    real = panel.values[panel.valid_mask()]  # (M, C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN channel
        mean = np.nanmean(real, axis=0)
        std = np.nanstd(real, axis=0)
    return np.nan_to_num(mean), np.where(np.isfinite(std) & (std > 1e-12), std, 1.0)


def standardize(panel: Panel, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """``(values - mean) / std`` as float32 ``(n, N_max, C)``; NaN and padding -> 0."""
    values = (panel.values - mean) / std
    values = np.nan_to_num(values, nan=0.0)
    values[~panel.valid_mask()] = 0.0
    return values.astype(np.float32)


def input_statistics(panel: Panel, wide_scales=False) -> dict[str, np.ndarray]:
    """What a fit learns of TRAIN's inputs, by the name of its fitted attribute: the channels of wide scales
    (``wide_scale_channels_``, :func:`wide_scale_channels`), the log scales of those channels
    (``channel_log_scale_``, :func:`log_scales`), then the channel mean and standard deviation of the logged values
    (``channel_mean_``, ``channel_std_``)."""
    wide = wide_scale_channels(panel, wide_scales)
    scales = log_scales(panel, wide)
    mean, std = channel_statistics(logged(panel, scales))
    return dict(wide_scale_channels_=wide, channel_log_scale_=scales, channel_mean_=mean, channel_std_=std)


def network_input(panel: Panel, scales: np.ndarray | None, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """The network's input: ``panel``'s channels that have a log scale logged, then every channel standardised
    (float32, padding 0)."""
    return standardize(logged(panel, scales), mean, std)


def check_finite_outputs(outputs: np.ndarray, standardized: np.ndarray, owner: str) -> np.ndarray:
    """``outputs`` (one row per series) if all are finite; else a ValueError naming the series and how far
    their values lie from the training data (float32 overflows in the network), never NaN predictions."""
    bad = np.flatnonzero(~np.isfinite(outputs.reshape(len(outputs), -1)).all(axis=1))
    if len(bad) == 0:
        return outputs
    reach = float(np.nanmax(np.abs(standardized[bad]))) if standardized[bad].size else 0.0
    why = (
        f"their values reach {reach:.3g} training standard deviations from the channel means, which overflows "
        "the network's float32 arithmetic; check their units and scale against the training data"
        if reach > 1e3
        else "the fitted network itself gives non-finite outputs; refit it (see docs/training.md on non-finite losses)"
    )
    raise ValueError(f"{owner}: the outputs for {len(bad)} series (X[{int(bad[0])}] first) are not finite: {why}.")


def to_tensors(panel: Panel, values: np.ndarray, device, targets=None) -> SeriesTensors:
    """The standardised ``values`` of ``panel`` (and ``targets``) on ``device``."""
    y = None if targets is None else torch.as_tensor(targets).to(device)
    return SeriesTensors(torch.from_numpy(values).to(device), torch.from_numpy(panel.lengths).to(device), y)


def validation_split(n: int, fraction: float, rng: np.random.RandomState, stratify=None, owner: str = "eadct"):
    """Indices (train, valid): ``fraction`` of the ``n`` training series held out, stratified by class when
    ``stratify`` is given (every class keeps at least one training series, and a class contributes
    ``round(fraction * members)``).

    When ``fraction > 0`` holds out no series (too few series, or classes too small), warns that the best
    epoch will be chosen on the training loss, as with ``fraction = 0``.
    """
    train, valid = _split(n, fraction, rng, stratify)
    if fraction > 0 and len(valid) == 0:
        warn_user(
            f"{owner}: validation_fraction={fraction} holds out no series from {n} training series"
            + (" (each class rounds to 0)" if stratify is not None and n >= 2 else "")
            + "; the best epoch is chosen on the training loss instead. Raise validation_fraction to hold "
            "series out, or set it to 0 to choose on the training loss without this warning.",
        )
    return train, valid


def _split(n: int, fraction: float, rng: np.random.RandomState, stratify=None):
    if fraction <= 0 or n < 2:
        return np.arange(n), np.array([], dtype=int)
    if stratify is None:
        order = rng.permutation(n)
        n_valid = min(n - 1, max(1, int(round(fraction * n))))
        return np.sort(order[n_valid:]), np.sort(order[:n_valid])
    train, valid = [], []
    for label in np.unique(stratify):
        members = rng.permutation(np.flatnonzero(stratify == label))
        n_valid = min(len(members) - 1, int(round(fraction * len(members))))
        valid.extend(members[:n_valid])
        train.extend(members[n_valid:])
    return np.sort(np.array(train, dtype=int)), np.sort(np.array(valid, dtype=int))


def fit_fingerprint(params: dict, panel: Panel, targets, extra: Panel | None) -> str:
    """Hash of the result-changing parameters and the data: a checkpoint with another one is not resumed."""
    shown = {k: repr(v) for k, v in params.items() if k not in ("verbose", "checkpoint_path", "device", "n_jobs")}
    h = hashlib.sha256(json.dumps(shown, sort_keys=True).encode())
    arrays = (panel.values, panel.lengths, targets) + ((extra.values, extra.lengths) if extra is not None else ())
    for arr in arrays:
        if arr is not None:
            h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()
