"""The regressor's ``loss`` (``"squared_error"`` or ``"huber"``): the targets' location and scale, the loss
functions, the fit and its robustness to extreme targets."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel
from sklearn.base import clone

from eadct import EADCTClassifier, EADCTRegressor

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def test_huber_loss_scales_targets_robustly():
    from eadct.estimators._regressor import _target_location_scale

    y = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [1000.0]])
    centre, scale = _target_location_scale(y, "huber")
    q25, q75 = np.percentile(y[:, 0], [25, 75])
    np.testing.assert_allclose(centre, [3.5])  # the median, not the mean (169)
    np.testing.assert_allclose(scale, [(q75 - q25) / 1.349])
    centre, scale = _target_location_scale(y, "squared_error")
    np.testing.assert_allclose(centre, y.mean(axis=0))
    np.testing.assert_allclose(scale, y.std(axis=0))
    # no spread between the quartiles: the standard deviation instead
    flat = np.array([[0.0]] * 9 + [[1.0]])
    assert _target_location_scale(flat, "huber")[1][0] == pytest.approx(flat.std())


def test_huber_loss_is_quadratic_then_linear():
    from eadct.training import REGRESSION_LOSSES
    from eadct.training.stages import HUBER_DELTA

    huber = REGRESSION_LOSSES["huber"]
    small, large = torch.tensor([0.5]), torch.tensor([10.0])
    zero = torch.zeros(1)
    assert float(huber(small, zero)) == pytest.approx(0.5 * 0.25)
    assert float(huber(large, zero)) == pytest.approx(HUBER_DELTA * (10.0 - 0.5 * HUBER_DELTA))
    assert float(REGRESSION_LOSSES["squared_error"](large, zero)) == pytest.approx(100.0)


def test_huber_regressor_fits_deterministically_and_round_trips():
    X, _ = make_panel(n=24)
    y = np.asarray(X).mean(axis=(1, 2))
    reg = EADCTRegressor(**FAST, options={"loss": "huber"}).fit(X, y)
    pred = reg.predict(X)
    assert pred.shape == (len(y),)
    assert reg.get_params()["options__loss"] == "huber"
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg)).predict(X), pred)
    np.testing.assert_array_equal(clone(reg).fit(X, y).predict(X), pred)
    # a different loss is a different fit
    assert not np.array_equal(EADCTRegressor(**FAST).fit(X, y).predict(X), pred)
    with pytest.raises(ValueError, match="loss must be one of"):
        EADCTRegressor(**FAST, options={"loss": "absolute"}).fit(X, y)
    assert "options__loss" not in EADCTClassifier().get_params()


def test_huber_loss_resists_extreme_targets():
    """A few extreme targets pull the squared-error fit of the other series far more than the Huber fit."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 1, 12))
    y = X[:, 0, :].mean(axis=1) * 3.0
    y_dirty = y.copy()
    y_dirty[:3] = 400.0
    clean = np.arange(3, 60)
    params = {**TINY, "max_epochs": 30, "pretrain_epochs": 0, "validation_fraction": 0.0, "dropout": 0.0}
    errors = {}
    for loss in ("squared_error", "huber"):
        pred = EADCTRegressor(**params, options={"loss": loss}).fit(X, y_dirty).predict(X[clean])
        errors[loss] = np.sqrt(np.mean((pred - y[clean]) ** 2))
    assert errors["huber"] < 0.5 * errors["squared_error"], errors
