"""The encoder's settings an estimator takes in ``options``: the attention's downsampling (``attention_downsample``,
its "auto" rule and that rule's cap ``attention_tokens``) and the dilated convolutions' ``conv_kernel_size``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, check_option_fit, make_panel, saved_without
from sklearn.base import clone

from eadct import EADCTClassifier
from eadct.networks import EncoderConfig
from eadct.networks.config import AUTO_ATTENTION_TOKENS, auto_downsample

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def test_auto_attention_downsample():
    assert auto_downsample(AUTO_ATTENTION_TOKENS) == 1 and auto_downsample(AUTO_ATTENTION_TOKENS + 1) == 2
    assert EncoderConfig(n_channels=2, max_len=315, attention_downsample="auto").attention_downsample == 3
    X = np.random.default_rng(0).normal(size=(12, 2, 2 * AUTO_ATTENTION_TOKENS + 5))
    y = np.arange(12) % 2
    clf = EADCTClassifier(**FAST, options={"attention_downsample": "auto"}).fit(X, y)
    assert clf.network_.encoder.layers[0].attention.downsample == 3
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict(X), clf.predict(X))
    with pytest.raises(ValueError, match="attention_downsample must be an int >= 1 or 'auto'"):
        EADCTClassifier(**FAST, options={"attention_downsample": "fast"}).fit(X, y)


def test_attention_tokens_is_the_cap_of_auto():
    """``attention_tokens`` is the cap of ``attention_downsample="auto"``'s rule (an int factor ignores it); the
    option changes the fit, is deterministic, clones and pickles, is checked, and a model saved before it existed
    loads with the cap it was fitted under (128) and predicts as before."""
    assert EncoderConfig(n_channels=2, max_len=315, attention_tokens=64).attention_downsample == 5
    assert EncoderConfig(n_channels=2, max_len=64, attention_tokens=64).attention_downsample == 1
    fixed = EncoderConfig(n_channels=2, max_len=315, attention_downsample=2, attention_tokens=64)
    assert fixed.attention_downsample == 2
    X, y = make_panel(n=16, length=40)
    check_option_fit(EADCTClassifier, FAST, {"options": {"attention_tokens": 16}}, X, y)
    clf = EADCTClassifier(**FAST, options={"attention_tokens": 16}).fit(X, y)
    assert clf.network_.encoder.layers[0].attention.downsample == 3
    for bad in (0, 2.5, "64"):
        with pytest.raises(ValueError, match="attention_tokens must be an int >= 1"):
            EADCTClassifier(**FAST, options={"attention_tokens": bad}).fit(X, y)
    # saved before the option: fitted under "auto"'s cap of 128, which pools these 140 steps by 2
    X, y = make_panel(n=12, length=AUTO_ATTENTION_TOKENS + 12)
    clf = EADCTClassifier(**FAST).fit(X, y)
    old = saved_without(clf, "attention_tokens")
    assert old.get_params()["options__attention_tokens"] == AUTO_ATTENTION_TOKENS == 128
    assert old.network_.encoder.layers[0].attention.downsample == 2
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))


def test_conv_kernel_size_sets_the_dilated_convolutions_and_old_models_load_with_three():
    X, y = make_panel(n=16)
    clf = EADCTClassifier(**FAST, options={"conv_kernel_size": 5}).fit(X, y)
    kernels = {m.kernel_size[0] for m in clf.network_.modules() if isinstance(m, torch.nn.Conv1d) and m.dilation[0]}
    assert 5 in kernels and 3 not in kernels
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), clf.predict_proba(X))
    old = saved_without(EADCTClassifier(**FAST).fit(X, y), "conv_kernel_size")
    assert old.get_params()["options__conv_kernel_size"] == 3
    with pytest.raises(ValueError, match="conv_kernel_size must be a positive int"):
        EADCTClassifier(options={"conv_kernel_size": 0}).fit(X, y)
