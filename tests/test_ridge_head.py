"""The regressor's ``head_refit="ridge"``: the linear head fitted again by ridge regression on TRAIN."""

from __future__ import annotations

import pickle

import numpy as np
from conftest import TINY, make_panel, make_unequal, saved_without
from sklearn.base import clone
from sklearn.linear_model import Ridge, RidgeCV

from eadct import PAPER_CONFIGURATION, EADCTClassifier, EADCTRegressor, paper_configuration
from eadct.estimators._ridge import RIDGE_ALPHAS, one_standard_error
from eadct.tables._config import load_table

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def _data(n=30, seed=0):
    X, _ = make_panel(n=n, seed=seed)
    return X, 3.0 * np.asarray(X)[:, 0].mean(axis=1) + 1.0


def test_ridge_head_is_sklearns_ridge_on_the_standardised_train_representation():
    X, y = _data()
    reg = EADCTRegressor(**FAST, options={"head_refit": "ridge"}).fit(X, y)
    Z = reg.transform(X)
    mean, scale = Z.mean(axis=0), Z.std(axis=0)
    targets = (y - reg.target_mean_) / reg.target_scale_
    ridge = RidgeCV(alphas=RIDGE_ALPHAS).fit((Z - mean) / scale, targets)
    expected = ridge.predict((Z - mean) / scale) * reg.target_scale_ + reg.target_mean_
    np.testing.assert_allclose(reg.predict(X), expected, rtol=1e-4, atol=1e-4 * y.std())
    assert reg.head_alpha_.shape == (1, 1) and reg.head_alpha_[0, 0] == ridge.alpha_
    # the encoder is the one fine-tuning left: only the head changed
    plain = EADCTRegressor(**FAST, options={"head_refit": None}).fit(X, y)
    np.testing.assert_array_equal(plain.transform(X), Z)
    assert not np.allclose(plain.predict(X), reg.predict(X))


def test_ridge_head_shrinks_to_the_mean_target_without_signal():
    X, _ = _data(n=40)
    y = np.random.default_rng(5).normal(size=40)  # independent of X
    reg = EADCTRegressor(**FAST, options={"head_refit": "ridge"}).fit(X, y)
    assert reg.head_alpha_[0, 0] >= 1e3
    assert reg.predict(X).std() < 0.3 * y.std()


def test_ridge_head_is_deterministic_and_round_trips():
    X, y = _data()
    reg = EADCTRegressor(**{**FAST, "random_state": 3}, options={"head_refit": "ridge"}).fit(X, y)
    pred = reg.predict(X)
    np.testing.assert_array_equal(clone(reg).fit(X, y).predict(X), pred)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg)).predict(X), pred)


def test_ridge_head_sees_only_the_labelled_train_series(monkeypatch):
    seen = []
    fit = RidgeCV.fit
    monkeypatch.setattr(RidgeCV, "fit", lambda self, Z, t, **kw: seen.append(len(Z)) or fit(self, Z, t, **kw))
    X, y = _data(n=30)
    extra, _ = make_panel(n=12, seed=9)
    EADCTRegressor(**FAST, options={"head_refit": "ridge", "input_differences": False}).fit(X, y, X_unlabeled=extra)
    assert seen == [30]  # every TRAIN series, the validation split included; no unlabelled series
    seen.clear()  # "auto": the proxy chooses without a network fit, then the one fit on all of TRAIN
    EADCTRegressor(**FAST, options={"head_refit": "ridge"}).fit(X, y, X_unlabeled=extra)
    assert seen == [30]


def test_ridge_head_refits_every_member_and_target_and_unequal_lengths():
    X, _, _ = make_unequal(n=24)
    y = np.stack([np.array([s.mean() for s in X]), np.array([s.std() for s in X])], axis=1)
    reg = EADCTRegressor(**FAST, n_estimators=2, options={"head_refit": "ridge"}).fit(X, y)
    assert reg.head_alpha_.shape == (2, 2)
    assert reg.predict(X).shape == (24, 2)
    single = EADCTRegressor(**FAST, n_estimators=1, options={"head_refit": "ridge"}).fit(X, y)
    alone = EADCTRegressor(**FAST, options={"head_refit": "ridge"}).fit(X, y)
    np.testing.assert_array_equal(single.predict(X), alone.predict(X))


def test_ridge_head_is_the_regressors_default_but_not_the_papers():
    params = EADCTRegressor().get_params()
    assert params["options__head_refit"] == "ridge"
    assert (params["options__average_epochs"], params["options__max_steps"]) == (20, None)
    assert params["validation_fraction"] == 0.0
    assert params["options__dilation_per_layer"] is True
    assert paper_configuration("regression") == {
        **PAPER_CONFIGURATION,
        "options": {
            **PAPER_CONFIGURATION["options"],
            "head_refit": None,
            "max_steps": None,
            "input_differences": False,
            "dilation_per_layer": False,
        },
    }
    assert paper_configuration("classification") == PAPER_CONFIGURATION
    assert load_table("table3").profile("quick").base_params("regression")["head_refit"] is None
    assert load_table("table3").profile("quick").base_params("regression")["max_steps"] is None
    assert load_table("accuracy").profile("defaults").base_params("regression")["head_refit"] == "ridge"
    EADCTClassifier(**paper_configuration())  # every name is the classifier's


def test_models_saved_before_head_refit_load_without_it():
    X, y = _data()
    reg = EADCTRegressor(**FAST, options={"head_refit": None}).fit(X, y)  # as an earlier version fitted it
    old = saved_without(reg, "head_refit")
    assert old.get_params()["options__head_refit"] is None
    np.testing.assert_array_equal(old.predict(X), reg.predict(X))


def test_huber_loss_keeps_its_fine_tuned_head():
    X, y = _data()
    both = EADCTRegressor(**FAST, options={"loss": "huber", "head_refit": "ridge"}).fit(X, y)
    alone = EADCTRegressor(**FAST, options={"loss": "huber", "head_refit": None}).fit(X, y)
    np.testing.assert_array_equal(both.predict(X), alone.predict(X))
    assert not hasattr(both, "head_alpha_")
    refit = EADCTRegressor(**FAST).fit(X, y)
    assert hasattr(refit, "head_alpha_")
    assert not hasattr(refit.set_params(options__head_refit=None).fit(X, y), "head_alpha_")


def _parts(X, n_parts):
    """The input's part means as numpy computes them (channel-standardised input, step t of L in t * n // L)."""
    X = np.asarray(X, dtype=float)
    index = np.arange(X.shape[2]) * n_parts // X.shape[2]
    return np.stack([X[:, :, index == k].mean(axis=2) for k in range(n_parts)], axis=1).reshape(len(X), -1)


def test_one_standard_error_takes_the_strongest_strength_within_one_standard_error_of_the_best():
    rng = np.random.default_rng(0)
    base = rng.uniform(0.5, 1.5, size=(50, 1))  # one spread of errors per series, shared by every strength
    errors = base * np.array([1.3, 1.0, 1.01, 1.03, 1.6])  # best at index 1; the standard error there ~0.04
    se = errors[:, 1].std(ddof=1) / np.sqrt(50)
    assert errors[:, 3].mean() - errors[:, 1].mean() < se < errors[:, 4].mean() - errors[:, 1].mean()
    assert one_standard_error(errors) == 3
    assert one_standard_error(base * np.array([1.0, 2.0, 3.0])) == 0  # nothing stronger is close: the best
    flat = np.ones((10, 4))
    assert one_standard_error(flat) == 3  # no difference at all: the strongest


def test_ridge_1se_head_is_the_one_standard_error_ridge_on_the_same_network():
    X, y = _data(n=40)
    y = y + np.random.default_rng(1).normal(scale=2.0, size=len(y))  # noise, so that the errors' spread matters
    loo = EADCTRegressor(**FAST, options={"head_refit": "ridge", "input_differences": False}).fit(X, y)
    reg = EADCTRegressor(**FAST, options={"head_refit": "ridge-1se", "input_differences": False}).fit(X, y)
    Z = reg.transform(X)
    np.testing.assert_array_equal(loo.transform(X), Z)  # the same network: only the head's strength differs
    mean, scale = Z.mean(axis=0), Z.std(axis=0)
    z, targets = (Z - mean) / scale, (y - reg.target_mean_) / reg.target_scale_
    errors = RidgeCV(alphas=RIDGE_ALPHAS, store_cv_results=True).fit(z, targets).cv_results_
    alpha = RIDGE_ALPHAS[one_standard_error(errors)]
    assert reg.head_alpha_[0, 0] == alpha >= loo.head_alpha_[0, 0]
    expected = Ridge(alpha=alpha).fit(z, targets).predict(z) * reg.target_scale_ + reg.target_mean_
    np.testing.assert_allclose(reg.predict(X), expected, rtol=1e-4, atol=1e-4 * y.std())
    np.testing.assert_array_equal(clone(reg).fit(X, y).predict(X), reg.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg)).predict(X), reg.predict(X))
