"""``head_init="probe"``: the task head's linear layer fitted on the pretrained representation before fine-tuning.

Fine-tuning usually starts with a randomly initialised head, whose first gradients then flow back into an encoder
that pretraining has already shaped. A linear probe first (LP-FT: Kumar et al., "Fine-Tuning can Distort Pretrained
Features and Underperform Out-of-Distribution", ICLR 2022) fits the head's last linear layer on the frozen encoder's
representation of the training series, so fine-tuning starts from a head that already reads those features:
a multinomial logistic regression for a classifier (on the head's GELU of the pooled representation, the input of
its linear layer), a ridge regression for a regressor (strength by leave-one-out among ``RIDGE_ALPHAS``, as
``head_refit``). The features are standardised and the standardisation folded into the weights. Only the training
series of fine-tuning are read (never a validation split). Its measured effect: docs/accuracy.md, section
"Candidate: a linear probe before fine-tuning".
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ..training import predict_outputs
from ._param import Param
from ._ridge import _standardise, refit_linear_head

#: The inverse regularisation strength of the classifier's probe (scikit-learn's ``LogisticRegression`` ``C``) on
#: standardised features: scikit-learn's default; there is no validation split to choose it on by default.
PROBE_C = 1.0
HEAD_INITS = ("random", "probe")

HEAD_INIT = {
    "head_init": Param(
        "random",
        lambda v: v in HEAD_INITS,
        f"one of {list(HEAD_INITS)}",
        '{"random", "probe"}, default="random"\n'
        '    How fine-tuning starts the task head. "random": PyTorch\'s initialisation. "probe": its linear layer\n'
        "    fitted first on the pretrained representation of the training series with the encoder frozen (a\n"
        "    linear probe: logistic regression for a classifier, ridge for a regressor; LP-FT), then fine-tuned\n"
        "    with the rest. Needs ``head_hidden_size=None`` (docs/training.md).",
        before="random",
    ),
}


def head_probe(estimator, batch_size: int, autocast_dtype=None):
    """``train_two_stage``'s ``before_finetune`` for ``estimator``: its ``head_init="probe"`` (:func:`probe_head`),
    or None. Called before any training; the probe fits a linear head (a ValueError with a hidden layer)."""
    if getattr(estimator, "head_init", "random") != "probe":  # a model saved before head_init has none
        return None
    if estimator.head_hidden_size:
        raise ValueError(
            f"{type(estimator).__name__}: head_init='probe' fits the head's linear layer on the representation, but "
            f"head_hidden_size={estimator.head_hidden_size} puts a hidden layer between them. Set "
            "head_hidden_size=None, or head_init='random'."
        )
    return lambda network, train: probe_head(network, train, estimator._task, batch_size, autocast_dtype)


def _logistic_head(linear: torch.nn.Linear, features: np.ndarray, labels: np.ndarray) -> None:
    """``linear`` := the logistic regression of ``labels`` (class indices) on ``features``; a class absent from
    ``labels`` gets zero weights and the lowest fitted bias."""
    from sklearn.linear_model import LogisticRegression

    standardised, mean, scale = _standardise(features)
    model = LogisticRegression(C=PROBE_C, max_iter=1000).fit(standardised, labels)
    coef, bias = model.coef_, model.intercept_
    if len(model.classes_) == 2:  # one logit difference: split it evenly between the two classes
        coef, bias = np.vstack([-coef / 2, coef / 2]), np.array([-bias[0] / 2, bias[0] / 2])
    weight = np.zeros((linear.out_features, features.shape[1]))
    full_bias = np.full(linear.out_features, bias.min())
    weight[model.classes_] = coef / scale
    full_bias[model.classes_] = bias - (coef / scale) @ mean
    with torch.no_grad():
        linear.weight.copy_(torch.as_tensor(weight, dtype=linear.weight.dtype))
        linear.bias.copy_(torch.as_tensor(full_bias, dtype=linear.bias.dtype))


def probe_head(network, train, task: str, batch_size: int, autocast_dtype=None) -> None:
    """Fit ``network.task_head.linear`` on the representation of ``train`` (SeriesTensors with targets: class
    indices or standardised values) by the encoder as it is (eval mode: no dropout; each training epoch sets training
    mode again)."""
    features = predict_outputs(network, train, batch_size, "represent", autocast_dtype)
    targets = train.targets.detach().cpu().numpy()
    if task == "classification":  # the head's linear layer reads dropout(GELU(z)); dropout is off in eval mode
        _logistic_head(network.task_head.linear, F.gelu(features).double().cpu().numpy(), targets)
    else:
        refit_linear_head(network, features.double().cpu().numpy(), targets.reshape(len(targets), -1))
