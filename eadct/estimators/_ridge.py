"""The regressor's ``head_refit="ridge"``: the linear head fitted again in closed form after fine-tuning.

The network is trained as before (pretraining, fine-tuning with the linear head). Then the head's weights are
replaced by a ridge regression of the standardised targets on the pooled representation of every TRAIN series,
its regularisation strength chosen among ``RIDGE_ALPHAS`` by leave-one-out cross-validation on TRAIN
(scikit-learn's ``RidgeCV``, generalised cross-validation). The features are standardised first, as MiniRocket's
ridge reads its features, and the standardisation is folded into the weights, so the refitted network is an
ordinary ``SeriesNetwork``: ``predict``, ``transform``, pickling and ``attention_maps`` are unchanged.

Why: with 100-400 series, fine-tuning with early stopping on a tenth of TRAIN leaves the head between
under- and over-fitting; the leave-one-out choice shrinks it towards the mean target where the representation
carries no signal and keeps it sharp where it does (research/accuracy-diary.md, "Candidate: a ridge refit of the
regressor's head").

``head_refit="ridge-1se"`` is the same refit with another strength: the largest whose mean leave-one-out error is
within one standard error of the lowest (Hastie, Tibshirani and Friedman, *The Elements of Statistical Learning*,
7.10), the strongest shrinkage that the leave-one-out errors cannot tell from the best (docs/accuracy.md,
"Diagnostic: the regressor's ridge strength by the one-standard-error rule").
"""

from __future__ import annotations

import numpy as np
import torch

#: The regularisation strengths the leave-one-out choice ranges over: 1e-3 to 1e5, two per decade (MiniRocket's
#: ridge uses 1e-3 to 1e3; the top two decades let it fall back to the mean target on sets without signal).
RIDGE_ALPHAS = np.logspace(-3, 5, 17)
#: ``head_refit``'s values that refit the head by ridge regression, and what each chooses its strength by.
RIDGE_REFITS = ("ridge", "ridge-1se")
REFITS = (None, *RIDGE_REFITS)


def _standardise(features: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mean, scale = features.mean(axis=0), features.std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    return (features - mean) / scale, mean, scale


def one_standard_error(errors: np.ndarray) -> int:
    """The index of the largest strength (``errors``' columns, in rising order) whose mean squared leave-one-out
    error over the series (rows) is within one standard error of the lowest mean."""
    mean = errors.mean(axis=0)
    best = int(np.argmin(mean))
    bound = mean[best] + errors[:, best].std(ddof=1) / np.sqrt(len(errors))
    return int(np.flatnonzero(mean <= bound).max())


def _one_standard_error_ridge(design: np.ndarray, targets: np.ndarray):
    """The ridge of ``targets`` on ``design``, each target's strength by :func:`one_standard_error`."""
    from sklearn.linear_model import Ridge, RidgeCV

    errors = RidgeCV(alphas=RIDGE_ALPHAS, store_cv_results=True).fit(design, targets).cv_results_
    errors = errors.reshape(len(targets), targets.shape[1], len(RIDGE_ALPHAS))
    alphas = np.array([RIDGE_ALPHAS[one_standard_error(errors[:, j])] for j in range(targets.shape[1])])
    ridge = Ridge(alpha=alphas).fit(design, targets)
    ridge.alpha_ = alphas
    return ridge


def refit_linear_head(network, features: np.ndarray, targets: np.ndarray, rule: str = "ridge") -> np.ndarray:
    """Replace ``network.task_head.linear`` by the ridge fit of ``targets`` (n, n_targets) on ``features``
    (n, width); returns the chosen strength of each target. ``rule`` (a value of ``RIDGE_REFITS``): the strength
    with the lowest leave-one-out error, or by the one-standard-error rule."""
    from sklearn.linear_model import RidgeCV

    standardised, mean, scale = _standardise(features)
    if rule == "ridge-1se":
        ridge = _one_standard_error_ridge(standardised, targets)
    else:
        ridge = RidgeCV(alphas=RIDGE_ALPHAS, alpha_per_target=targets.shape[1] > 1).fit(standardised, targets)
    coef = np.atleast_2d(ridge.coef_)  # (n_targets, width) on the standardised columns
    bias = np.atleast_1d(ridge.intercept_) - (coef / scale) @ mean
    linear = network.task_head.linear
    with torch.no_grad():
        linear.weight.copy_(torch.as_tensor(coef / scale, dtype=linear.weight.dtype))
        linear.bias.copy_(torch.as_tensor(bias, dtype=linear.bias.dtype))
    return np.atleast_1d(np.asarray(ridge.alpha_, dtype=np.float64))
