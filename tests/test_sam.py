"""``sam_rho``: sharpness-aware minimisation in fine-tuning."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import TINY, check_option_fit, check_resumes_exactly, make_panel, make_unequal, saved_without
from torch import nn

from eadct import EADCTClassifier, EADCTRegressor
from eadct.training.sam import sharpness_aware_gradient

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def test_the_gradient_is_taken_at_the_moved_weights_and_the_weights_come_back():
    torch.manual_seed(0)
    a, w = torch.randn(5, 3), nn.Parameter(torch.randn(3))
    loss = lambda: ((a @ w) ** 3).sum()  # noqa: E731 (not quadratic: the gradient moves with the weights)
    start = w.detach().clone()
    loss().backward()
    g = w.grad.detach().clone()
    rho = 0.3
    sharpness_aware_gradient(nn.Module(), [w], loss, torch.Generator(), rho, torch.Generator().get_state())
    moved = (start + rho * g / g.norm()).requires_grad_()
    ((a @ moved) ** 3).sum().backward()
    torch.testing.assert_close(w.grad, moved.grad)
    torch.testing.assert_close(w.detach(), start, rtol=0, atol=0)


def test_the_second_pass_repeats_the_batch_draws_and_keeps_batch_norm_statistics():
    torch.manual_seed(0)
    network = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
    x, generator, draws = torch.randn(8, 3), torch.Generator().manual_seed(1), []

    def loss():
        noise = torch.randn(8, 3, generator=generator)
        draws.append(noise)
        return network(x + noise).square().mean()

    state = generator.get_state()
    loss().backward()
    after, statistics = generator.get_state(), network[1].running_mean.clone()
    sharpness_aware_gradient(network, list(network.parameters()), loss, generator, 0.1, state)
    torch.testing.assert_close(draws[0], draws[1], rtol=0, atol=0)
    assert torch.equal(generator.get_state(), after)
    torch.testing.assert_close(network[1].running_mean, statistics, rtol=0, atol=0)
    assert network[1].momentum == 0.1


@pytest.mark.parametrize("cls", [EADCTClassifier, EADCTRegressor])
def test_sam_is_deterministic_round_trips_and_changes_the_fit(cls):
    X, y, target = make_unequal()
    check_option_fit(cls, FAST, {"sam_rho": 0.05}, X, y if cls is EADCTClassifier else target)


def test_sam_with_augmentation_resumes_exactly_after_a_kill(tmp_path, monkeypatch):
    check_resumes_exactly({"augmentation": 0.1, "sam_rho": 0.05}, tmp_path, monkeypatch)


def test_sam_checks_its_value_and_old_models_load_without_it():
    X, y = make_panel(n=16)
    with pytest.raises(ValueError, match="sam_rho"):
        EADCTClassifier(**FAST, sam_rho=-0.1).fit(X, y)
    clf = EADCTClassifier(**FAST).fit(X, y)
    old = saved_without(clf, "sam_rho")
    assert old.sam_rho == 0.0
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))
