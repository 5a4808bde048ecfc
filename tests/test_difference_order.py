"""``difference_order``: the input stem's second differences beside the first (docs/model.md)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, make_unequal, saved_without
from sklearn.base import clone

from eadct import EADCTRegressor
from eadct.networks import InputEmbedding

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def _curves(n=24, length=16, seed=0):
    rng = np.random.default_rng(seed)
    X = np.cumsum(rng.normal(size=(n, 2, length)), axis=2)
    return X, X[:, 0].sum(axis=1) + rng.normal(size=n)


def test_second_differences_are_zero_where_two_real_predecessors_are_missing():
    torch.manual_seed(0)
    x = torch.randn(3, 10, 2)
    valid = torch.arange(10)[None, :] < torch.tensor([[10], [6], [2]])
    x = x * valid.unsqueeze(-1)
    d = InputEmbedding.difference_orders(x, valid, 2)
    assert d.shape == (3, 10, 4)
    torch.testing.assert_close(d[..., :2], InputEmbedding.first_differences(x, valid))
    torch.testing.assert_close(d[0, 2:, 2:], x[0, 2:] - 2 * x[0, 1:-1] + x[0, :-2])
    torch.testing.assert_close(d[1, 2:6, 2:], x[1, 2:6] - 2 * x[1, 1:5] + x[1, :4])
    assert torch.equal(d[:, :2, 2:], torch.zeros(3, 2, 2))  # the first two steps of every series
    assert torch.equal(d[1, 6:], torch.zeros(4, 4)) and torch.equal(d[2, 2:], torch.zeros(8, 4))  # padding
    assert torch.equal(InputEmbedding.difference_orders(x, valid, 1), InputEmbedding.first_differences(x, valid))


def test_order_two_scales_each_order_on_its_own_and_keeps_the_first_orders_scale():
    torch.manual_seed(1)
    x = torch.randn(3, 12, 2) * torch.tensor([1.0, 4.0])
    valid = torch.arange(12)[None, :] < torch.tensor([[12], [7], [3]])
    one = InputEmbedding(2, 8, 12, dropout=0.0, differences=True)
    two = InputEmbedding(2, 8, 12, dropout=0.0, differences=True, difference_order=2)
    assert two.projection.in_features == 6 and two.difference_scale.shape == (4,)
    one.fit_difference_scale(x, valid)
    two.fit_difference_scale(x, valid)
    assert torch.equal(two.difference_scale[:2], one.difference_scale)
    second = torch.cat([x[i, 2:n] - 2 * x[i, 1 : n - 1] + x[i, : n - 2] for i, n in enumerate((12, 7, 3))])
    torch.testing.assert_close(two.difference_scale[2:], 1 / second.double().std(dim=0, unbiased=False).float())
    # without input_differences the order changes nothing: no differences, no buffer
    plain = InputEmbedding(2, 8, 12, differences=False, difference_order=2)
    assert plain.projection.in_features == 2 and not hasattr(plain, "difference_scale")
    # the value at a step reaches the output there and at the next two steps only
    two.eval()
    changed = x.clone()
    changed[0, 4] += 1.0
    moved = (two(changed) - two(x)).abs().sum(dim=-1)[0] > 0
    assert moved.nonzero().flatten().tolist() == [4, 5, 6]


def test_difference_order_fits_round_trips_and_is_off_without_input_differences():
    X, y = _curves()
    reg = EADCTRegressor(**FAST, input_differences=True, difference_order=2).fit(X, y)
    assert reg.network_.encoder.embedding.projection.in_features == 3 * X.shape[1]
    np.testing.assert_array_equal(clone(reg).fit(X, y).predict(X), reg.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg)).predict(X), reg.predict(X))
    first = EADCTRegressor(**FAST, input_differences=True).fit(X, y)
    assert not np.array_equal(first.predict(X), reg.predict(X))
    # without the differences the order is not read: the same fit as the order 1
    off = dict(FAST, input_differences=False, random_state=0)
    np.testing.assert_array_equal(
        EADCTRegressor(**off, difference_order=2).fit(X, y).predict(X), EADCTRegressor(**off).fit(X, y).predict(X)
    )
    # a model saved before the option existed read the first differences only
    old = saved_without(first, "difference_order")
    assert old.difference_order == 1 and old.network_.encoder.embedding.difference_order == 1
    np.testing.assert_array_equal(old.predict(X), first.predict(X))
    for bad in (0, 3, 1.5, True):
        with pytest.raises(ValueError, match="difference_order must be 1 or 2"):
            EADCTRegressor(difference_order=bad).fit(X, y)


def test_difference_order_two_fits_unequal_lengths_down_to_three_steps():
    X, _, target = make_unequal(lengths=(3, 15))
    reg = EADCTRegressor(**FAST, input_differences=True, difference_order=2).fit(X, target)
    assert reg.predict(X).shape == (len(X),) and np.isfinite(reg.predict(X)).all()
    np.testing.assert_array_equal(clone(reg).fit(X, target).predict(X), reg.predict(X))


def test_masked_values_leave_no_jump_in_the_differences():
    torch.manual_seed(2)
    x = torch.randn(2, 12, 1) + 3.0
    valid = torch.arange(12)[None, :] < torch.tensor([[12], [9]])
    known = torch.ones(2, 12, 1, dtype=torch.bool)
    known[:, 3:5] = False  # a masked run at steps 3 and 4, which pretraining sets to 0
    masked = x.masked_fill(~known, 0.0) * valid.unsqueeze(-1)
    d = InputEmbedding.difference_orders(masked, valid, 2, known)
    clean = InputEmbedding.difference_orders(x * valid.unsqueeze(-1), valid, 2)
    first_gone, second_gone = [3, 4, 5], [3, 4, 5, 6]
    assert torch.equal(d[:, first_gone, 0], torch.zeros(2, 3)) and torch.equal(d[:, second_gone, 1], torch.zeros(2, 4))
    keep_first = [t for t in range(12) if t not in first_gone]
    keep_second = [t for t in range(12) if t not in second_gone]
    torch.testing.assert_close(d[:, keep_first, 0], clean[:, keep_first, 0])
    torch.testing.assert_close(d[:, keep_second, 1], clean[:, keep_second, 1])
    # without the mask the jumps to 0 are there
    assert InputEmbedding.difference_orders(masked, valid, 2)[:, 3, 0].abs().min() > 1.0
