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
"""

from __future__ import annotations

import numpy as np
import torch

#: The regularisation strengths the leave-one-out choice ranges over: 1e-3 to 1e5, two per decade (MiniRocket's
#: ridge uses 1e-3 to 1e3; the top two decades let it fall back to the mean target on sets without signal).
RIDGE_ALPHAS = np.logspace(-3, 5, 17)
REFITS = (None, "ridge")


def check_refit(head_refit, head_hidden_size, owner: str) -> None:
    """Before any training: the ridge refit needs the linear head."""
    if head_refit == "ridge" and head_hidden_size:
        raise ValueError(
            f'{owner}: head_refit="ridge" refits a linear head, but head_hidden_size={head_hidden_size} gives the '
            "head a hidden layer. Set head_hidden_size=None, or head_refit=None."
        )


def refit_linear_head(network, features: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Replace ``network.task_head.linear`` by the ridge fit of ``targets`` (n, n_targets) on ``features``
    (n, width); returns the chosen strength of each target."""
    from sklearn.linear_model import RidgeCV

    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    ridge = RidgeCV(alphas=RIDGE_ALPHAS, alpha_per_target=targets.shape[1] > 1)
    ridge.fit((features - mean) / scale, targets)
    coef = np.atleast_2d(ridge.coef_) / scale  # (n_targets, width) on the unstandardised features
    bias = np.atleast_1d(ridge.intercept_) - coef @ mean
    linear = network.task_head.linear
    with torch.no_grad():
        linear.weight.copy_(torch.as_tensor(coef, dtype=linear.weight.dtype))
        linear.bias.copy_(torch.as_tensor(bias, dtype=linear.bias.dtype))
    return np.atleast_1d(np.asarray(ridge.alpha_, dtype=np.float64))
