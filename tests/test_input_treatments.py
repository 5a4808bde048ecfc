"""The input's treatments read by the stem (``InputEmbedding``): the channels' first differences
(``input_differences``) and each series' own normalisation (``series_normalization``)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel, make_unequal, saved_without
from sklearn.base import clone

from eadct import EADCTClassifier, EADCTRegressor

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def test_input_differences_embedding_reads_scaled_first_differences():
    from eadct.networks import InputEmbedding

    torch.manual_seed(0)
    emb = InputEmbedding(2, 8, 10, dropout=0.0, differences=True).eval()
    assert emb.projection.in_features == 4 and torch.equal(emb.difference_scale, torch.ones(2))
    x = torch.randn(3, 10, 2)
    valid = torch.arange(10)[None, :] < torch.tensor([[10], [6], [1]])
    d = InputEmbedding.first_differences(x * valid.unsqueeze(-1), valid)
    assert torch.equal(d[:, 0], torch.zeros(3, 2)) and torch.equal(d[1, 6:], torch.zeros(4, 2))
    torch.testing.assert_close(d[0, 1:], x[0, 1:] - x[0, :-1])
    # the scale: 1 / std of the differences between real neighbouring steps, here of series 0 and 1
    emb.fit_difference_scale(x, valid)
    pairs = torch.cat([x[0, 1:] - x[0, :-1], x[1, 1:6] - x[1, :5]])
    torch.testing.assert_close(emb.difference_scale, 1 / pairs.double().std(dim=0, unbiased=False).float())
    emb.fit_difference_scale(torch.ones(2, 5, 2))  # constant channels keep 1
    assert torch.equal(emb.difference_scale, torch.ones(2))
    # a series embeds the same alone and padded in a batch
    emb.fit_difference_scale(x, valid)
    torch.testing.assert_close(emb(x, valid)[1, :6], emb(x[1:2, :6])[0])
    # the value at a step reaches the output only there and at the next step (its difference to it)
    changed = x.clone()
    changed[0, 4] += 1.0
    moved = (emb(changed) - emb(x)).abs().sum(dim=-1)[0] > 0
    assert moved.nonzero().flatten().tolist() == [4, 5]


def _check_stem_switch(clf, X, y, name: str, flag: str) -> None:
    """``clf``, fitted on ``X, y`` with the stem switch ``name`` on: clone refits it exactly, pickle keeps it, it
    predicts otherwise than the defaults, a model saved before the switch loads with it off (the embedding's
    ``flag`` False), and a value that is not a bool is a clear error."""
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), clf.predict_proba(X))
    off = EADCTClassifier(**FAST, options={name: False}).fit(X, y)
    assert not np.array_equal(off.predict_proba(X), clf.predict_proba(X))
    old = saved_without(off, name)
    assert old.get_params()[f"options__{name}"] is False and not getattr(old.network_.encoder.embedding, flag)
    with pytest.raises(ValueError, match=f"{name} must be True or False"):
        EADCTClassifier(options={name: "yes"}).fit(X, y)


def test_input_differences_fit_sets_the_scale_on_train_only_and_round_trips():
    X, y = make_panel(n=16)
    clf = EADCTClassifier(**FAST, options={"input_differences": True}).fit(X, y)
    emb = clf.network_.encoder.embedding
    assert emb.projection.in_features == 2 * X.shape[1]
    # the scale comes from the standardised TRAIN series the fit saw
    z = (np.asarray(X, dtype=np.float64) - clf.channel_mean_[None, :, None]) / clf.channel_std_[None, :, None]
    expected = 1 / np.diff(z, axis=2).transpose(1, 0, 2).reshape(X.shape[1], -1).std(axis=1)
    np.testing.assert_allclose(emb.difference_scale.numpy(), expected, rtol=1e-4)
    _check_stem_switch(clf, X, y, "input_differences", "differences")
    EADCTClassifier(**FAST, options={"input_differences": np.True_}).fit(X, y)  # a parameter grid's numpy bool


def test_input_differences_regressor_fits_unequal_lengths():
    X, _, target = make_unequal(lengths=(3, 15))
    reg = EADCTRegressor(**FAST, options={"input_differences": True}).fit(X, target)
    assert reg.predict(X).shape == (len(X),) and np.isfinite(reg.predict(X)).all()
    np.testing.assert_array_equal(clone(reg).fit(X, target).predict(X), reg.predict(X))


def test_series_normalization_embedding_reads_each_series_shape_and_level():
    from eadct.networks import InputEmbedding
    from eadct.networks.embedding import SERIES_STD_FLOOR

    torch.manual_seed(0)
    x = torch.randn(3, 10, 2) * torch.tensor([1.0, 5.0]) + torch.tensor([0.0, 3.0])
    x[2] = 7.0  # a flat series: shape 0, its level, the floor's log
    valid = torch.arange(10)[None, :] < torch.tensor([[10], [6], [4]])
    x = x * valid.unsqueeze(-1)
    z = InputEmbedding.normalized_series(x, valid)
    assert z.shape == (3, 10, 6) and torch.equal(z[1, 6:], torch.zeros(4, 6))
    real = x[1, :6].double()
    mean, std = real.mean(dim=0), real.std(dim=0, unbiased=False)
    torch.testing.assert_close(z[1, :6, :2].double(), (real - mean) / std)
    torch.testing.assert_close(z[1, :6, 2:4].double(), mean.expand(6, 2))
    torch.testing.assert_close(z[1, :6, 4:].double(), std.log().expand(6, 2))
    flat = [0.0, 0.0, 7.0, 7.0, math.log(SERIES_STD_FLOOR), math.log(SERIES_STD_FLOOR)]
    torch.testing.assert_close(z[2, :4], torch.tensor([flat] * 4))
    # the shape channels do not move when a series is shifted and scaled; the level channels take it all
    moved = InputEmbedding.normalized_series(3.0 * x[:1] + 2.0)
    torch.testing.assert_close(moved[..., :2], z[:1, :, :2], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(moved[..., 2:4], 3.0 * z[:1, :, 2:4] + 2.0)
    emb = InputEmbedding(2, 8, 10, dropout=0.0, differences=True, series_normalization=True).eval()
    assert emb.projection.in_features == 8
    torch.testing.assert_close(emb(x, valid)[1, :6], emb(x[1:2, :6])[0])  # alone or padded in a batch


def test_series_normalization_fits_round_trips_and_is_off_in_old_models():
    X, y = make_panel(n=16)
    X = X * np.linspace(1, 40, len(X))[:, None, None]  # levels far apart
    clf = EADCTClassifier(**FAST, options={"series_normalization": True}).fit(X, y)
    assert clf.network_.encoder.embedding.projection.in_features == 3 * X.shape[1]
    _check_stem_switch(clf, X, y, "series_normalization", "series_normalization")
    Xu, _, target = make_unequal(lengths=(3, 15))
    reg = EADCTRegressor(**FAST, options={"series_normalization": True, "input_differences": True}).fit(Xu, target)
    assert reg.predict(Xu).shape == (len(Xu),) and np.isfinite(reg.predict(Xu)).all()
    np.testing.assert_array_equal(clone(reg).fit(Xu, target).predict(Xu), reg.predict(Xu))
