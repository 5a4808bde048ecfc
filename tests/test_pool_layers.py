"""``pool_layers="all"``: the head reads every encoder layer's output, pooled and concatenated."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import TINY, check_option_fit, check_resumes_exactly, make_panel, make_unequal, saved_without

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.estimators._data import to_tensors
from eadct.networks import pool_steps

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


@pytest.mark.parametrize("n_blocks", [1, 2])
def test_all_layers_widen_the_heads_input_by_the_layer_count(n_blocks):
    X, y = make_panel(n=16)
    last = EADCTClassifier(**FAST | {"n_blocks": n_blocks}).fit(X, y)
    every = EADCTClassifier(**FAST | {"n_blocks": n_blocks}, pool_layers="all").fit(X, y)
    width = last.network_.task_head.linear.in_features
    assert every.network_.task_head.linear.in_features == 2 * n_blocks * width
    assert every.transform(X).shape == (16, 2 * n_blocks * width)
    assert every.predict_proba(X).shape == (16, 3)


def test_the_representation_is_each_layers_pooled_output():
    X, y, _ = make_unequal()
    clf = EADCTClassifier(**FAST, pool_layers="all", n_segments=3).fit(X, y)
    network, panel = clf.network_, clf._panel(X, fitting=False)
    data = to_tensors(panel, clf._standardize(panel), "cpu")
    x, valid, _ = data.batch(torch.arange(len(data)))
    assert valid is not None  # unequal lengths: padded steps
    with torch.no_grad():
        outputs = network.encoder.layer_outputs(x, valid)
        assert len(outputs) == 2
        torch.testing.assert_close(outputs[-1], network.encoder(x, valid), rtol=0, atol=0)
        expected = pool_steps(torch.cat(outputs, dim=-1), valid, "segments", None, 3)
        torch.testing.assert_close(network.represent(x, valid), expected, rtol=0, atol=0)
        # each layer's own pooled output is in there: the mean over valid steps of layer 0's first feature
        first = outputs[0][..., 0].masked_fill(~valid, 0).sum(1) / valid.sum(1)
        torch.testing.assert_close(network.represent(x, valid)[:, 0], first, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls", [EADCTClassifier, EADCTRegressor])
def test_all_layers_is_deterministic_round_trips_and_changes_the_fit(cls):
    X, y, target = make_unequal()
    check_option_fit(cls, FAST, {"pool_layers": "all"}, X, y if cls is EADCTClassifier else target)


def test_the_representation_estimator_pools_every_layer():
    X, _ = make_panel(n=12)
    params = {k: v for k, v in FAST.items() if k != "pretrain_epochs"}
    last = EADCTRepresentation(**params).fit(X).transform(X)
    every = EADCTRepresentation(**params, pool_layers="all").fit(X).transform(X)
    assert every.shape == (12, 2 * last.shape[1])


def test_all_layers_with_learned_pooling_resumes_exactly_after_a_kill(tmp_path, monkeypatch):
    check_resumes_exactly({"pool_layers": "all", "pooling": "segments-attention"}, tmp_path, monkeypatch)


def test_all_layers_needs_a_layered_encoder_and_a_known_value():
    X, y = make_panel(n=16)
    with pytest.raises(ValueError, match="pool_layers='last'"):
        EADCTClassifier(**FAST, architecture="gru", pool_layers="all").fit(X, y)
    with pytest.raises(ValueError, match="pool_layers"):
        EADCTClassifier(**FAST, pool_layers="first").fit(X, y)


def test_models_saved_before_pool_layers_load_with_the_last_layer():
    X, y = make_panel(n=16)
    clf = EADCTClassifier(**FAST).fit(X, y)
    old = saved_without(clf, "pool_layers")
    del old.network_.pool_layers  # a network pickled before the attribute existed
    assert old.pool_layers == "last"
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))
