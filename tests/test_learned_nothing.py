"""A fit that learned nothing says so: the training accuracy not above the largest class's share, or the training
error not below the constant predictor's, is a LearnedNothingWarning naming the likely causes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import TINY, make_panel

from eadct import EADCTClassifier, EADCTRegressor, LearnedNothingWarning

NOTHING = {**TINY, "max_epochs": 1, "pretrain_epochs": 0, "lr": 1e-12, "random_state": 0}


def test_a_classifier_no_better_than_the_largest_class_warns_with_the_causes():
    X = np.random.default_rng(0).normal(size=(20, 2, 12))
    y = np.array([0] * 18 + [1] * 2)  # the largest class holds 0.9: an untrained network cannot beat it
    with pytest.warns(LearnedNothingWarning, match=r"not above 0\.900.*series_normalization.*max_epochs"):
        EADCTClassifier(**NOTHING).fit(X, y)


def test_a_regressor_no_better_than_the_mean_target_warns():
    X = np.random.default_rng(1).normal(size=(20, 2, 12))
    y = np.random.default_rng(2).normal(size=20)
    with pytest.warns(LearnedNothingWarning, match="not below .* always predicting the mean target"):
        EADCTRegressor(**NOTHING, options={"head_refit": None, "input_differences": False}).fit(X, y)


def test_a_fit_that_learned_says_nothing():
    X, y = make_panel(n=24)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LearnedNothingWarning)
        clf = EADCTClassifier(**{**TINY, "max_epochs": 30, "pretrain_epochs": 0, "random_state": 0}).fit(X, y)
    assert np.mean(clf.predict(X) == y) > np.bincount(y).max() / len(y)
