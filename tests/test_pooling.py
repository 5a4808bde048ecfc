"""The poolings of the encoder's steps (``pool_steps``, ``pooled_width``): their shapes and padding, the segment
pooling and its ``n_segments``, their fits on series of unequal length."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel, make_unequal, saved_without
from sklearn.base import clone

from eadct import EADCTClassifier
from eadct.networks import POOLINGS, pool_steps, pooled_width

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


@pytest.mark.parametrize("how", [p for p in POOLINGS if p != "flatten"])
def test_pooling_shapes_and_padding(how):
    torch.manual_seed(0)
    h = torch.randn(3, 10, 4)
    valid = torch.arange(10)[None, :] < torch.tensor([[10], [7], [3]])
    h = h * valid.unsqueeze(-1)
    out = pool_steps(h, valid, how)
    assert out.shape == (3, pooled_width(how, 4))
    # a series pools the same alone (no padding) and padded in the batch
    torch.testing.assert_close(pool_steps(h[1:2, :7], None, how), out[1:2])


def test_segment_pooling_is_the_mean_of_each_quarter():
    h = torch.arange(8.0).reshape(1, 8, 1)
    out = pool_steps(h, None, "segments")
    torch.testing.assert_close(out, torch.tensor([[3.5, 0.5, 2.5, 4.5, 6.5]]))


def test_segment_count_sets_the_parts_and_the_head_width():
    h = torch.arange(8.0).reshape(1, 8, 1)
    torch.testing.assert_close(pool_steps(h, None, "segments", n_segments=2), torch.tensor([[3.5, 1.5, 5.5]]))
    assert pooled_width("segments", 4, n_segments=8) == 36 and pooled_width("mean", 4, n_segments=8) == 4
    # a series shorter than n_segments leaves parts empty (zeros), padded or not
    valid = torch.arange(8)[None, :] < 3
    out = pool_steps(h, valid, "segments", n_segments=8)
    torch.testing.assert_close(out, pool_steps(h[:, :3], None, "segments", n_segments=8))
    assert out.shape == (1, 9) and (out[0, 1:] != 0).sum() == 2  # parts of step 1 and step 2 (step 0 is 0)
    X, y, _ = make_unequal(lengths=(3, 15))
    clf = EADCTClassifier(**FAST, options={"n_segments": 8}).fit(X, y)
    assert clf.network_.task_head is not None and clf.transform(X).shape == (len(X), 9 * TINY["d_model"])
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), clf.predict_proba(X))
    with pytest.raises(ValueError, match="n_segments"):
        EADCTClassifier(options={"n_segments": 0}).fit(X, y)


def test_models_saved_before_n_segments_load_with_four():
    """A classifier saved before ``n_segments`` existed pooled 4 segments: it loads with 4 (not the
    classifier's default 8) and predicts as it did (its network is rebuilt from the upgraded state)."""
    X, y = make_panel(n=16)
    clf = EADCTClassifier(**FAST, options={"n_segments": 4}).fit(X, y)
    old = saved_without(clf, "n_segments")
    assert old.get_params()["options__n_segments"] == 4 and EADCTClassifier().get_params()["options__n_segments"] == 8
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))


@pytest.mark.parametrize("how", ["max", "segments"])
def test_poolings_fit_unequal_lengths_and_pickle(how):
    X, y, _ = make_unequal(lengths=(3, 15))
    clf = EADCTClassifier(**{**FAST, "pooling": how}).fit(X, y)
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)
    again = clone(clf).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(again, proba)  # deterministic with a seed
