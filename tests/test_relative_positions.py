"""``relative_positions``: a learned bias of each attention head for each key-query offset, added to the logits."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import (
    TINY,
    check_checked_and_old_models_load,
    check_option_fit,
    check_resumes_exactly,
    make_panel,
    make_unequal,
)

from eadct import EADCTClassifier, EADCTRegressor
from eadct.networks import EADCTEncoder, EncoderConfig
from eadct.networks.attention import MapSettings, chunked_map_path, map_block

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def _encoder(**kw):
    cfg = {**dict(n_channels=3, max_len=24, d_model=16, n_heads=2, n_blocks=2, attention_ratio=0.5, d_ff=16), **kw}
    torch.manual_seed(0)
    return EADCTEncoder(EncoderConfig(**cfg)).eval()


def test_a_table_per_layer_of_the_longest_series_tokens_started_at_zero():
    encoder = _encoder(relative_positions=True, attention_downsample=5)
    tokens = math.ceil(24 / 5)
    for layer in encoder.layers:
        table = layer.attention.position_bias
        assert table.shape == (2, 2 * tokens - 1) and not table.any()
    assert _encoder().layers[0].attention.position_bias is None
    # started at 0 and drawing no random numbers: an untrained encoder is the one without the option
    x = torch.randn(4, 24, 3)
    torch.testing.assert_close(_encoder(relative_positions=True)(x), _encoder()(x))


def test_the_bias_reads_the_offset_and_clips_it_past_the_table():
    attention = _encoder(relative_positions=True, max_len=4).layers[1].attention
    with torch.no_grad():
        attention.position_bias.copy_(torch.arange(14.0).view(2, 7))  # offsets -3..3 of two heads
    bias = attention.relative_bias(6)
    for i in range(6):
        for j in range(6):
            offset = min(3, max(-3, j - i))
            assert bias[0, i, j] == offset + 3 and bias[1, i, j] == 7 + offset + 3


def test_the_first_layer_logits_are_the_scores_plus_the_bias_and_later_layers_mix_it():
    with_bias = _encoder(relative_positions=True, dropout=0.0)
    plain = _encoder(dropout=0.0)
    with torch.no_grad():
        for layer in with_bias.layers:
            layer.attention.position_bias.normal_()
    x = torch.randn(2, 24, 3)
    logits = list(with_bias.attention_logits(x))
    bias0 = with_bias.layers[0].attention.relative_bias(24)
    # layer 0 sees the same input in both encoders: its logits differ by the bias exactly
    torch.testing.assert_close(logits[0], next(iter(plain.attention_logits(x))) + bias0)
    assert not torch.allclose(with_bias(x), plain(x))


@pytest.mark.parametrize("elements", [None, 4 * 23 * 7])  # 1 and 15 blocks
def test_the_blocked_path_matches_the_full_one_with_the_bias_and_its_gradient(elements):
    torch.manual_seed(0)
    shapes = [(3, 4, 23, 5)] * 3 + [(3, 4, 23, 23), (4, 4, 3, 3), (4,), (4, 23, 23)]
    q, k, v, prev, w, b, position = (torch.randn(*s, dtype=torch.float64, requires_grad=True) for s in shapes)
    valid = torch.ones(3, 23, dtype=torch.bool)
    valid[1, 15:] = False
    settings = MapSettings(alpha=0.5, beta=0.3, training=True, block_elements=elements)
    tensors = dict(previous=prev, valid=valid, weight=w, bias=b, position=position)
    h1, l1 = map_block(q, k, v, **tensors, settings=settings)
    h2, l2 = chunked_map_path(q, k, v, **tensors, settings=settings)
    torch.testing.assert_close(torch.nan_to_num(h2), torch.nan_to_num(h1))
    torch.testing.assert_close(l2, l1)
    gh, gl = torch.randn_like(h1) * valid[:, None, :, None], torch.randn_like(l1)
    leaves = (q, k, v, prev, w, b, position)
    full = torch.autograd.grad([h1, l1], leaves, [gh, gl])
    blocked = torch.autograd.grad([h2, l2], leaves, [gh, gl])
    for g1, g2 in zip(full, blocked, strict=True):
        torch.testing.assert_close(g2, g1)
    assert full[-1].abs().sum() > 0


def test_plain_attention_with_the_bias_takes_the_map_path_and_trains_the_table():
    encoder = _encoder(relative_positions=True, alpha=0.0, beta=0.0).train()  # the Transformer's layers
    out = encoder(torch.randn(4, 24, 3))
    (out * torch.randn_like(out)).sum().backward()
    assert all(layer.attention.position_bias.grad.abs().sum() > 0 for layer in encoder.layers)


def test_relative_positions_are_deterministic_round_trip_and_change_the_fit():
    X, y = make_panel(n=20)
    check_option_fit(EADCTClassifier, FAST, {"relative_positions": True}, X, y)


def test_relative_positions_on_unequal_lengths_and_longer_series_at_predict():
    X, _, target = make_unequal(n=16, lengths=(8, 20))
    reg = EADCTRegressor(**FAST, relative_positions=True).fit(X, target)
    longer = [np.random.default_rng(1).normal(size=(2, 30)) for _ in range(3)]  # beyond the table: offsets clip
    with pytest.warns(UserWarning):  # the stem's learned positions warn of the longer series
        assert np.isfinite(reg.predict(longer)).all()


def test_relative_positions_resume_exactly(tmp_path, monkeypatch):
    check_resumes_exactly({"relative_positions": True}, tmp_path, monkeypatch)


def test_relative_positions_check_their_value_and_old_models_load_without_them():
    check_checked_and_old_models_load(
        FAST, "relative_positions", "yes", lambda layer: delattr(layer.attention, "position_bias")
    )
