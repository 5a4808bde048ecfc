"""``EADCTClassifier(options={"input_differences": "auto"})``: the first differences where X has one channel and
``wide_scales`` acts on none; elsewhere the fit without them, to every bit."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from conftest import TINY, make_panel, make_unequal
from sklearn.base import clone

from eadct import EADCTClassifier

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def _fits(X, y, **options):
    """The fits with "auto" and with each plain value of ``input_differences`` (``options``: other fields)."""
    fit = lambda v: EADCTClassifier(**FAST, options={**options, "input_differences": v}).fit(X, y)  # noqa: E731
    return {v: fit(v) for v in ("auto", False, True)}


def _same(a, b, X) -> bool:
    return np.array_equal(a.predict_proba(X), b.predict_proba(X))


def test_auto_reads_the_differences_of_one_channel():
    X, y = make_panel(n=20, channels=1)
    fits = _fits(X, y)
    auto = fits["auto"]
    assert auto.input_differences_ is True and auto.get_params()["options__input_differences"] == "auto"
    assert _same(auto, fits[True], X) and not _same(auto, fits[False], X)
    assert auto.network_.encoder.embedding.differences is True  # the stem reads them


def test_auto_is_the_plain_fit_with_several_channels_and_on_unequal_lengths():
    X, y = make_panel(n=20, channels=3)
    fits = _fits(X, y)
    assert fits["auto"].input_differences_ is False and _same(fits["auto"], fits[False], X)
    ragged, labels, _ = make_unequal(n=20, channels=1)  # one channel, unequal lengths: the differences
    auto = EADCTClassifier(**FAST, options={"input_differences": "auto"})
    plain = EADCTClassifier(**FAST, options={"input_differences": True})
    assert auto.fit(ragged, labels).input_differences_ is True and _same(auto, plain.fit(ragged, labels), ragged)


def test_auto_leaves_a_channel_of_wide_scales_without_the_differences():
    """Series whose scales span six orders of magnitude: ``wide_scales="auto"`` reads them series by series and the
    differences are not added; with ``wide_scales=False`` the rule sees one plain channel and adds them."""
    X, y = make_panel(n=20, channels=1)
    X = X * 10.0 ** np.random.default_rng(1).uniform(-3, 3, size=(20, 1, 1))
    wide = _fits(X, y, wide_scales="auto")
    assert wide["auto"].wide_scale_channels_.tolist() == [True]
    assert wide["auto"].input_differences_ is False and _same(wide["auto"], wide[False], X)
    narrow = EADCTClassifier(**FAST, options={"wide_scales": False, "input_differences": "auto"}).fit(X, y)
    assert narrow.input_differences_ is True


def test_auto_clones_pickles_and_is_deterministic():
    X, y = make_panel(n=20, channels=1)
    est = EADCTClassifier(**FAST, options={"input_differences": "auto"}).fit(X, y)
    assert clone(est).get_params()["options__input_differences"] == "auto"
    loaded = pickle.loads(pickle.dumps(est))
    assert loaded.input_differences_ is True and _same(loaded, est, X)
    assert _same(clone(est).fit(X, y), est, X)


def test_a_bad_value_names_the_parameter_and_what_it_takes():
    X, y = make_panel(n=20, channels=1)
    with pytest.raises(ValueError, match=r"input_differences must be True or False \("):
        EADCTClassifier(**FAST, options={"input_differences": "yes"}).fit(X, y)


def test_auto_is_the_classifiers_default_and_the_paper_reads_the_values_alone():
    import eadct

    assert EADCTClassifier().get_params()["options__input_differences"] == "auto"
    assert 'default="auto"' in EADCTClassifier.__doc__.split("``input_differences`` :")[1].split("\n")[0]
    for task in ("classification", "regression"):
        assert eadct.paper_configuration(task)["options"]["input_differences"] is False
