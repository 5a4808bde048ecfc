"""The ``augmentation`` option: magnitude augmentation of the fine-tuning batches (docs/training.md)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel, make_unequal
from sklearn.base import clone

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.training import augment_magnitude
from eadct.training import stages as stages_module
from eadct.training.augment import JITTER_SHARE

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1, "random_state": 0}


def test_scale_and_noise_have_the_documented_spread():
    g = torch.Generator().manual_seed(0)
    ones = torch.ones(4000, 50, 2)
    out = augment_magnitude(ones, None, 0.2, g)
    assert out.shape == ones.shape
    # the mean over a series' steps is its channel's scale factor (the noise averages out)
    scale = out.mean(dim=1)
    assert abs(float(scale.mean()) - 1.0) < 0.01 and abs(float(scale.std()) - 0.2) < 0.01
    noise = augment_magnitude(torch.zeros(200, 200, 2), None, 0.2, g)  # zeros: noise only
    assert abs(float(noise.std()) - JITTER_SHARE * 0.2) < 0.002


def test_padding_stays_zero_and_draws_follow_the_generator():
    x = torch.randn(3, 6, 2)
    valid = torch.arange(6)[None, :] < torch.tensor([[6], [4], [2]])
    x = x * valid.unsqueeze(-1)
    a = augment_magnitude(x, valid, 0.1, torch.Generator().manual_seed(1))
    b = augment_magnitude(x, valid, 0.1, torch.Generator().manual_seed(1))
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert bool((a[~valid] == 0).all()) and not torch.equal(a[valid], x[valid])


def test_zero_is_the_model_without_augmentation_and_the_option_changes_the_fit():
    X, y = make_panel(n=20)
    plain = EADCTClassifier(**FAST).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(EADCTClassifier(**FAST, augmentation=0.0).fit(X, y).predict_proba(X), plain)
    augmented = EADCTClassifier(**FAST, augmentation=0.2).fit(X, y).predict_proba(X)
    assert not np.array_equal(augmented, plain)


def test_augmented_fit_is_deterministic_and_round_trips():
    X, y, target = make_unequal(n=16)
    clf = EADCTClassifier(**FAST, augmentation=0.1).fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), proba)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)
    reg = EADCTRegressor(**FAST, augmentation=0.1).fit(X, target)
    assert np.isfinite(reg.predict(X)).all()


def test_only_fine_tuning_training_batches_are_augmented(monkeypatch):
    """Pretraining, the validation split and prediction see the series as they are."""
    X, y = make_panel(n=20)
    seen = []

    def recording(x, valid, strength, generator):
        seen.append(x.shape[0])
        return x

    monkeypatch.setattr(stages_module, "augment_magnitude", recording)
    params = {**FAST, "max_epochs": 3, "pretrain_epochs": 2, "batch_size": 8, "validation_fraction": 0.25}
    clf = EADCTClassifier(**params, augmentation=0.1).fit(X, y)
    # three epochs of the same training series, fewer than the 20 (a quarter or so validates), in batches of 8
    assert len(seen) % 3 == 0 and max(seen) <= 8
    per_epoch = [sum(seen[i : i + len(seen) // 3]) for i in range(0, len(seen), len(seen) // 3)]
    assert per_epoch[0] == per_epoch[1] == per_epoch[2] and 10 <= per_epoch[0] <= 15
    n_calls = len(seen)
    clf.predict(X)
    assert len(seen) == n_calls


def test_bad_strength_is_refused_and_the_representation_has_no_such_option():
    X, y = make_panel(n=12)
    with pytest.raises(ValueError, match="augmentation must be a number >= 0"):
        EADCTClassifier(augmentation=-0.1).fit(X, y)
    with pytest.raises(TypeError, match="augmentation"):
        EADCTRepresentation(augmentation=0.1)


def test_models_saved_before_augmentation_load_without_it():
    X, y = make_panel(n=16)
    clf = EADCTClassifier(**FAST).fit(X, y)
    state = clf.__getstate__()
    del state["augmentation"]
    old = EADCTClassifier.__new__(EADCTClassifier)
    old.__setstate__(state)
    assert old.augmentation == 0.0
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))
