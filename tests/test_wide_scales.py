"""``wide_scales``: channels whose series differ in scale by orders of magnitude get the log and each series' own
standardisation, decided on TRAIN's inputs only; elsewhere the fit is the fit without the option."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from conftest import TINY, make_panel, make_unequal, saved_without
from sklearn.base import clone

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.estimators import spread_threshold
from eadct.estimators._data import SCALE_SPREAD, log_scales, scale_spread, wide_scale_channels
from eadct.estimators._input import to_panel

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def _appliances(n=30, seed=0):
    """Channel 0: the same shapes at scales from 1e-3 to 1e3 (a device off or on), the class in the shape;
    channel 1: noise of one scale."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, 24)
    y = np.arange(n) % 3
    scale = 10.0 ** rng.uniform(-3, 3, size=n)
    X = np.empty((n, 2, 24))
    X[:, 0] = scale[:, None] * np.sin(2 * np.pi * (y[:, None] + 1) * t) + 0.01 * scale[:, None] * rng.normal(
        size=(n, 24)
    )
    X[:, 1] = rng.normal(size=(n, 24))
    return X, y


def test_the_spread_is_the_ratio_of_the_series_scales_90th_to_10th_percentile_over_real_steps():
    X, _ = _appliances()
    spread = scale_spread(to_panel(X))
    stds = X[:, 0].std(axis=1)
    np.testing.assert_allclose(spread[0], np.quantile(stds, 0.9) / np.quantile(stds, 0.1))
    assert spread[0] > SCALE_SPREAD > spread[1]  # the data are what the test says they are
    np.testing.assert_array_equal(wide_scale_channels(to_panel(X), "auto"), [True, False])
    np.testing.assert_array_equal(wide_scale_channels(to_panel(X), False), [False, False])
    # padding, NaN and constant series are left out; fewer than three series with a spread read 1
    Xu, _, _ = make_unequal(n=12, channels=1)
    Xu = [x * 10.0 ** (4 * (i % 2)) for i, x in enumerate(Xu)]  # half the series 10,000 times the others
    stds = np.array([x.std() for x in Xu])
    Xu[0] = np.full_like(Xu[0], 7.0)
    Xu[1][0, 2] = np.nan
    stds[0], stds[1] = np.nan, np.nanstd(Xu[1])
    expected = np.nanquantile(stds, 0.9) / np.nanquantile(stds, 0.1)
    np.testing.assert_allclose(scale_spread(to_panel(Xu, missing_values="interpolate")), expected)  # NaN kept
    assert scale_spread(to_panel(np.ones((5, 1, 8))))[0] == 1.0


def test_auto_is_log_and_series_normalization_on_a_wide_channel_and_the_plain_fit_elsewhere():
    X, y = _appliances()
    one = X[:, :1]
    auto = EADCTClassifier(**FAST, options={"wide_scales": "auto"}).fit(one, y)
    assert auto.wide_scale_channels_.tolist() == [True]
    np.testing.assert_array_equal(auto.channel_log_scale_, log_scales(to_panel(one), np.array([True])))
    assert auto.channel_log_scale_[0] > 0 and auto.network_.encoder.embedding.series_normalization
    # only the wide channel is logged; the network reads every series standardised by its own level and spread
    both = EADCTClassifier(**FAST, options={"wide_scales": "auto"}).fit(X, y)
    assert both.channel_log_scale_[0] > 0 and both.channel_log_scale_[1] == 0
    assert both.network_.encoder.embedding.series_normalization
    # no wide channel: the fit without the option, bit for bit
    Xc, yc = make_panel()
    plain = EADCTClassifier(**FAST, options={"wide_scales": False}).fit(Xc, yc)
    quiet = EADCTClassifier(**FAST, options={"wide_scales": "auto"}).fit(Xc, yc)
    assert not quiet.wide_scale_channels_.any()
    np.testing.assert_array_equal(quiet.predict_proba(Xc), plain.predict_proba(Xc))
    # decided on fit's X only: predicting series of other scales changes nothing fitted
    flags = both.wide_scale_channels_.copy()
    both.predict(X * 1e6)
    np.testing.assert_array_equal(both.wide_scale_channels_, flags)


def test_it_serves_every_estimator_and_unequal_lengths():
    X, y = _appliances()
    reg = EADCTRegressor(**FAST, options={"wide_scales": "auto"}).fit(X, y.astype(float))
    assert reg.wide_scale_channels_.tolist() == [True, False] and np.isfinite(reg.predict(X)).all()
    rep = EADCTRepresentation(
        **{k: v for k, v in TINY.items() if k != "pretrain_epochs"}, options={"wide_scales": "auto"}
    ).fit(X)
    assert rep.wide_scale_channels_[0] and rep.transform(X).shape[0] == len(X)
    above = float(scale_spread(to_panel(X))[0] * 1.01)  # a threshold above the wide channel's spread: nowhere
    assert not EADCTRegressor(**FAST, options={"wide_scales": above}).fit(X, y.astype(float)).wide_scale_channels_.any()
    Xu, labels, _ = make_unequal()
    Xu = [x * 10.0 ** (4 * (i % 2)) for i, x in enumerate(Xu)]
    clf = EADCTClassifier(**FAST).fit(Xu, labels)  # the classifier's default
    assert clf.wide_scale_channels_.all() and clf.predict(Xu).shape == (len(Xu),)


def test_wide_scales_is_checked_auto_in_the_classifier_only_round_trips_and_loads_into_older_models(tmp_path):
    import eadct

    X, y = _appliances()
    assert EADCTClassifier().get_params()["options__wide_scales"] == 100.0  # a threshold of 10^2 (docs/accuracy.md)
    assert EADCTRegressor().get_params()["options__wide_scales"] is False
    assert EADCTRepresentation().get_params()["options__wide_scales"] is False
    assert eadct.PAPER_CONFIGURATION["options"]["wide_scales"] is False  # the paper's tables standardise channels only
    for bad in (True, 1, 1.0, 0.5, np.nan, np.inf, "wide"):
        with pytest.raises(ValueError, match="wide_scales must be False, 'auto' or a number above 1"):
            EADCTClassifier(**FAST, options={"wide_scales": bad}).fit(X, y)
    assert (
        not EADCTClassifier(**FAST, options={"wide_scales": np.bool_(False)}).fit(X, y).wide_scale_channels_.any()
    )  # a grid's
    clf = EADCTClassifier(**FAST).fit(X, y)
    assert clone(clf).get_params()["options__wide_scales"] == 100.0
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict_proba(X), clf.predict_proba(X))
    eadct.save(clf, tmp_path / "model.safetensors")
    np.testing.assert_array_equal(eadct.load(tmp_path / "model.safetensors").predict_proba(X), clf.predict_proba(X))
    fitted = EADCTClassifier(**FAST, options={"wide_scales": False}).fit(X, y)
    old = saved_without(fitted, "wide_scales", "wide_scale_channels_")  # saved before the option
    assert old.get_params()["options__wide_scales"] is False
    np.testing.assert_array_equal(old.predict_proba(X), fitted.predict_proba(X))


def test_a_number_is_the_spread_above_which_wide_scales_acts_and_decides_the_fit_as_auto_or_false_would():
    """``wide_scales=t``: where a channel's spread passes t the fit is the fit of "auto" on a channel it acts on, and
    where none passes it is the fit of False, to every bit (the classifier's candidate threshold of 10^2)."""
    X, y = _appliances()
    spread = scale_spread(to_panel(X))
    assert spread_threshold("auto") == SCALE_SPREAD and spread_threshold(False) is None
    assert spread_threshold(np.bool_(False)) is None and spread_threshold(100) == 100.0
    np.testing.assert_array_equal(wide_scale_channels(to_panel(X), spread[0] * 0.99), [True, False])
    np.testing.assert_array_equal(wide_scale_channels(to_panel(X), spread[0] * 1.01), [False, False])
    one = X[:, :1]
    below = EADCTClassifier(**FAST, options={"wide_scales": float(spread[0] * 0.99)}).fit(one, y)
    auto = EADCTClassifier(**FAST, options={"wide_scales": "auto"}).fit(one, y)
    assert below.wide_scale_channels_.tolist() == [True] and not below.input_differences_
    np.testing.assert_array_equal(below.predict_proba(one), auto.predict_proba(one))
    above = EADCTClassifier(**FAST, options={"wide_scales": float(spread[0] * 1.01)}).fit(one, y)
    plain = EADCTClassifier(**FAST, options={"wide_scales": False}).fit(one, y)
    assert not above.wide_scale_channels_.any() and above.input_differences_  # one plain channel: the differences
    np.testing.assert_array_equal(above.predict_proba(one), plain.predict_proba(one))
    assert clone(above).get_params()["options__wide_scales"] == float(spread[0] * 1.01)
