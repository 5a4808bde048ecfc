"""The dilated convolutions' options: ``conv_causal=False`` (centred on each step) and ``dilation_per_layer``."""

from __future__ import annotations

import pytest
import torch
from conftest import TINY, check_checked_and_old_models_load, check_option_fit, make_panel

from eadct import EADCTClassifier
from eadct.networks import DilatedConvBranch, EADCTEncoder, EncoderConfig

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


@pytest.mark.parametrize("kernel, dilation", [(3, 1), (3, 2), (4, 1)])
def test_a_step_reads_both_sides_when_centred_and_only_the_past_when_causal(kernel, dilation):
    torch.manual_seed(0)
    x = torch.randn(1, 20, 4, requires_grad=True)
    for causal in (True, False):
        branch = DilatedConvBranch(4, 6, kernel, dilation, causal=causal)
        out = branch(x)
        assert out.shape == (1, 20, 6)
        (grad,) = torch.autograd.grad(out[0, 10].sum(), x)
        read = grad[0].abs().sum(1).nonzero().flatten()
        reach = 2 * (kernel - 1) * dilation  # two convolutions
        left = reach if causal else 2 * ((kernel - 1) * dilation // 2)
        assert (int(read.min()), int(read.max())) == (10 - left, 10 - left + reach)


def test_a_centred_series_reads_the_same_alone_and_padded_in_a_batch():
    torch.manual_seed(0)
    short = torch.randn(1, 9, 3)
    padded = torch.cat([torch.cat([short, torch.zeros(1, 7, 3)], dim=1), torch.randn(1, 16, 3)])
    valid = torch.ones(2, 16, dtype=torch.bool)
    valid[0, 9:] = False
    branch = DilatedConvBranch(3, 6, 3, 2, causal=False)
    torch.testing.assert_close(branch(padded, valid)[0, :9], branch(short)[0])
    # without the mask of the first convolution's output, the padded steps would reach the last real ones
    assert not torch.allclose(branch(padded)[0, :9], branch(short)[0])
    config = EncoderConfig(n_channels=3, max_len=16, d_model=16, n_heads=2, n_blocks=2, d_ff=16, conv_causal=False)
    encoder = EADCTEncoder(config).eval()
    torch.testing.assert_close(encoder(padded, valid)[0, :9], encoder(short)[0])


def test_conv_causal_false_is_deterministic_round_trips_and_changes_the_fit():
    X, y = make_panel(n=20)
    check_option_fit(EADCTClassifier, FAST, {"conv_causal": False}, X, y)


def test_conv_causal_checks_its_value_and_old_models_load_as_causal():
    check_checked_and_old_models_load(FAST, "conv_causal", "no", lambda layer: delattr(layer.conv, "causal"))


def test_dilation_doubles_per_block_by_default_and_per_layer_when_asked():
    for per_layer, dilations in ((False, [1, 1, 2, 2]), (True, [1, 2, 4, 8])):
        config = EncoderConfig(n_channels=2, max_len=40, d_model=16, n_heads=2, dilation_per_layer=per_layer)
        encoder = EADCTEncoder(config)
        assert [layer.conv.conv1.dilation[0] for layer in encoder.layers] == dilations
        assert encoder(torch.randn(2, 40, 2)).shape == (2, 40, 16)


def test_dilation_per_layer_is_deterministic_round_trips_and_changes_the_fit():
    X, y = make_panel(n=20)
    check_option_fit(EADCTClassifier, FAST, {"dilation_per_layer": True}, X, y)
