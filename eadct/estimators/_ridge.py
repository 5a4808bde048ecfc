"""The regressor's ``head_refit="ridge"``: the linear head fitted again in closed form after fine-tuning.

The network is trained as before (pretraining, fine-tuning with the linear head). Then the head's weights are
replaced by a ridge regression of the standardised targets on the pooled representation of every TRAIN series,
its regularisation strength chosen among ``RIDGE_ALPHAS`` by leave-one-out cross-validation on TRAIN
(scikit-learn's ``RidgeCV``, generalised cross-validation). The features are standardised first, as MiniRocket's
ridge reads its features, and the standardisation is folded into the weights, so the refitted network is an
ordinary ``SeriesNetwork``: ``predict``, ``transform``, pickling and ``attention_maps`` are unchanged.

Why: with 100-400 series, fine-tuning with early stopping on a tenth of TRAIN leaves the head between
under- and over-fitting; the leave-one-out choice shrinks it towards the mean target where the representation
carries no signal and keeps it sharp where it does (docs/accuracy.md, "Candidate: a ridge refit of the
regressor's head").

With ``head_input_parts`` the network's outputs also read the input itself (the means of that many parts of each
channel, :meth:`eadct.networks.SeriesNetwork.add_input_path`): the ridge then regresses on the representation
beside the input's parts, each feature standardised and the input's block multiplied by a weight chosen among
``INPUT_WEIGHTS`` by the same leave-one-out error (0: the representation alone). The fine-tuning before is the
same as without it (the input's weights stay at zero until the refit).

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
#: The weights of the input's block beside the representation that ``head_input_parts`` chooses among.
INPUT_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def check_refit(head_refit, head_hidden_size, owner: str, head_input_parts=None, loss="squared_error") -> None:
    """Before any training: the ridge refit needs the linear head; the input's path needs the ridge refit."""
    if head_refit in RIDGE_REFITS and head_hidden_size:
        raise ValueError(
            f"{owner}: head_refit={head_refit!r} refits a linear head, but head_hidden_size={head_hidden_size} gives "
            "the head a hidden layer. Set head_hidden_size=None, or head_refit=None."
        )
    if head_input_parts and (head_refit not in RIDGE_REFITS or loss != "squared_error"):
        raise ValueError(
            f"{owner}: head_input_parts={head_input_parts} sets the input's weights in the ridge refit, which "
            f'head_refit={head_refit!r} with loss={loss!r} does not run. Set head_refit="ridge" with '
            'loss="squared_error", or head_input_parts=None.'
        )


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


def refit_linear_head(network, features: np.ndarray, targets: np.ndarray, inputs: np.ndarray | None = None,
                      rule: str = "ridge"):  # fmt: skip
    """Replace ``network.task_head.linear`` by the ridge fit of ``targets`` (n, n_targets) on ``features``
    (n, width), and with ``inputs`` (the input's parts, n, parts * C) ``network.input_weight`` too; returns the
    chosen strength of each target and the input block's weight (0.0 without ``inputs``). ``rule`` (a value of
    ``RIDGE_REFITS``): the strength with the lowest leave-one-out error, or by the one-standard-error rule (the
    input block's weight is chosen by the lowest error either way)."""
    from sklearn.linear_model import RidgeCV

    standardised, mean, scale = _standardise(features)
    width, best = features.shape[1], None
    parts = _standardise(inputs) if inputs is not None else None
    for weight in INPUT_WEIGHTS if parts is not None else (0.0,):
        design = standardised if parts is None else np.hstack([standardised, weight * parts[0]])
        ridge = RidgeCV(alphas=RIDGE_ALPHAS, alpha_per_target=targets.shape[1] > 1).fit(design, targets)
        if best is None or np.mean(ridge.best_score_) > np.mean(best[0].best_score_):  # the lower LOO error
            best = (ridge, weight)
    ridge, weight = best
    if rule == "ridge-1se":
        design = standardised if parts is None else np.hstack([standardised, weight * parts[0]])
        ridge = _one_standard_error_ridge(design, targets)
    coef = np.atleast_2d(ridge.coef_)  # (n_targets, width [+ parts * C]) on the standardised columns
    bias = np.atleast_1d(ridge.intercept_) - (coef[:, :width] / scale) @ mean
    linear = network.task_head.linear
    with torch.no_grad():
        linear.weight.copy_(torch.as_tensor(coef[:, :width] / scale, dtype=linear.weight.dtype))
        if parts is not None:
            input_coef = coef[:, width:] * weight / parts[2]  # on the unstandardised parts
            bias = bias - input_coef @ parts[1]
            network.input_weight.copy_(torch.as_tensor(input_coef, dtype=network.input_weight.dtype))
        linear.bias.copy_(torch.as_tensor(bias, dtype=linear.bias.dtype))
    return np.atleast_1d(np.asarray(ridge.alpha_, dtype=np.float64)), weight
