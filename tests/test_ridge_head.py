"""The regressor's ``head_refit="ridge"``: the linear head fitted again by ridge regression on TRAIN."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from conftest import TINY, make_panel, make_unequal, saved_without
from sklearn.base import clone
from sklearn.linear_model import Ridge, RidgeCV

from eadct import PAPER_CONFIGURATION, EADCTClassifier, EADCTRegressor, paper_configuration
from eadct.estimators import RIDGE_ALPHAS, _treatment, one_standard_error
from eadct.tables._config import load_table

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def _data(n=30, seed=0):
    X, _ = make_panel(n=n, seed=seed)
    return X, 3.0 * np.asarray(X)[:, 0].mean(axis=1) + 1.0


def test_ridge_head_is_sklearns_ridge_on_the_standardised_train_representation():
    X, y = _data()
    reg = EADCTRegressor(**FAST, head_refit="ridge").fit(X, y)
    Z = reg.transform(X)
    mean, scale = Z.mean(axis=0), Z.std(axis=0)
    targets = (y - reg.target_mean_) / reg.target_scale_
    ridge = RidgeCV(alphas=RIDGE_ALPHAS).fit((Z - mean) / scale, targets)
    expected = ridge.predict((Z - mean) / scale) * reg.target_scale_ + reg.target_mean_
    np.testing.assert_allclose(reg.predict(X), expected, rtol=1e-4, atol=1e-4 * y.std())
    assert reg.head_alpha_.shape == (1, 1) and reg.head_alpha_[0, 0] == ridge.alpha_
    # the encoder is the one fine-tuning left: only the head changed
    plain = EADCTRegressor(**FAST, head_refit=None).fit(X, y)
    np.testing.assert_array_equal(plain.transform(X), Z)
    assert not np.allclose(plain.predict(X), reg.predict(X))


def test_ridge_head_shrinks_to_the_mean_target_without_signal():
    X, _ = _data(n=40)
    y = np.random.default_rng(5).normal(size=40)  # independent of X
    reg = EADCTRegressor(**FAST, head_refit="ridge").fit(X, y)
    assert reg.head_alpha_[0, 0] >= 1e3
    assert reg.predict(X).std() < 0.3 * y.std()


def test_ridge_head_is_deterministic_and_round_trips():
    X, y = _data()
    reg = EADCTRegressor(**{**FAST, "random_state": 3}, head_refit="ridge").fit(X, y)
    pred = reg.predict(X)
    np.testing.assert_array_equal(clone(reg).fit(X, y).predict(X), pred)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg)).predict(X), pred)


def test_ridge_head_sees_only_the_labelled_train_series(monkeypatch):
    seen = []
    fit = RidgeCV.fit
    monkeypatch.setattr(RidgeCV, "fit", lambda self, Z, t, **kw: seen.append(len(Z)) or fit(self, Z, t, **kw))
    X, y = _data(n=30)
    extra, _ = make_panel(n=12, seed=9)
    EADCTRegressor(**FAST, head_refit="ridge", input_differences=False).fit(X, y, X_unlabeled=extra)
    assert seen == [30]  # every TRAIN series, the validation split included; no unlabelled series
    seen.clear()  # "auto" where the network chooses: its two fits on two thirds of TRAIN, then the fit on all of it
    monkeypatch.setattr(_treatment, "NETWORK_BELOW", float("inf"))
    EADCTRegressor(**FAST, head_refit="ridge").fit(X, y, X_unlabeled=extra)
    assert seen == [20, 20, 30]


def test_ridge_head_refits_every_member_and_target_and_unequal_lengths():
    X, _, _ = make_unequal(n=24)
    y = np.stack([np.array([s.mean() for s in X]), np.array([s.std() for s in X])], axis=1)
    reg = EADCTRegressor(**FAST, head_refit="ridge", n_estimators=2).fit(X, y)
    assert reg.head_alpha_.shape == (2, 2)
    assert reg.predict(X).shape == (24, 2)
    single = EADCTRegressor(**FAST, head_refit="ridge", n_estimators=1).fit(X, y)
    alone = EADCTRegressor(**FAST, head_refit="ridge").fit(X, y)
    np.testing.assert_array_equal(single.predict(X), alone.predict(X))


def test_ridge_head_is_the_regressors_default_but_not_the_papers():
    regressor = EADCTRegressor()
    assert regressor.head_refit == "ridge"
    assert (regressor.average_epochs, regressor.validation_fraction, regressor.max_steps) == (20, 0.0, 900)
    assert regressor.dilation_per_layer is True
    assert paper_configuration("regression") == {
        **PAPER_CONFIGURATION,
        "head_refit": None,
        "max_steps": None,
        "input_differences": False,
        "dilation_per_layer": False,
    }
    assert paper_configuration("classification") == PAPER_CONFIGURATION
    assert load_table("table3").profile("quick").base_params("regression")["head_refit"] is None
    assert load_table("table3").profile("quick").base_params("regression")["max_steps"] is None
    assert load_table("accuracy").profile("defaults").base_params("regression")["head_refit"] == "ridge"
    EADCTClassifier(**paper_configuration())  # every name is the classifier's


def test_ridge_head_refuses_a_hidden_layer_before_training_and_is_the_regressors_only():
    X, y = _data()
    with pytest.raises(ValueError, match="head_hidden_size=None"):
        EADCTRegressor(**FAST, head_refit="ridge", head_hidden_size=8).fit(X, y)
    with pytest.raises(ValueError, match="head_refit must be one of"):
        EADCTRegressor(**FAST, head_refit="lasso").fit(X, y)
    assert "head_refit" not in EADCTClassifier().get_params()


def test_models_saved_before_head_refit_load_without_it():
    X, y = _data()
    reg = EADCTRegressor(**FAST, head_refit=None).fit(X, y)  # as an earlier version fitted it
    old = saved_without(reg, "head_refit")
    assert old.head_refit is None
    np.testing.assert_array_equal(old.predict(X), reg.predict(X))


def test_huber_loss_keeps_its_fine_tuned_head():
    X, y = _data()
    both = EADCTRegressor(**FAST, loss="huber", head_refit="ridge").fit(X, y)
    alone = EADCTRegressor(**FAST, loss="huber", head_refit=None).fit(X, y)
    np.testing.assert_array_equal(both.predict(X), alone.predict(X))
    assert not hasattr(both, "head_alpha_")
    refit = EADCTRegressor(**FAST).fit(X, y)
    assert hasattr(refit, "head_alpha_")
    assert not hasattr(refit.set_params(head_refit=None).fit(X, y), "head_alpha_")


def _parts(X, n_parts):
    """The input's part means as numpy computes them (channel-standardised input, step t of L in t * n // L)."""
    X = np.asarray(X, dtype=float)
    index = np.arange(X.shape[2]) * n_parts // X.shape[2]
    return np.stack([X[:, :, index == k].mean(axis=2) for k in range(n_parts)], axis=1).reshape(len(X), -1)


def test_input_path_is_the_ridge_on_representation_and_input_parts_with_the_loo_weight():
    from eadct.estimators._ridge import INPUT_WEIGHTS

    X, _ = _data(n=40)
    y = 3.0 * _parts(X, 4)[:, 1 * 3 + 2] - _parts(X, 4)[:, 3 * 3 + 1]  # linear in the noise channels' parts
    reg = EADCTRegressor(**FAST, head_input_parts=4).fit(X, y)
    Z, P = reg.transform(X), _parts(X, 4)
    targets = (y - reg.target_mean_) / reg.target_scale_
    standard = [(F - F.mean(axis=0)) / np.where(F.std(axis=0) > 1e-12, F.std(axis=0), 1.0) for F in (Z, P)]
    fits = [(RidgeCV(alphas=RIDGE_ALPHAS).fit(np.hstack([standard[0], w * standard[1]]), targets), w)
            for w in INPUT_WEIGHTS]  # fmt: skip
    ridge, weight = max(fits, key=lambda fit: fit[0].best_score_)
    expected = ridge.predict(np.hstack([standard[0], weight * standard[1]])) * reg.target_scale_ + reg.target_mean_
    np.testing.assert_allclose(reg.predict(X), expected, rtol=1e-4, atol=1e-3 * y.std())
    assert reg.head_input_weight_.tolist() == [weight] and weight > 0  # the input carries the signal
    assert reg.head_alpha_[0, 0] == ridge.alpha_
    alone = EADCTRegressor(**FAST).fit(X, y)  # the same fine-tuning: only the head's refit differs
    np.testing.assert_array_equal(alone.transform(X), Z)
    X_new, _ = _data(n=30, seed=1)  # new series: the input's path generalises where the representation does not
    y_new = 3.0 * _parts(X_new, 4)[:, 1 * 3 + 2] - _parts(X_new, 4)[:, 3 * 3 + 1]
    rmse = [np.sqrt(np.mean((m.predict(X_new) - y_new) ** 2)) for m in (reg, alone)]
    assert rmse[0] < 0.1 * rmse[1]


def test_input_path_unequal_lengths_members_determinism_and_round_trips(tmp_path):
    import eadct

    X, _, _ = make_unequal(n=24)
    y = np.array([s[:, : (s.shape[1] + 1) // 2].mean() for s in X])  # part 0 of 2 of each series' own length
    reg = EADCTRegressor(**{**FAST, "random_state": 2}, head_input_parts=2, n_estimators=2).fit(X, y)
    pred = reg.predict(X)
    assert pred.shape == (24,) and reg.head_input_weight_.shape == (2,)
    assert np.sqrt(np.mean((pred - y) ** 2)) < 0.1 * y.std()  # the parts follow each series' length
    np.testing.assert_array_equal(clone(reg).fit(X, y).predict(X), pred)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg)).predict(X), pred)
    eadct.save(reg, tmp_path / "reg")
    np.testing.assert_array_equal(eadct.load(tmp_path / "reg").predict(X), pred)


def test_input_path_needs_the_ridge_refit_and_is_off_by_default():
    X, y = _data()
    assert EADCTRegressor().head_input_parts is None and "head_input_parts" not in EADCTClassifier().get_params()
    for params in ({"head_refit": None}, {"loss": "huber"}):
        with pytest.raises(ValueError, match='head_refit="ridge" with loss="squared_error"'):
            EADCTRegressor(**FAST, head_input_parts=4, **params).fit(X, y)
    with pytest.raises(ValueError, match="head_input_parts must be None or a positive int"):
        EADCTRegressor(**FAST, head_input_parts=0).fit(X, y)
    reg = EADCTRegressor(**FAST, head_input_parts=4).fit(X, y)
    assert not hasattr(reg.set_params(head_input_parts=None).fit(X, y), "head_input_weight_")


def test_clip_predictions_bounds_each_target_to_its_train_range_and_changes_nothing_else():
    X, y = _data()
    Y = np.column_stack([y, -10.0 * y])  # two targets on other scales: each clipped to its own range
    far = 6.0 * np.asarray(X)  # series far outside TRAIN, whose predictions leave the range
    plain = EADCTRegressor(**FAST).fit(X, Y)
    clipped = EADCTRegressor(**FAST, clip_predictions=True).fit(X, Y)
    np.testing.assert_array_equal(clipped.target_min_, Y.min(axis=0))
    np.testing.assert_array_equal(clipped.target_max_, Y.max(axis=0))
    raw = plain.predict(far)
    assert ((raw < Y.min(axis=0)) | (raw > Y.max(axis=0))).any()  # the test can fail: some leave the range
    # the same network (the clip acts after it): every prediction is the unclipped one clipped, column by column
    np.testing.assert_array_equal(clipped.predict(far), np.clip(raw, Y.min(axis=0), Y.max(axis=0)))
    np.testing.assert_array_equal(clipped.transform(far), plain.transform(far))
    inside = plain.predict(X)
    kept = (inside >= Y.min(axis=0)) & (inside <= Y.max(axis=0))
    np.testing.assert_array_equal(clipped.predict(X)[kept], inside[kept])


def test_clip_predictions_is_off_by_default_checked_round_trips_and_loads_into_older_models():
    X, y = _data()
    assert EADCTRegressor().clip_predictions is False and "clip_predictions" not in EADCTClassifier().get_params()
    with pytest.raises(ValueError, match="clip_predictions must be True or False"):
        EADCTRegressor(**FAST, clip_predictions="yes").fit(X, y)
    reg = EADCTRegressor(**FAST, clip_predictions=np.bool_(True)).fit(X[:20], y[:20])  # from a parameter grid
    assert clone(reg).get_params()["clip_predictions"]
    again = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(again.predict(X), reg.predict(X))
    assert again.predict(X).max() <= y[:20].max() and again.predict(X).min() >= y[:20].min()
    old = saved_without(EADCTRegressor(**FAST).fit(X, y), "clip_predictions")  # saved before the option
    assert old.clip_predictions is False


def test_clip_representation_bounds_each_feature_to_its_train_range_and_leaves_the_fit_alone(tmp_path):
    import eadct

    X, y = _data()
    far = 6.0 * np.asarray(X)  # series far outside TRAIN: their features leave TRAIN's range
    plain = EADCTRegressor(**FAST).fit(X, y)
    clipped = EADCTRegressor(**FAST, clip_representation=True).fit(X, y)
    Z, Z_far = plain.transform(X), plain.transform(far)
    assert ((Z_far < Z.min(axis=0)) | (Z_far > Z.max(axis=0))).any()  # the test can fail: some features leave
    # the same fit (TRAIN's features lie inside their own range): same representation and predictions on TRAIN
    np.testing.assert_array_equal(clipped.transform(X), Z)
    np.testing.assert_array_equal(clipped.predict(X), plain.predict(X))
    np.testing.assert_array_equal(clipped.head_alpha_, plain.head_alpha_)
    # outside TRAIN: each feature clipped to its range, then the same linear head
    np.testing.assert_allclose(clipped.transform(far), np.clip(Z_far, Z.min(axis=0), Z.max(axis=0)), rtol=1e-6)
    linear = plain.network_.task_head.linear
    weight, bias = linear.weight.detach().numpy(), linear.bias.detach().numpy()
    expected = (clipped.transform(far) @ weight.T + bias)[:, 0] * plain.target_scale_ + plain.target_mean_
    np.testing.assert_allclose(clipped.predict(far), expected, rtol=1e-4, atol=1e-4 * y.std())
    assert not np.allclose(clipped.predict(far), plain.predict(far))
    # without the ridge refit too, and each member of an ensemble with the range of its own representation
    ens = EADCTRegressor(**FAST, clip_representation=True, head_refit=None, n_estimators=2).fit(X, y)
    for net in ens.networks_:
        own = ens._forward(X, "represent", [net])
        np.testing.assert_allclose(net.represent_low.numpy(), own.min(axis=0), rtol=1e-6)
        np.testing.assert_allclose(net.represent_high.numpy(), own.max(axis=0), rtol=1e-6)
    assert not np.array_equal(ens.networks_[0].represent_high.numpy(), ens.networks_[1].represent_high.numpy())
    eadct.save(clipped, tmp_path / "model.safetensors")  # the range is part of the saved network
    np.testing.assert_array_equal(eadct.load(tmp_path / "model.safetensors").predict(far), clipped.predict(far))


def test_clip_representation_is_off_by_default_checked_round_trips_and_loads_into_older_models():
    X, y = _data()
    reg = EADCTRegressor()
    assert reg.clip_representation is False and "clip_representation" not in EADCTClassifier().get_params()
    assert getattr(EADCTRegressor(**FAST).fit(X, y).network_, "represent_low", None) is None  # no buffers when off
    with pytest.raises(ValueError, match="clip_representation must be True or False"):
        EADCTRegressor(**FAST, clip_representation="yes").fit(X, y)
    reg = EADCTRegressor(**FAST, clip_representation=np.bool_(True)).fit(X[:20], y[:20])  # from a parameter grid
    assert clone(reg).get_params()["clip_representation"]
    again = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(again.predict(6.0 * np.asarray(X)), reg.predict(6.0 * np.asarray(X)))
    old = saved_without(EADCTRegressor(**FAST).fit(X, y), "clip_representation")  # saved before the option
    assert old.clip_representation is False


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
    loo = EADCTRegressor(**FAST, head_refit="ridge", input_differences=False).fit(X, y)
    reg = EADCTRegressor(**FAST, head_refit="ridge-1se", input_differences=False).fit(X, y)
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


def test_ridge_1se_head_per_member_and_target_with_the_input_path_and_unequal_lengths():
    X, _, _ = make_unequal(n=24)
    y = np.stack([np.array([s.mean() for s in X]), np.array([s.std() for s in X])], axis=1)
    reg = EADCTRegressor(**FAST, head_refit="ridge-1se", n_estimators=2, head_input_parts=4).fit(X, y)
    assert reg.head_alpha_.shape == (2, 2) and reg.head_input_weight_.shape == (2,)
    assert reg.predict(X).shape == (24, 2) and np.isfinite(reg.predict(X)).all()
    with pytest.raises(ValueError, match="head_hidden_size=None"):
        EADCTRegressor(**FAST, head_refit="ridge-1se", head_hidden_size=8).fit(X, y)
