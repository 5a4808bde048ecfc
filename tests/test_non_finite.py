"""Training that fails loudly (issue 19, point 5): a NaN or inf loss never gives a model that predicts NaN."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel

from eadct import EADCTClassifier, EADCTRegressor


def _poisoning_optimizer(after_steps: int):
    """SGD that fills the weights with NaN after ``after_steps`` steps (counted over the whole fit)."""

    class Poison(torch.optim.SGD):
        steps = 0

        def step(self, closure=None):
            out = super().step(closure)
            type(self).steps += 1
            if type(self).steps == after_steps:
                with torch.no_grad():
                    for group in self.param_groups:
                        for p in group["params"]:
                            p.fill_(float("nan"))
            return out

    return Poison


def test_a_loss_that_is_never_finite_raises_naming_epoch_and_fixes():
    X, y = make_panel()
    with pytest.raises(FloatingPointError, match=r"loss became nan in epoch 1.*Lower the learning rate \(lr=1e\+12\)"):
        EADCTClassifier(**{**TINY, "lr": 1e12}).fit(X, y)


def test_a_loss_that_turns_nan_keeps_the_best_earlier_epoch_with_a_warning():
    X, y = make_panel()
    params = {**TINY, "pretrain_epochs": 0, "max_epochs": 4, "optimizer": _poisoning_optimizer(3)}
    with pytest.warns(UserWarning, match=r"finetune loss became nan in epoch 2; the stage stopped there") as record:
        clf = EADCTClassifier(**params).fit(X, y)
    assert record[0].filename == __file__  # the user's line
    assert np.all(np.isfinite(clf.predict_proba(X)))
    assert [r["epoch"] for r in clf.history_] == [1, 2]
    assert clf.history_[-1]["non_finite"] is True


def test_regression_with_an_exploding_learning_rate_fails_loudly():
    X, y = make_panel()
    with pytest.raises(FloatingPointError, match="no weights to keep"):
        EADCTRegressor(**{**TINY, "lr": 1e12}).fit(X, y.astype(float))


def test_out_of_memory_mid_fit_becomes_the_memory_guards_message(monkeypatch, panel):
    """A CUDA out-of-memory error during training (simulated: no GPU here) is a ValueError that names the
    settings in use and settings that need at most half the memory."""
    import eadct.estimators._base as base

    def out_of_memory(*args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(base, "train_two_stage", out_of_memory)
    X, y = panel
    with pytest.raises(ValueError, match=r"ran out of memory during training.*batch 16.*need at most half") as info:
        EADCTClassifier(**TINY).fit(X, y)
    assert isinstance(info.value.__cause__, torch.OutOfMemoryError)
