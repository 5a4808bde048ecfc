"""``log_inputs``: the signed log of heavy-tailed channels before the standardisation, learnt on TRAIN only."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from conftest import TINY, TINY_REPR, make_panel, make_unequal, saved_without
from scipy import stats
from sklearn.base import clone

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.estimators._data import LOG_SKEWNESS, log_scales, logged
from eadct.estimators._input import to_panel

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def _counts(n=30, seed=0):
    """Channel 0 heavy-tailed non-negative counts (a few series far larger), channel 1 a signed sine + noise,
    channel 2 non-negative but not skewed; the target reads the log of the counts."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, 24)
    size = np.exp(rng.normal(2.0, 2.0, size=n))  # per-series magnitude, log-normal: a heavy right tail
    X = np.empty((n, 3, 24))
    X[:, 0] = rng.poisson(size[:, None] * (1 + t), size=(n, 24))
    X[:, 1] = np.sin(2 * np.pi * t) + 0.3 * rng.normal(size=(n, 24))
    X[:, 2] = 5.0 + rng.uniform(size=(n, 24))
    return X, np.log1p(size)


def _manual_log(X, scales):
    out = np.array(X, dtype=np.float64)
    for c, s in enumerate(scales):
        if s > 0:
            out[:, c] = np.sign(out[:, c]) * np.log1p(np.abs(out[:, c]) / s)
    return out


def test_auto_picks_only_non_negative_channels_with_a_heavy_right_tail_and_scales_by_their_median():
    X, _ = _counts()
    panel = to_panel(X)
    assert stats.skew(X[:, 0].ravel()) > LOG_SKEWNESS  # the data are what the test says they are
    assert stats.skew(X[:, 2].ravel()) < LOG_SKEWNESS
    auto = log_scales(panel, "auto")
    nonzero = np.abs(X[:, 0][X[:, 0] != 0])
    np.testing.assert_array_equal(auto, [np.median(nonzero), 0.0, 0.0])
    # a skewed channel with one negative value is not picked (the log of counts, not of signed signals)
    signed = X.copy()
    signed[0, 0, 0] = -1.0
    assert log_scales(to_panel(signed), "auto")[0] == 0.0
    # True: every channel, each by its own median |x| (1 for an all-zero channel); False: none
    zero = X.copy()
    zero[:, 1] = 0.0
    every = log_scales(to_panel(zero), True)
    assert every[1] == 1.0 and every[0] == auto[0] and every[2] == np.median(np.abs(X[:, 2]))
    np.testing.assert_array_equal(log_scales(panel, False), np.zeros(3))
    np.testing.assert_array_equal(log_scales(panel, np.bool_(False)), np.zeros(3))  # from a parameter grid
    # the values: sign(x) log1p(|x| / s) on the picked channels, the others untouched; no scales: the panel itself
    np.testing.assert_array_equal(logged(panel, auto).values.transpose(0, 2, 1), _manual_log(X, auto))
    assert logged(panel, np.zeros(3)) is panel and logged(panel, None) is panel


def test_padding_and_nan_are_left_out_of_the_choice_and_pass_through():
    X, _, _ = make_unequal(n=12, channels=1)
    X = [np.abs(x) ** 4 for x in X]  # non-negative, skewed
    panel = to_panel(X)
    real = np.concatenate([x.ravel() for x in X])
    assert log_scales(panel, "auto")[0] == np.median(real[real != 0])
    X[0][0, 3] = np.nan
    with_nan = to_panel(X, missing_values="interpolate")
    out = logged(with_nan, log_scales(with_nan, "auto")).values
    assert np.isnan(out[0, 3, 0]) and np.isfinite(out[1:, :4]).all()


def test_the_fit_is_the_same_fit_on_the_logged_input_and_off_is_the_fit_without_the_option():
    X, y = _counts()
    reg = EADCTRegressor(**FAST, log_inputs="auto").fit(X, y)
    assert reg.channel_log_scale_[0] > 0 and not reg.channel_log_scale_[1:].any()
    # exactly a transform of the input, learnt in fit: the same as logging X by hand and fitting without it
    by_hand = EADCTRegressor(**FAST).fit(_manual_log(X, reg.channel_log_scale_), y)
    np.testing.assert_array_equal(reg.channel_mean_, by_hand.channel_mean_)
    new = _counts(n=10, seed=1)[0]
    np.testing.assert_array_equal(reg.predict(new), by_hand.predict(_manual_log(new, reg.channel_log_scale_)))
    # the scales come from fit's X only: predicting other series does not change them
    scales = reg.channel_log_scale_.copy()
    reg.predict(100.0 * new)
    np.testing.assert_array_equal(reg.channel_log_scale_, scales)
    # "auto" on data with no heavy-tailed channel is the default fit, bit for bit; so is log_inputs=False
    Xc, yc = make_panel()
    plain = EADCTClassifier(**FAST).fit(Xc, yc)
    auto = EADCTClassifier(**FAST, log_inputs="auto").fit(Xc, yc)
    assert not auto.channel_log_scale_.any()
    np.testing.assert_array_equal(auto.predict_proba(Xc), plain.predict_proba(Xc))


def test_it_compresses_series_far_out_and_serves_every_estimator_and_unequal_lengths():
    X, y = _counts()
    far = X.copy()
    far[:, 0] *= 1000.0  # counts three orders of magnitude beyond TRAIN's
    reg = EADCTRegressor(**FAST, log_inputs="auto").fit(X, y)
    plain = EADCTRegressor(**FAST).fit(X, y)
    reach = lambda est: np.abs(est._standardize(to_panel(far))[..., 0]).max()  # noqa: E731
    assert reach(reg) < 0.1 * reach(plain)
    assert np.isfinite(reg.predict(far)).all()
    rep = EADCTRepresentation(**TINY_REPR, log_inputs=True).fit(X)
    assert rep.channel_log_scale_.all() and rep.transform(X).shape[0] == len(X)
    Xu, labels, _ = make_unequal()
    Xu = [np.abs(x) ** 4 for x in Xu]
    clf = EADCTClassifier(**FAST, log_inputs="auto").fit(Xu, labels)
    assert clf.channel_log_scale_.all() and clf.predict(Xu).shape == (len(Xu),)


def test_log_inputs_is_checked_off_by_default_round_trips_and_loads_into_older_models(tmp_path):
    import eadct

    X, y = _counts()
    assert EADCTRegressor().log_inputs is False and EADCTClassifier().log_inputs is False
    with pytest.raises(ValueError, match="log_inputs must be True, False or 'auto'"):
        EADCTRegressor(**FAST, log_inputs="log").fit(X, y)
    reg = EADCTRegressor(**FAST, log_inputs=np.bool_(True)).fit(X, y)  # from a parameter grid
    assert reg.channel_log_scale_.all() and clone(reg).get_params()["log_inputs"]
    again = pickle.loads(pickle.dumps(reg))
    np.testing.assert_array_equal(again.predict(X), reg.predict(X))
    eadct.save(reg, tmp_path / "model.safetensors")
    np.testing.assert_array_equal(eadct.load(tmp_path / "model.safetensors").predict(X), reg.predict(X))
    fitted = EADCTRegressor(**FAST).fit(X, y)
    old = saved_without(fitted, "log_inputs", "channel_log_scale_")  # saved before the option
    assert old.log_inputs is False
    np.testing.assert_array_equal(old.predict(X), fitted.predict(X))
