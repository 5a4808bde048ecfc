"""Warnings attributed to the user's line, not to eadct's or scikit-learn's internals."""

from __future__ import annotations

import sys
import warnings

#: Modules whose frames a warning skips: eadct's own, and the libraries that call the estimators for the user
#: (scikit-learn's cross-validation and scoring, joblib's workers, sktime's and aeon's wrappers).
_INTERNAL = ("eadct", "sklearn", "joblib", "sktime", "aeon")


def _internal(module: str) -> bool:
    return module.split(".", 1)[0] in _INTERNAL


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` at the first frame outside eadct, scikit-learn, joblib, sktime and aeon.

    So the warning names the user's line (``clf.fit(X, y)``, ``cross_val_score(...)``), and Python's default
    filter, which shows a warning once per message and line, shows it once there instead of once per internal
    call site.
    """
    level, frame = 2, sys._getframe(1)
    while frame is not None and _internal(frame.f_globals.get("__name__", "")):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def warn_non_finite(history: list[dict], lr: float, clip_grad_norm=None) -> None:
    """Warn of each training stage in ``history`` that diverged (its loss or weights became NaN or inf, or its loss
    grew a thousandfold: :data:`eadct.training.divergence.DIVERGED_FACTOR`), which earlier state it kept, and what to do
    (the stage's ``lr`` and ``clip_grad_norm``)."""
    from ..training.divergence import divergence_message

    for r in history:
        if r.get("diverged") or r.get("non_finite"):
            warn_user(divergence_message(r, lr, clip_grad_norm, kept=r.get("kept", "its best earlier epoch")))


class LongerSeriesWarning(UserWarning):
    """``predict`` got series longer than the longest seen in ``fit`` (:func:`warn_longer`); its own class so that
    code which predicts for its own purposes can silence it."""


def warn_longer(estimator, longest: int) -> None:
    """Warn that ``predict`` got series longer than the longest seen in ``fit`` and what that means."""
    n = estimator.n_timepoints_
    flat = (
        f", and the flattening head (pooling='flatten') reads only the first {n} steps. Crop or resample X "
        "to the training length, or fit with pooling='mean'."
    )
    positions = (
        "are sinusoidal positions that the network never trained on"
        if estimator._option("positional_encoding") == "sinusoidal"
        else "reuse the last learned positional embedding"
    )
    warn_user(
        f"X has series of up to {longest} steps, longer than the longest seen in fit ({n}); positions past "
        f"{n} {positions}" + (flat if estimator.pooling == "flatten" else "."),
        LongerSeriesWarning,
    )


class LearnedNothingWarning(UserWarning):
    """A fit whose predictions on its own training series are no better than a constant's (:func:`warn_if_nothing`);
    its own class so that a caller can filter it (the inner fits of ``input_differences="auto"`` do)."""


#: What the warning of a fit that learned nothing suggests: the likely causes and the settings that address them.
_CAUSES = (
    "Likely causes: series whose amplitudes differ by orders of magnitude within a channel, which the channel "
    "standardisation leaves nearly constant for most series (try options={'series_normalization': True}); a fit too "
    "short or too slow for the data (raise max_epochs or lr); or a target that the series do not determine "
    "(docs/training.md, 'A fit that learned nothing')."
)


def warn_if_nothing(estimator, score: float, constant: float, lower_is_better: bool) -> None:
    """Warn with :class:`LearnedNothingWarning` where ``estimator``'s ``score`` on its training series is not better
    than ``constant``'s, the score of always predicting the largest class (accuracy) or the mean target (error)."""
    if (score < constant) if lower_is_better else (score > constant):
        return
    name = type(estimator).__name__
    what = (
        f"its mean squared error on the training series, {score:.3g} (in units of the targets' spread), is not below "
        f"{constant:.3g}, the error of always predicting the mean target"
        if lower_is_better
        else f"its accuracy on the training series, {score:.3f}, is not above {constant:.3f}, the share of the largest "
        "class (what always predicting it scores)"
    )
    warn_user(f"{name} learned nothing: {what}. {_CAUSES}", LearnedNothingWarning)
