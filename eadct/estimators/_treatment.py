"""``EADCTRegressor(input_differences="auto")``: the input's treatment chosen on TRAIN.

First a kernel ridge proxy (``_proxy``: no network is fitted) scores the series of TRAIN without and with the
channels' first differences; where its score with them is below ``PROXY_MARGIN`` times the other, the differences
are taken. Otherwise the regressor is fitted without and with the differences on two thirds of TRAIN and scored on
the rest, but only where the proxy's ratio is below ``NETWORK_BELOW`` (where it sees some gain); the differences
are kept only where their held-out RMSE is below ``MARGIN`` times the other's. A single
split of a few dozen series cannot tell two treatments apart by a few percent (research/accuracy-diary.md, "Diagnostic:
the
input's treatment chosen per set on TRAIN"): each margin takes the differences only where they clearly win, as on
spectra, and each of the two catches splits the other misses (research/accuracy-diary.md, "Candidate default: the
kernel ridge
proxy's vote before the network's choice"). Then the chosen treatment is fitted on all of TRAIN, with the
estimator's own ``random_state``, so that a choice of the defaults' treatment gives exactly the fit of
``input_differences=False``.

The network's choice costs two more fits on two thirds of TRAIN. Where the step cap (``max_steps``) shortens
fine-tuning on TRAIN, a fit already spends the time the cap allows: there only the proxy chooses, so that the
default's slowest fits are not made slower (research/accuracy-diary.md, "Decision: ``input_differences="auto"`` the
regressor's
default").
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from ..training import StageSettings
from ._input import _series_list
from ._params import PARAMS
from ._proxy import MIN_SERIES, proxy_scores
from ._warn import LearnedNothingWarning, LongerSeriesWarning

#: The differences are chosen where their inner RMSE is below this times the treatment without them (passed on
#: fresh splits; docs/accuracy.md).
MARGIN = 0.5
#: The proxy takes the differences where its score with them is below this times its score without them (18 of 20
#: fresh splits of Tecator, none of 130 of the other shared sets; docs/accuracy.md).
PROXY_MARGIN = 0.8
#: The network chooses only where the proxy's score with the differences is below this times its score without
#: (some gain seen, under ``PROXY_MARGIN``'s): at or above it, the defaults' treatment without the network's two
#: inner fits. Between Tecator's highest ratio (0.962) and the other small shared sets' lowest (0.972) over the
#: TRAIN splits of research/reports/treatment_proxy_choice.md; a decision for time (research/accuracy-diary.md,
#: "Decision for time:
#: the network's choice of the treatment only where the proxy sees some gain").
NETWORK_BELOW = 0.97
#: The share of TRAIN held out for the choice.
HOLDOUT = 1 / 3
# Below ``MIN_SERIES`` TRAIN series (the proxy's) neither judge chooses: the treatment without differences is fitted.

#: ``EADCTRegressor``'s text of ``input_differences``, which also takes "auto".
DOC = PARAMS["input_differences"].doc.replace("bool, default=False", 'bool or "auto", default="auto"', 1) + (
    '\n    "auto": the differences are taken where a kernel ridge proxy on TRAIN (no network fit) scores'
    f"\n    them below {PROXY_MARGIN:g} times the values alone; where it scores them below {NETWORK_BELOW:g} times"
    "\n    but not that far, the regressor is fitted without and with them on two thirds of TRAIN and scored on"
    "\n    the rest, and they are kept only where their RMSE there is below half of the other's: two more"
    "\n    fits, more than twice a fit's time; otherwise (no gain seen) the values alone, without those fits."
    "\n    Then the choice is fitted on all of TRAIN. Where ``max_steps`` shortens fine-tuning on TRAIN (large"
    "\n    sets) only the proxy chooses (``input_differences_``, ``treatment_choice_``; docs/training.md)."
)
#: The attributes "auto" sets (numpydoc).
ATTRIBUTES_DOC = """\
    input_differences_ : bool
        Whether the network reads the differences: ``input_differences``, or what "auto" chose.
    treatment_choice_ : dict
        With ``input_differences="auto"``: chosen, margin, rmse_without and rmse_with (the held-out RMSEs in
        units of the targets' standard deviation; None where there was no choice), n_fit, n_holdout, choice_s
        (the seconds the choice took; the rest of the fit is the refit), skipped (why the network did not
        choose: "few series", under 12; "no proxy gain", where the proxy scored the differences at least
        ``NETWORK_BELOW`` times the values alone; or "step cap", where ``max_steps`` shortens fine-tuning on
        TRAIN; None where it chose or the proxy took the differences), proxy_margin, proxy_without and
        proxy_with (the proxy's leave-one-out RMSEs, same units; None where it did not score) and decided_by
        ("proxy": it took the differences or saw no gain in them; "network"; or None: no choice, the defaults'
        treatment).
"""


def is_auto(value) -> bool:
    return isinstance(value, str) and value == "auto"


def as_checked(params: dict) -> dict:
    """``params`` as the parameter check sees them: ``input_differences="auto"`` (the supervised estimators') as one
    of its outcomes, since the encoder checks a bool, so that bad input gets the same error with and without it."""
    return {**params, "input_differences": False} if is_auto(params.get("input_differences")) else params


def chosen(est) -> dict:
    """The encoder settings that "auto" chose in fit (empty before fit, and without "auto"): the input's
    differences, and each series' own standardisation where ``wide_scales`` found a channel of wide scales."""
    out = {}
    if is_auto(est._option("input_differences")) and hasattr(est, "input_differences_"):
        out["input_differences"] = est.input_differences_
    if np.any(getattr(est, "wide_scale_channels_", False)):
        out["series_normalization"] = True
    return out


def cap_binds(est, n_series: int) -> bool:
    """Whether ``est``'s ``max_steps`` shortens fine-tuning on ``n_series`` training series (StageSettings.capped)."""
    stage = StageSettings(max_epochs=est.max_epochs, batch_size=est.batch_size, max_steps=est._option("max_steps"))
    return stage.capped(n_series).max_epochs < est.max_epochs


def choose(est, X, y, X_unlabeled=None) -> dict:
    """The choice of ``input_differences`` for ``est``'s settings (``treatment_choice_``): the proxy's on all of
    (X, y), then, where it sees some gain in the differences but not enough to take them, the network's on an inner
    split (no fits where there are too few series or the step cap binds). X and y are valid: the regressor's
    ``fit`` checks them first."""
    series, y_arr = _series_list(X), np.asarray(y, dtype=np.float64)
    n = len(y_arr)
    choice = dict(
        chosen=False,
        margin=MARGIN,
        rmse_without=None,
        rmse_with=None,
        n_fit=n,
        n_holdout=0,
        choice_s=0.0,
        skipped=None,
        proxy_margin=PROXY_MARGIN,
        proxy_without=None,
        proxy_with=None,
        decided_by=None,
    )
    if n < MIN_SERIES:
        return {**choice, "skipped": "few series"}
    start = time.perf_counter()
    scores = proxy_scores(series, y_arr, est.random_state)
    if scores is not None:
        choice.update(proxy_without=scores[0], proxy_with=scores[1])
        if scores[1] < PROXY_MARGIN * scores[0]:  # the proxy sees the slopes: no network fits needed
            return {**choice, "chosen": True, "decided_by": "proxy", "choice_s": time.perf_counter() - start}
        if scores[1] >= NETWORK_BELOW * scores[0]:  # no gain the network's two fits would be needed to confirm
            return {
                **choice,
                "skipped": "no proxy gain",
                "decided_by": "proxy",
                "choice_s": time.perf_counter() - start,
            }
    if cap_binds(est, n):
        return {**choice, "skipped": "step cap", "choice_s": time.perf_counter() - start}
    fit_idx, hold_idx = train_test_split(np.arange(n), test_size=HOLDOUT, random_state=est.random_state)
    take = lambda idx: series[idx] if isinstance(series, np.ndarray) else [series[i] for i in idx]  # noqa: E731
    scale = y_arr[fit_idx].reshape(len(fit_idx), -1).std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    for differences in (False, True):  # fits as long as the refit: shorter ones miss Tecator's gain (docs/accuracy.md)
        inner = clone(est).set_params(options__input_differences=differences, checkpoint_path=None)
        with warnings.catch_warnings():  # the choice's fits and predictions warn of themselves, not of the user's fit
            warnings.simplefilter("ignore", LearnedNothingWarning)
            warnings.simplefilter("ignore", LongerSeriesWarning)
            inner.fit(take(fit_idx), y_arr[fit_idx], X_unlabeled=X_unlabeled)
            predicted = inner.predict(take(hold_idx))
        error = (predicted - y_arr[hold_idx]).reshape(len(hold_idx), -1) / scale
        choice["rmse_with" if differences else "rmse_without"] = float(np.sqrt(np.mean(error**2)))
    choice.update(
        chosen=bool(choice["rmse_with"] < MARGIN * choice["rmse_without"]),
        n_fit=len(fit_idx),
        n_holdout=len(hold_idx),
        choice_s=time.perf_counter() - start,
        decided_by="network",
    )
    return choice


def fit_with_chosen_treatment(est, X, y, X_unlabeled=None):
    """Choose ``input_differences`` on an inner split of (X, y), then fit ``est`` on all of it with the choice;
    ``est.options`` is the same object after (scikit-learn's contract: fit does not change parameters)."""
    choice = choose(est, X, y, X_unlabeled)
    given = est.options
    try:
        est.options = {**(given or {}), "input_differences": choice["chosen"]}
        est.fit(X, y, X_unlabeled=X_unlabeled)
    finally:
        est.options = given
    est.input_differences_, est.treatment_choice_ = choice["chosen"], choice
    return est
