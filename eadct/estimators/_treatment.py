"""``EADCTRegressor(input_differences="auto")``: the input's treatment chosen on an inner split of TRAIN.

The regressor is fitted without and with the channels' first differences on two thirds of TRAIN and scored on the
rest; the differences are kept only where their held-out RMSE is below ``MARGIN`` times the other's. A single split
of a few dozen series cannot tell two treatments apart by a few percent (docs/accuracy.md, "Diagnostic: the input's
treatment chosen per set on TRAIN"): the margin takes the differences only where they clearly win, as on spectra.
Then the chosen treatment is fitted on all of TRAIN, with the estimator's own ``random_state``, so that a choice of
the defaults' treatment gives exactly the fit of ``input_differences=False``.

The choice costs two more fits on two thirds of TRAIN. Where the step cap (``max_steps``) shortens fine-tuning on
TRAIN, a fit already spends the time the cap allows: there "auto" does not choose and fits without the differences,
so that the default's slowest fits are not made slower (docs/accuracy.md, "Decision: ``input_differences="auto"``
the regressor's default").
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from ..training import StageSettings
from ._input import _series_list
from ._params import PARAMS

#: The differences are chosen where their inner RMSE is below this times the treatment without them (passed on
#: fresh splits; docs/accuracy.md).
MARGIN = 0.5
#: The share of TRAIN held out for the choice.
HOLDOUT = 1 / 3
#: Below this many TRAIN series there is no choice: the treatment without differences is fitted.
MIN_SERIES = 12

#: ``EADCTRegressor``'s text of ``input_differences``, which also takes "auto".
DOC = PARAMS["input_differences"].doc.replace("bool, default=False", 'bool or "auto", default="auto"', 1) + (
    '\n    "auto": fitted without and with the differences on two thirds of TRAIN and scored on the rest; the'
    "\n    differences are kept only where their RMSE there is below half of the other's, then the choice is"
    "\n    fitted on all of TRAIN: two more fits on two thirds of it, more than twice a fit's time. Where"
    "\n    ``max_steps`` shortens fine-tuning on TRAIN (large sets) it fits without the differences, unchosen"
    "\n    (``input_differences_``, ``treatment_choice_``; docs/training.md)."
)
#: The attributes "auto" sets (numpydoc).
ATTRIBUTES_DOC = """\
    input_differences_ : bool
        Whether the network reads the differences: ``input_differences``, or what "auto" chose.
    treatment_choice_ : dict
        With ``input_differences="auto"``: chosen, margin, rmse_without and rmse_with (the held-out RMSEs in
        units of the targets' standard deviation; None where there was no choice), n_fit, n_holdout, choice_s
        (the seconds the two fits of the choice took; the rest of the fit is the refit) and skipped (why there
        was no choice: "few series", under 12, or "step cap", where ``max_steps`` shortens fine-tuning on
        TRAIN; None where the choice was made).
"""


def is_auto(value) -> bool:
    return isinstance(value, str) and value == "auto"


def chosen(est) -> dict:
    """The encoder settings that "auto" chose in fit (empty before fit, and without "auto")."""
    if is_auto(getattr(est, "input_differences", None)) and hasattr(est, "input_differences_"):
        return {"input_differences": est.input_differences_}
    return {}


def cap_binds(est, n_series: int) -> bool:
    """Whether ``est``'s ``max_steps`` shortens fine-tuning on ``n_series`` training series (StageSettings.capped)."""
    stage = StageSettings(max_epochs=est.max_epochs, batch_size=est.batch_size, max_steps=est.max_steps)
    return stage.capped(n_series).max_epochs < est.max_epochs


def choose(est, X, y, X_unlabeled=None) -> dict:
    """The choice of ``input_differences`` for ``est``'s settings on an inner split of (X, y) (``treatment_choice_``;
    ``chosen`` False without fits where there are too few series or the step cap binds). X and y are valid: the
    regressor's ``fit`` checks them before it chooses."""
    series, y_arr = _series_list(X), np.asarray(y, dtype=np.float64)
    n = len(y_arr)
    choice = dict(chosen=False, margin=MARGIN, rmse_without=None, rmse_with=None, n_fit=n, n_holdout=0, choice_s=0.0,
                  skipped=None)  # fmt: skip
    if n < MIN_SERIES:
        return {**choice, "skipped": "few series"}
    if cap_binds(est, n):
        return {**choice, "skipped": "step cap"}
    start = time.perf_counter()
    fit_idx, hold_idx = train_test_split(np.arange(n), test_size=HOLDOUT, random_state=est.random_state)
    take = lambda idx: series[idx] if isinstance(series, np.ndarray) else [series[i] for i in idx]  # noqa: E731
    scale = y_arr[fit_idx].reshape(len(fit_idx), -1).std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    for differences in (False, True):  # fits as long as the refit: shorter ones miss Tecator's gain (docs/accuracy.md)
        inner = clone(est).set_params(input_differences=differences, checkpoint_path=None)
        inner.fit(take(fit_idx), y_arr[fit_idx], X_unlabeled=X_unlabeled)
        error = (inner.predict(take(hold_idx)) - y_arr[hold_idx]).reshape(len(hold_idx), -1) / scale
        choice["rmse_with" if differences else "rmse_without"] = float(np.sqrt(np.mean(error**2)))
    choice.update(
        chosen=bool(choice["rmse_with"] < MARGIN * choice["rmse_without"]),
        n_fit=len(fit_idx),
        n_holdout=len(hold_idx),
        choice_s=time.perf_counter() - start,
    )
    return choice


def fit_with_chosen_treatment(est, X, y, X_unlabeled=None):
    """Choose ``input_differences`` on an inner split of (X, y), then fit ``est`` on all of it with the choice;
    ``est.input_differences`` stays "auto" (scikit-learn's contract: fit does not change parameters)."""
    choice = choose(est, X, y, X_unlabeled)
    est.input_differences = choice["chosen"]
    try:
        est.fit(X, y, X_unlabeled=X_unlabeled)
    finally:
        est.input_differences = "auto"
    est.input_differences_, est.treatment_choice_ = choice["chosen"], choice
    return est
