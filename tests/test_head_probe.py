"""``head_init="probe"``: the head's linear layer fitted on the pretrained representation before fine-tuning."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import TINY, check_option_fit, check_resumes_exactly, make_panel, make_unequal, saved_without
from scipy.special import softmax
from sklearn.linear_model import LogisticRegression, RidgeCV

from eadct import EADCTClassifier, EADCTRegressor
from eadct.estimators import _probe
from eadct.estimators._data import to_tensors
from eadct.estimators._probe import PROBE_C, probe_head
from eadct.estimators._ridge import RIDGE_ALPHAS
from eadct.training import predict_outputs

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def _tensors(model, X, targets):
    panel = model._panel(X, fitting=False)
    return to_tensors(panel, model._standardize(panel), "cpu", targets)


def _standardised(features):
    scale = features.std(axis=0)
    return (features - features.mean(axis=0)) / np.where(scale > 1e-12, scale, 1.0)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_probe_is_the_logistic_regression_on_the_heads_input(n_classes):
    X, y = make_panel(n=24, n_classes=n_classes)
    clf = EADCTClassifier(**FAST).fit(X, y)
    network = clf.network_
    train = _tensors(clf, X, np.searchsorted(clf.classes_, y))
    probe_head(network, train, "classification", batch_size=8)
    features = torch.nn.functional.gelu(predict_outputs(network, train, 8, "represent")).double().numpy()
    design = _standardised(features)
    reference = LogisticRegression(C=PROBE_C, max_iter=1000).fit(design, train.targets.numpy())
    logits = predict_outputs(network, train, 8).double().numpy()
    assert logits.shape == (len(X), n_classes)
    np.testing.assert_allclose(softmax(logits, axis=1), reference.predict_proba(design), atol=1e-4)


def test_regressor_probe_is_the_ridge_on_the_representation():
    X_eq, y = make_panel(n=20, channels=2)
    reg = EADCTRegressor(**FAST, head_refit=None, input_differences=False).fit(X_eq, y.astype(float))
    targets = ((y - y.mean()) / y.std()).astype(np.float32).reshape(-1, 1)
    train = _tensors(reg, X_eq, targets)
    probe_head(reg.network_, train, "regression", batch_size=8)
    features = predict_outputs(reg.network_, train, 8, "represent").double().numpy()
    design = _standardised(features)
    reference = RidgeCV(alphas=RIDGE_ALPHAS).fit(design, targets)
    outputs = predict_outputs(reg.network_, train, 8).double().numpy()
    np.testing.assert_allclose(outputs[:, 0], reference.predict(design).ravel(), atol=1e-4)


def test_probe_reads_only_the_training_series_once_before_fine_tuning(monkeypatch):
    X, y = make_panel(n=30)
    seen, real = [], _probe.probe_head

    def recording(network, train, task, batch_size, autocast_dtype=None):
        seen.append(len(train))
        return real(network, train, task, batch_size, autocast_dtype)

    monkeypatch.setattr(_probe, "probe_head", recording)
    EADCTClassifier(**FAST, head_init="probe", validation_fraction=0.2).fit(X, y)
    assert seen == [24]  # the training part only, never the validation split's 6 series
    seen.clear()
    EADCTClassifier(**FAST, head_init="probe", n_estimators=2).fit(X, y)
    assert seen == [30, 30]  # once per member
    seen.clear()
    EADCTClassifier(**FAST).fit(X, y)
    assert seen == []


@pytest.mark.parametrize("cls", [EADCTClassifier, EADCTRegressor])
def test_probe_fit_is_deterministic_round_trips_and_changes_the_fit(cls):
    X, y, target = make_unequal()
    check_option_fit(cls, FAST, {"head_init": "probe"}, X, y if cls is EADCTClassifier else target)


def test_probe_resumes_exactly_after_a_kill(tmp_path, monkeypatch):
    check_resumes_exactly({"head_init": "probe"}, tmp_path, monkeypatch)


def test_probe_needs_a_linear_head_and_a_known_value():
    X, y = make_panel(n=16)
    with pytest.raises(ValueError, match="head_hidden_size=None"):
        EADCTClassifier(**FAST, head_init="probe", head_hidden_size=8).fit(X, y)
    with pytest.raises(ValueError, match="head_init"):
        EADCTClassifier(**FAST, head_init="linear").fit(X, y)


def test_models_saved_before_head_init_load_with_the_random_head():
    X, y = make_panel(n=16)
    clf = EADCTClassifier(**FAST).fit(X, y)
    old = saved_without(clf, "head_init")
    assert old.head_init == "random"
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))
