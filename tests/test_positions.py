"""``positional_encoding``: the learned position table (the paper's) or fixed sine and cosine waves."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel, make_unequal, saved_without
from sklearn.base import clone

from eadct import PAPER_CONFIGURATION, EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.networks import InputEmbedding
from eadct.networks.embedding import sinusoidal_positions
from eadct.tables import REFERENCE_DEFAULTS

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def test_sinusoidal_positions_are_vaswanis_waves_at_any_length():
    table = sinusoidal_positions(50, 8)
    assert table.shape == (50, 8) and table.dtype == torch.float32
    t, i = 7, 1  # the pair of columns 2i, 2i + 1
    angle = t / 10000 ** (2 * i / 8)
    assert table[t, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
    assert table[t, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)
    # a longer table starts with the shorter one: the positions do not depend on the series' length
    torch.testing.assert_close(sinusoidal_positions(80, 8)[:50], table)
    assert sinusoidal_positions(4, 7).shape == (4, 7)  # an odd width keeps its last sine column


def test_sinusoidal_embedding_has_no_position_parameters_and_ignores_padding():
    emb = InputEmbedding(2, 8, 12, dropout=0.0, positional_encoding="sinusoidal").eval()
    assert not hasattr(emb, "position") and "position" not in dict(emb.named_parameters())
    x = torch.randn(3, 20, 2)  # longer than max_len: the waves go on, nothing is reused
    valid = torch.arange(20)[None, :] < torch.tensor([[20], [7], [2]])
    out = emb(x, valid)
    assert out.shape == (3, 20, 8) and torch.equal(out[1, 7:], torch.zeros(13, 8))
    torch.testing.assert_close(out[1, :7], emb(x[1:2, :7])[0])
    torch.testing.assert_close(out[0] - emb.projection(x[:1])[0] * emb.scale, sinusoidal_positions(20, 8))
    with pytest.raises(ValueError, match="positional_encoding must be 'learned', 'learned-sinusoidal' or 'sinusoidal'"):
        InputEmbedding(2, 8, 12, positional_encoding="rotary")
    # "learned-sinusoidal": the learned table, started as the waves
    torch.testing.assert_close(
        InputEmbedding(2, 8, 12, positional_encoding="learned-sinusoidal").position.detach(),
        sinusoidal_positions(12, 8),
    )


def test_positional_encoding_fits_round_trips_and_is_learned_in_old_models():
    X, y = make_panel(n=16)
    clf = EADCTClassifier(**FAST, options={"positional_encoding": "sinusoidal"}).fit(X, y)
    assert clf.network_.encoder.embedding.positional_encoding == "sinusoidal"
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), clf.predict_proba(X))
    learned = EADCTClassifier(**FAST).fit(X, y)
    assert learned.get_params()["options__positional_encoding"] == "learned"
    assert not np.array_equal(learned.predict_proba(X), clf.predict_proba(X))
    n_params = sum(p.numel() for p in learned.network_.parameters())
    assert n_params - sum(p.numel() for p in clf.network_.parameters()) == learned.network_.encoder.config.max_len * (
        learned.network_.encoder.config.d_model
    )
    old = saved_without(learned, "positional_encoding")
    assert old.get_params()["options__positional_encoding"] == "learned"
    np.testing.assert_array_equal(old.predict_proba(X), learned.predict_proba(X))
    started = EADCTClassifier(**FAST, options={"positional_encoding": "learned-sinusoidal"}).fit(X, y)
    config, table = started.network_.encoder.config, started.network_.encoder.embedding.position
    start = sinusoidal_positions(config.max_len, config.d_model)
    assert table.requires_grad and table.shape == start.shape and not torch.equal(table.detach(), start)  # trained
    assert not np.array_equal(started.predict_proba(X), learned.predict_proba(X))
    for bad in ("sine", True, None):
        with pytest.raises(
            ValueError, match="positional_encoding must be 'learned', 'learned-sinusoidal' or 'sinusoidal'"
        ):
            EADCTClassifier(options={"positional_encoding": bad}).fit(X, y)


def test_positional_encoding_serves_unequal_lengths_and_every_estimator():
    X, labels, target = make_unequal(lengths=(3, 15))
    reg = EADCTRegressor(**FAST, options={"positional_encoding": "sinusoidal", "input_differences": False})
    reg.fit(X, target)
    assert reg.predict(X).shape == (len(X),) and np.isfinite(reg.predict(X)).all()
    clf = EADCTClassifier(**FAST, options={"positional_encoding": "sinusoidal"}).fit(X, labels)
    longer = [np.concatenate([s, s], axis=1) for s in X[:2]]
    with pytest.warns(UserWarning, match="sinusoidal positions that the network never trained on"):
        assert clf.predict(longer).shape == (2,)
    rep = EADCTRepresentation(
        **{k: v for k, v in FAST.items() if k != "pretrain_epochs"}, options={"positional_encoding": "sinusoidal"}
    )
    assert rep.fit(X).transform(X).shape[0] == len(X)
    paper = {**PAPER_CONFIGURATION, **(PAPER_CONFIGURATION.get("options") or {})}
    assert paper.get("positional_encoding", "learned") == "learned"
    assert REFERENCE_DEFAULTS["positional_encoding"] == "learned"
