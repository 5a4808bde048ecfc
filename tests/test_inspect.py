"""Looking inside (issue 16): attention maps, fitted representations, AvgWCD and the plotting functions."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, TINY_REPR, make_panel, make_unequal
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.estimators import _inspect
from eadct.metrics import average_within_class_distance

# two blocks (four layers) so that maps evolve through a chain; step-level maps
MAPS = {**TINY, "n_blocks": 2, "max_epochs": 2, "options": {"attention_downsample": 1}}


@pytest.fixture(scope="module")
def evolving():
    X, y = make_panel(n=24, length=20)
    return EADCTClassifier(**MAPS).fit(X, y), X, y


def _standardized(est, x):
    """One series ``(C, L)`` as the fitted network sees it: ``(1, L, C)`` float32."""
    z = (x.T - est.channel_mean_) / est.channel_std_
    return torch.from_numpy(z.astype(np.float32)).unsqueeze(0)


def test_weights_rows_sum_to_one_per_series_of_its_own_length(evolving):
    est, X, _ = evolving
    series = [X[0][:, :7], X[1], X[2][:, :13]]
    maps = est.attention_maps(series)
    assert [m.shape for m in maps] == [(4, 2, 7, 7), (4, 2, 20, 20), (4, 2, 13, 13)]
    for m in maps:
        assert m.dtype == np.float32 and np.all(m >= 0)
        np.testing.assert_allclose(m.sum(axis=-1), 1.0, atol=1e-5)


def test_a_series_has_the_same_maps_alone_and_padded_in_a_batch(evolving):
    est, X, _ = evolving
    short, long_ = X[0][:, :11], X[1]
    alone = est.attention_maps([short], kind="logits")[0]
    batch = torch.cat([_standardized(est, long_), torch.nn.functional.pad(_standardized(est, short), (0, 0, 0, 9))])
    valid = torch.arange(20).unsqueeze(0) < torch.tensor([[20], [11]])
    with torch.no_grad():
        padded = [logits[1, :, :11, :11].numpy() for logits in est.network_.encoder.attention_logits(batch, valid)]
    np.testing.assert_allclose(alone, np.stack(padded), atol=1e-5)
    weights = est.attention_maps([short])[0]
    np.testing.assert_allclose(weights, torch.softmax(torch.from_numpy(alone), -1).numpy(), atol=1e-6)


def test_first_layer_logits_are_the_scaled_scores(evolving):
    est, X, _ = evolving
    logits = est.attention_maps(X[:1], kind="logits", layers=[0])[0][0]
    attention = est.network_.encoder.layers[0].attention
    with torch.no_grad():
        h = est.network_.encoder.embedding(_standardized(est, X[0]), None)
        q, k, _ = attention.qkv(h).view(1, 20, 3, attention.n_heads, attention.d_head).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-1, -2) / math.sqrt(attention.d_head))[0].numpy()
    np.testing.assert_allclose(logits, scores, atol=1e-5)


def test_logits_of_each_layer_are_what_the_next_one_receives(evolving):
    est, X, _ = evolving
    logits = est.attention_maps(X[:1], kind="logits")[0]
    received = {}
    hooks = [
        layer.attention.register_forward_pre_hook(lambda m, args, i=i: received.__setitem__(i, args[1]))
        for i, layer in enumerate(est.network_.encoder.layers)
    ]
    try:
        est.predict(X[:1])
    finally:
        for hook in hooks:
            hook.remove()
    assert received[0] is None  # the first layer seeds the chain
    for i in range(1, 4):
        np.testing.assert_allclose(logits[i - 1], received[i][0].numpy(), atol=1e-5)
    assert not np.allclose(logits[1], logits[2], atol=1e-3)  # the maps do change from layer to layer


def test_layers_choose_and_order(evolving):
    est, X, _ = evolving
    every = est.attention_maps(X[:2])
    picked = est.attention_maps(X[:2], layers=[3, 1])
    np.testing.assert_array_equal(picked[1], every[1][[3, 1]])
    np.testing.assert_array_equal(est.attention_maps(X[:1], layers=-1)[0], every[0][[3]])
    for bad in ([4], [0.5], [], "all"):
        with pytest.raises(ValueError, match="layers"):
            est.attention_maps(X[:1], layers=bad)
    with pytest.raises(ValueError, match="kind must be one of"):
        est.attention_maps(X[:1], kind="probabilities")


@pytest.mark.parametrize(
    "params", [{"architecture": "lstm"}, {"architecture": "dilated-conv"}, {"attention_ratio": 0.0}]
)
def test_no_attention_is_a_clear_error(params):
    X, y = make_panel(n=12, length=10)
    est = EADCTClassifier(**{**TINY, "max_epochs": 1, "pretrain_epochs": 0, **params}).fit(X, y)
    with pytest.raises(ValueError, match="has no attention maps"):
        est.attention_maps(X[:1])


def test_unfitted_is_not_fitted_error():
    with pytest.raises(NotFittedError):
        EADCTClassifier(**TINY).attention_maps(np.zeros((1, 2, 8)))


def test_downsampled_maps_are_over_tokens_and_say_so():
    X, y = make_panel(n=12, length=15)
    est = EADCTClassifier(**{**TINY, "max_epochs": 1, "options": {"attention_downsample": 4}}).fit(X, y)
    with pytest.warns(UserWarning, match="attention_downsample=4"):
        maps = est.attention_maps(X[:1])
    assert maps[0].shape == (2, 2, 4, 4)


def test_maps_that_do_not_fit_in_memory_are_refused(evolving, monkeypatch):
    est, X, _ = evolving
    monkeypatch.setattr(_inspect, "available_memory_bytes", lambda device: 1000)
    with pytest.raises(ValueError, match=r"layers=\[0, 1\]"):
        est.attention_maps(X[:2])


def test_maps_of_regressor_and_representation_from_unequal_lists():
    X, _, target = make_unequal(n=12)
    reg = EADCTRegressor(**{**TINY, "max_epochs": 1, "options": {"attention_downsample": 1}}).fit(X, target)
    rep = EADCTRepresentation(**{**TINY_REPR, "max_epochs": 1, "options": {"attention_downsample": 1}}).fit(X)
    for est in (reg, rep):
        maps = est.attention_maps(X[:3])
        assert [m.shape[-1] for m in maps] == [x.shape[1] for x in X[:3]]


@pytest.mark.parametrize("pooling, factor", [("mean", 1), ("max", 1), ("segments", 9)])  # 8 segments
def test_supervised_transform_is_the_head_input(pooling, factor):
    X, y = make_panel(n=12, length=12)
    clf = EADCTClassifier(**{**TINY, "max_epochs": 1, "pooling": pooling}).fit(X, y)
    Z = clf.transform(X)
    assert Z.shape == (12, factor * TINY["d_model"])
    with torch.no_grad():
        head = clf.network_.task_head(torch.from_numpy(Z.astype(np.float32))).numpy()
    np.testing.assert_allclose(head, clf._forward(X), atol=1e-4)  # the head applied to Z gives the outputs
    np.testing.assert_array_equal(Z, clone(clf).fit(X, y).transform(X))  # deterministic
    np.testing.assert_array_equal(Z, pickle.loads(pickle.dumps(clf)).transform(X))


def test_ensemble_transform_is_the_first_member():
    X, y = make_panel(n=12, length=12)
    ens = EADCTClassifier(**{**TINY, "max_epochs": 1, "n_estimators": 2}).fit(X, y)
    with torch.no_grad():
        first = ens.networks_[0].represent(torch.stack([_standardized(ens, x)[0] for x in X])).numpy()
    np.testing.assert_allclose(ens.transform(X), first, atol=1e-5)
    assert ens.attention_maps(X[:1])[0].shape == (2, 2, 12, 12)


def test_average_within_class_distance_by_hand():
    Z = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 10.0], [10.0, 13.0], [10.0, 7.0]])
    y = np.array(["a", "a", "b", "b", "b"])
    # class a: centre (1, 0), distances 1, 1; class b: centre (10, 10), distances 0, 3, 3
    assert average_within_class_distance(Z, y) == pytest.approx(8.0 / 5)
    centre = Z.mean(axis=0)
    spread = np.mean([np.hypot(*(z - centre)) for z in Z])
    assert average_within_class_distance(Z, y, normalize=True) == pytest.approx(1.6 / spread)
    assert average_within_class_distance(3 * Z, y, normalize=True) == pytest.approx(1.6 / spread)
    assert average_within_class_distance(Z, np.zeros(5), normalize=True) == pytest.approx(1.0)
    for bad_Z, bad_y in ((Z[:, 0], y), (Z, y[:3]), (np.full((2, 2), np.nan), y[:2]), (Z[:0], y[:0])):
        with pytest.raises(ValueError):
            average_within_class_distance(bad_Z, bad_y)


def test_warnings_name_the_users_line_once_per_fit():
    import warnings

    from sklearn.model_selection import cross_val_score

    X, y = make_panel(n=12, length=8)
    tiny = {**TINY, "max_epochs": 1, "pretrain_epochs": 0, "validation_fraction": 0.1}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        EADCTClassifier(**tiny).fit(X, y)  # 4 series a class: validation_fraction=0.1 holds out none
    held_out = [w for w in caught if "holds out no series" in str(w.message)]
    assert held_out and {w.filename for w in held_out} == {__file__}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # Python's default: once per message and line
        cross_val_score(EADCTClassifier(**tiny), X, y, cv=2)
    held_out = [w for w in caught if "holds out no series" in str(w.message)]
    # once per fit (scikit-learn resets the warning filters for each fold, so Python cannot fold them into one)
    # and at the line that called cross_val_score, not inside scikit-learn
    assert len(held_out) == 2 and {w.filename for w in held_out} == {__file__}
