"""Training that fails loudly (issue 19, point 5; issue 84, item 4): a loss that turns NaN or inf or grows a
thousandfold stops its stage, which keeps an earlier state with finite outputs (a warning) or raises a ValueError; a
fitted model never predicts NaN because training diverged."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel

from eadct import EADCTClassifier, EADCTRegressor


def _poisoning_optimizer(after_steps: int, poison=lambda p: p.fill_(float("nan")), buffers=()):
    """SGD that applies ``poison`` to the weights (and to the tensors in ``buffers``) right after step
    ``after_steps`` (counted over the whole fit; 2 steps per epoch on ``make_panel()`` with batches of 16)."""

    class Poison(torch.optim.SGD):
        steps = 0

        def step(self, closure=None):
            out = super().step(closure)
            type(self).steps += 1
            if type(self).steps == after_steps:
                with torch.no_grad():
                    for tensor in [p for group in self.param_groups for p in group["params"]] + list(buffers):
                        poison(tensor)
            return out

    return Poison


def _diverged(history) -> list[dict]:
    return [r for r in history if r.get("diverged")]


@pytest.mark.parametrize("Estimator", [EADCTClassifier, EADCTRegressor])
@pytest.mark.parametrize("pretrain_epochs", [1, 0])
def test_a_learning_rate_of_1e3_raises_naming_the_stage_epoch_lr_and_clipping(Estimator, pretrain_epochs):
    """The issue's case: lr=1e3 with the default clipping drove the losses to 1e22 and the classifier predicted
    one class without a word. The first epoch's loss now passes the thousandfold rule, with nothing to keep."""
    X, y = make_panel()
    target = y if Estimator is EADCTClassifier else y.astype(float)
    stage = "pretrain" if pretrain_epochs else "finetune"
    with pytest.raises(
        ValueError,
        match=rf"The {stage} loss grew to \S+, more than 1000 times the stage's starting "
        r"loss \(\S+\) in epoch 1: training diverged, with no earlier state of the stage to keep\. "
        r"Lower the learning rate \(lr=1000; .*clip_grad_norm=4",
    ) as info:
        Estimator(**{**TINY, "lr": 1e3, "pretrain_epochs": pretrain_epochs}).fit(X, target)
    assert isinstance(info.value, FloatingPointError)  # a FloatingPointError handler catches it too


def test_a_loss_that_is_never_finite_raises_naming_epoch_and_fixes():
    X, y = make_panel()
    with pytest.raises(ValueError, match=r"pretrain loss became nan in epoch 1.*Lower the learning rate \(lr=1e\+12"):
        EADCTClassifier(**{**TINY, "lr": 1e12}).fit(X, y)


def test_a_loss_that_turns_nan_keeps_the_best_earlier_epoch_with_a_warning():
    X, y = make_panel()
    params = {**TINY, "pretrain_epochs": 0, "max_epochs": 4, "optimizer": _poisoning_optimizer(3)}
    kept = r"finetune loss became nan in epoch 2: training diverged, so the stage stopped there and kept epoch 1, "
    with pytest.warns(UserWarning, match=kept + "whose outputs on the training series are finite") as record:
        clf = EADCTClassifier(**params, options={"average_epochs": None}).fit(X, y)  # the best epoch, not an average
    assert record[0].filename == __file__  # the user's line
    assert np.all(np.isfinite(clf.predict_proba(X)))
    assert [r["epoch"] for r in clf.history_] == [1, 2]
    assert clf.history_[-1]["non_finite"] is True and clf.history_[-1]["kept"] == "epoch 1"


def test_a_loss_that_grows_a_thousandfold_keeps_the_earlier_epoch_with_a_warning():
    """No NaN anywhere: the weights are multiplied by 1e4 after the first step of epoch 3, so that epoch's loss
    grows by orders of magnitude while staying finite. The stage keeps what it would have kept from the epochs
    before (the classifier's default: the average of its epochs), and predicts as a fit that stopped there."""
    X, y = make_panel()
    blow_up = _poisoning_optimizer(5, poison=lambda p: p.mul_(1e4))
    params = {**TINY, "pretrain_epochs": 0, "max_epochs": 4, "optimizer": blow_up}
    with pytest.warns(
        UserWarning,
        match=r"finetune loss grew to \S+, more than 1000 times the stage's starting loss "
        r"\(\S+\) in epoch 3: training diverged, so the stage stopped there and kept the average of "
        r"its epochs 1 to 2,.*"
        r"lr=0\.001.*clip_grad_norm=4",
    ):
        clf = EADCTClassifier(**params).fit(X, y)
    (diverged,) = _diverged(clf.history_)
    assert diverged["epoch"] == 3 and np.isfinite(diverged["train_loss"]) and "non_finite" not in diverged
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba))
    stopped = EADCTClassifier(**{**params, "max_epochs": 2, "optimizer": _poisoning_optimizer(10**9)}).fit(X, y)
    np.testing.assert_array_equal(proba, stopped.predict_proba(X))


def test_weights_that_turn_nan_in_an_epochs_last_step_are_never_kept():
    """The epoch's loss is finite (each batch's loss comes before its step) but its weights are NaN: before, such an
    epoch could become the best one and the stage kept it; now it is the epoch that diverged."""
    X, y = make_panel()
    params = {**TINY, "pretrain_epochs": 0, "max_epochs": 4, "optimizer": _poisoning_optimizer(4)}
    with pytest.warns(
        UserWarning,
        match=r"finetune weights became non-finite \(the epoch's loss was \S+\) in "
        r"epoch 2: training diverged, so the stage stopped there and kept the average of its epochs "
        r"1 to 1",
    ):
        clf = EADCTClassifier(**params).fit(X, y)
    assert np.all(np.isfinite(clf.predict_proba(X)))
    assert clf.history_[-1]["non_finite"] is True and np.isfinite(clf.history_[-1]["train_loss"])


def test_an_earlier_state_whose_outputs_are_not_finite_is_not_kept(monkeypatch):
    """Finite weights can still give NaN outputs: a negative BatchNorm variance (set after epoch 1) leaves training
    (batch statistics) finite and makes every eval output NaN. When epoch 3 diverges, no earlier state has finite
    outputs on the training series, so the fit raises instead of keeping one."""
    from eadct.networks.norm import MaskedBatchNorm

    norms = []
    init = MaskedBatchNorm.__init__

    def tracked(self, *args, **kwargs):
        init(self, *args, **kwargs)
        norms.append(self)

    monkeypatch.setattr(MaskedBatchNorm, "__init__", tracked)

    class Broken(_poisoning_optimizer(5, poison=lambda p: p.mul_(1e4))):
        def step(self, closure=None):
            out = super().step(closure)
            if type(self).steps == 2:
                with torch.no_grad():
                    for norm in norms:
                        norm.running_var.fill_(-1.0)
            return out

    X, y = make_panel()
    with pytest.raises(
        ValueError,
        match=r"finetune loss grew .* in epoch 3: training diverged, and no earlier state "
        r"of the stage has finite outputs on the training series, so none can be kept",
    ):
        EADCTClassifier(**{**TINY, "pretrain_epochs": 0, "max_epochs": 4, "optimizer": Broken}).fit(X, y)
    assert norms  # the default network normalises with BatchNorm


@pytest.mark.parametrize("lr", [1e-3, 1e-2])
def test_working_fits_stay_far_below_the_rule(lr, monkeypatch):
    """Both stages of fits that work (the default lr and ten times it) never come near DIVERGED_FACTOR times their
    reference (benchmarks/divergence_margin.py measures it on real sets)."""
    import eadct.training.divergence as divergence
    import eadct.training.loop as loop

    ratios = []
    rule = loop.diverged_record

    def watched(stage, epoch, loss, start_loss, finite_weights):
        ratios.append(loss / max(1.0, start_loss))
        return rule(stage, epoch, loss, start_loss, finite_weights)

    monkeypatch.setattr(loop, "diverged_record", watched)
    X, y = make_panel()
    for Estimator, target in ((EADCTClassifier, y), (EADCTRegressor, y.astype(float))):
        model = Estimator(**{**TINY, "lr": lr, "max_epochs": 6, "pretrain_epochs": 3}).fit(X, target)
        assert not _diverged(model.history_)
    assert len(ratios) == 18 and max(ratios) < 10 < divergence.DIVERGED_FACTOR


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
