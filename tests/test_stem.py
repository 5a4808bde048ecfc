"""``stem_kernel_size``: the input stem as a centred convolution over k steps (1: the paper's per-step Linear)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel, make_unequal, saved_without
from sklearn.base import clone

from eadct import PAPER_CONFIGURATION, EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.networks import InputEmbedding

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def test_stem_embedding_reads_k_centred_steps_and_ignores_padding():
    torch.manual_seed(0)
    emb = InputEmbedding(2, 8, 12, dropout=0.0, kernel_size=5).eval()
    assert isinstance(emb.projection, torch.nn.Conv1d) and emb.projection.kernel_size == (5,)
    x = torch.randn(3, 12, 2)
    valid = torch.arange(12)[None, :] < torch.tensor([[12], [7], [2]])
    out = emb(x, valid)
    assert out.shape == (3, 12, 8) and torch.equal(out[1, 7:], torch.zeros(5, 8))
    # a series embeds the same alone and padded in a batch: what lies past its end reads as 0
    torch.testing.assert_close(out[1, :7], emb(x[1:2, :7])[0])
    torch.testing.assert_close(out[2, :2], emb(x[2:3, :2])[0])
    # the value at a step reaches the output at the steps within 2 of it, and nowhere else
    changed = x.clone()
    changed[0, 6] += 1.0
    moved = (emb(changed) - emb(x)).abs().sum(dim=-1)[0] > 0
    assert moved.nonzero().flatten().tolist() == [4, 5, 6, 7, 8]
    # kernel 1 is the per-step Linear of the paper's stem (state dicts as before)
    assert isinstance(InputEmbedding(2, 8, 12).projection, torch.nn.Linear)


def test_stem_kernel_size_fits_round_trips_and_is_one_in_old_models():
    X, y = make_panel(n=16)
    clf = EADCTClassifier(**FAST, stem_kernel_size=5).fit(X, y)
    assert clf.network_.encoder.embedding.projection.kernel_size == (5,)
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), clf.predict_proba(X))
    assert not np.array_equal(EADCTClassifier(**FAST).fit(X, y).predict_proba(X), clf.predict_proba(X))
    old = saved_without(EADCTClassifier(**FAST).fit(X, y), "stem_kernel_size")
    assert old.stem_kernel_size == 1 and isinstance(old.network_.encoder.embedding.projection, torch.nn.Linear)
    for bad in (0, 4, 2.0, True):
        with pytest.raises(ValueError, match="stem_kernel_size must be a positive odd int"):
            EADCTClassifier(stem_kernel_size=bad).fit(X, y)


def test_stem_kernel_size_serves_unequal_lengths_and_every_estimator():
    X, labels, target = make_unequal(lengths=(3, 15))
    reg = EADCTRegressor(**FAST, stem_kernel_size=9, input_differences=False).fit(X, target)
    assert reg.predict(X).shape == (len(X),) and np.isfinite(reg.predict(X)).all()
    clf = EADCTClassifier(**FAST, stem_kernel_size=9, input_differences=True).fit(X, labels)
    assert clf.network_.encoder.embedding.projection.in_channels == 2 * X[0].shape[0]
    rep = EADCTRepresentation(**{k: v for k, v in FAST.items() if k != "pretrain_epochs"}, stem_kernel_size=3)
    assert rep.fit(X).transform(X).shape[0] == len(X)
    assert PAPER_CONFIGURATION.get("stem_kernel_size", 1) == 1


def test_stem_kernel_size_auto_reads_nine_steps_of_one_channel_and_one_of_several():
    from eadct.networks import EncoderConfig
    from eadct.networks.config import AUTO_STEM_KERNEL, auto_stem_kernel

    assert auto_stem_kernel(1) == AUTO_STEM_KERNEL == 9 and auto_stem_kernel(2) == 1
    assert EncoderConfig(n_channels=1, max_len=10, stem_kernel_size="auto").stem_kernel_size == 9
    assert EncoderConfig(n_channels=3, max_len=10, stem_kernel_size="auto").stem_kernel_size == 1
    X, y = make_panel(n=16)
    # several channels: "auto" is the per-step stem, the fit the same to every bit
    auto = EADCTClassifier(**FAST, stem_kernel_size="auto").fit(X, y)
    np.testing.assert_array_equal(
        auto.predict_proba(X), EADCTClassifier(**FAST, stem_kernel_size=1).fit(X, y).predict_proba(X)
    )
    one = EADCTClassifier(**FAST, stem_kernel_size="auto").fit(X[:, :1], y)
    assert one.network_.encoder.embedding.projection.kernel_size == (9,)
