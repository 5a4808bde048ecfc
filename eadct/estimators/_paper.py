"""The paper's configuration (docs/model.md, "The paper's training protocol and search space"), which the paper
tables' profiles start every fit from."""

from __future__ import annotations

#: The paper's configuration (the starting values of its search, its training protocol: docs/model.md), for
#: the settings where the estimators' defaults differ or might: ``EADCTClassifier(
#: **PAPER_CONFIGURATION)`` is the model of the paper's tables, and the tables' paper profiles use it.
PAPER_CONFIGURATION = {
    "d_model": 64,
    "n_heads": 8,
    "n_blocks": 2,
    "alpha": 0.5,
    "beta": 0.3,
    "attention_ratio": 0.25,
    "pooling": "mean",
    "max_epochs": 100,
    "pretrain_epochs": 50,
    "n_iter_no_change": 30,
    "lr": 1e-3,
    "batch_size": 32,
    "validation_fraction": 0.1,
    "n_estimators": 1,
    "options": {"attention_downsample": 1, "average_epochs": None, "wide_scales": False, "input_differences": False},
}
#: The paper's values of settings where only ``EADCTRegressor``'s defaults differ from them: the linear head as
#: fine-tuned, without the ridge refit, and the convolutions' dilation doubling with every block (docs/model.md);
#: fields of its ``options``. No cap on the optimizer steps is stated too, now also the regressor's default (it had a
#: cap of 900 until issue 86; docs/training.md).
PAPER_REGRESSOR_ONLY = {"head_refit": None, "max_steps": None, "dilation_per_layer": False}


def paper_configuration(task: str = "classification") -> dict:
    """The paper's configuration for the estimator of ``task``: ``PAPER_CONFIGURATION``, and for
    ``"regression"`` also ``PAPER_REGRESSOR_ONLY`` in its ``options``
    (``EADCTRegressor(**paper_configuration("regression"))``)."""
    if task != "regression":
        return {**PAPER_CONFIGURATION, "options": dict(PAPER_CONFIGURATION["options"])}
    return {**PAPER_CONFIGURATION, "options": {**PAPER_CONFIGURATION["options"], **PAPER_REGRESSOR_ONLY}}
