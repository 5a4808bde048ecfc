"""``drop_path``: stochastic depth of the EA-DC layers' residual branches."""

from __future__ import annotations

import pytest
import torch
from conftest import TINY, check_checked_and_old_models_load, check_option_fit, make_panel

from eadct import EADCTClassifier
from eadct.networks import EADCTEncoder, EncoderConfig

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def test_rates_grow_linearly_from_zero_at_the_first_layer():
    encoder = EADCTEncoder(EncoderConfig(n_channels=2, max_len=10, d_model=8, n_heads=2, n_blocks=2, drop_path=0.3))
    assert [layer.drop_path for layer in encoder.layers] == pytest.approx([0.0, 0.1, 0.2, 0.3])


def test_a_branch_is_dropped_or_scaled_per_series_in_training_only():
    encoder = EADCTEncoder(EncoderConfig(n_channels=2, max_len=10, d_model=8, n_heads=2, n_blocks=1, drop_path=0.5))
    layer = encoder.layers[1]
    branch = torch.randn(400, 5, 8)
    torch.manual_seed(0)
    out = layer.train()._drop_path(branch)
    dropped = out.flatten(1).abs().sum(1) == 0
    torch.testing.assert_close(out[~dropped], branch[~dropped] / 0.5)
    assert 150 < int(dropped.sum()) < 250  # about half of 400 series
    assert layer.eval()._drop_path(branch) is branch
    assert encoder.layers[0].train()._drop_path(branch) is branch  # rate 0 at the first layer


def test_drop_path_is_deterministic_round_trips_and_changes_the_fit():
    X, y = make_panel(n=20)
    check_option_fit(EADCTClassifier, FAST, {"drop_path": 0.2}, X, y)


def test_drop_path_checks_its_value_and_old_models_load_without_it():
    check_checked_and_old_models_load(FAST, "drop_path", 1.0, lambda layer: delattr(layer, "drop_path"))
