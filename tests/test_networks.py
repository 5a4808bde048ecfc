"""Network unit tests: shapes, the logit chain, degenerations, padding invariance, the pooling registry, the heads and
the validation of the architecture rows (no training)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from eadct.networks import (
    ARCHITECTURES,
    POOLINGS,
    ClassificationHead,
    DilatedConvBranch,
    EADCTEncoder,
    EncoderConfig,
    EvolvingAttention,
    Pooling,
    RegressionHead,
    SeriesNetwork,
    get_architecture,
    pool_steps,
    pooled_width,
    register_pooling,
    validate_encoder_config,
)
from eadct.networks import pooling as pooling_module


def encoder(**kw):
    cfg = dict(n_channels=3, max_len=24, d_model=16, n_heads=2, n_blocks=2, attention_ratio=0.5, d_ff=16)
    cfg.update(kw)
    torch.manual_seed(0)
    return EADCTEncoder(EncoderConfig(**cfg)).eval()


def n_map_convs(module):
    return sum(isinstance(m, torch.nn.Conv2d) for m in module.modules())


def test_shapes_and_chain_length():
    enc = encoder()
    h, chain = enc(torch.randn(5, 24, 3), return_logits=True)
    assert h.shape == (5, 24, 16)
    assert len(chain) == 4 and len(enc.layers) == 4  # n_blocks=2 -> exactly 4 layers, no extra block
    assert all(c.shape == (5, 2, 24, 24) for c in chain)
    # The first layer seeds the chain and has no map convolution; the other three have one each.
    assert enc.layers[0].attention.map_conv is None
    assert n_map_convs(enc) == 3


@pytest.mark.parametrize("kernel", [1, 3, 5])
def test_attention_kernel_sizes(kernel):
    enc = encoder(attention_kernel_size=kernel)
    assert enc.layers[1].attention.map_conv.kernel_size == (kernel, kernel)
    assert enc(torch.randn(2, 24, 3)).shape == (2, 24, 16)


def test_dilation_doubles_per_block():
    enc = encoder(n_blocks=3)
    dil = [layer.conv.conv1.dilation[0] for layer in enc.layers]
    assert dil == [1, 1, 2, 2, 4, 4]


def test_dilation_doubles_per_layer_when_asked():
    enc = encoder(dilation_per_layer=True)
    assert [layer.conv.conv1.dilation[0] for layer in enc.layers] == [1, 2, 4, 8]
    assert enc(torch.randn(2, 24, 3)).shape == (2, 24, 16)


@pytest.mark.parametrize("kernel, dilation", [(3, 1), (3, 2), (4, 1)])
def test_the_convolution_branch_reads_only_the_steps_up_to_each(kernel, dilation):
    torch.manual_seed(0)
    x = torch.randn(1, 20, 4, requires_grad=True)
    out = DilatedConvBranch(4, 6, kernel, dilation)(x)
    assert out.shape == (1, 20, 6)
    (grad,) = torch.autograd.grad(out[0, 10].sum(), x)
    read = grad[0].abs().sum(1).nonzero().flatten()
    assert (int(read.min()), int(read.max())) == (10 - 2 * (kernel - 1) * dilation, 10)  # two convolutions


def test_map_of_layer_i_reaches_layer_i_plus_1():
    """Recompute layer 2's logits by hand from layer 1's: paper Eq. 1 with the paper's names."""
    alpha, beta = 0.7, 0.4
    enc = encoder(alpha=alpha, beta=beta)
    x = torch.randn(3, 24, 3)
    captured = {}

    def grab_input(module, args, output):
        captured["x"] = args[0]

    enc.layers[1].register_forward_hook(grab_input)
    _, chain = enc(x, return_logits=True)
    att = enc.layers[1].attention
    b, n, _ = captured["x"].shape
    q, k, _ = att.qkv(captured["x"]).view(b, n, 3, att.n_heads, att.d_head).permute(2, 0, 3, 1, 4)
    s = q @ k.transpose(-1, -2) / math.sqrt(att.d_head)
    a_in = alpha * chain[0] + (1 - alpha) * s
    expected = beta * F.relu(att.map_conv(a_in)) + (1 - beta) * a_in
    torch.testing.assert_close(chain[1], expected)
    # and a change of layer 1's map changes layer 2's output
    out1, _ = att(captured["x"], chain[0], None)
    out2, _ = att(captured["x"], chain[0] + 1.0, None)
    assert not torch.allclose(out1, out2)


def test_alpha_beta_zero_is_dc_transformer():
    enc = encoder(alpha=0.0, beta=0.0)
    assert n_map_convs(enc) == 0
    att = enc.layers[1].attention
    assert not att.uses_previous
    x = torch.randn(2, 24, 16)
    # The previous map is ignored: plain scaled dot-product attention.
    out_a, logits_a = att(x, torch.randn(2, 2, 24, 24), None)
    out_b, logits_b = att(x, None, None)
    torch.testing.assert_close(out_a, out_b)
    b, n, _ = x.shape
    q, k, v = att.qkv(x).view(b, n, 3, att.n_heads, att.d_head).permute(2, 0, 3, 1, 4)
    ref = F.scaled_dot_product_attention(q, k, v)  # (B, K, N, d_head)
    torch.testing.assert_close(out_a, att.out(ref.transpose(1, 2).reshape(b, n, -1)), atol=1e-5, rtol=1e-5)


def test_alpha_zero_beta_positive_has_conv_but_no_skip():
    enc = encoder(alpha=0.0, beta=0.5)
    assert n_map_convs(enc) == 3
    assert not enc.layers[1].attention.uses_previous


def test_attention_ratio_one_has_no_conv_branch():
    enc = encoder(attention_ratio=1.0)
    assert all(layer.conv is None for layer in enc.layers)
    assert all(layer.attention.qkv.out_features == 3 * 16 for layer in enc.layers)


def test_attention_ratio_zero_is_dilated_conv_network():
    enc = encoder(attention_ratio=0.0)
    assert all(layer.attention is None for layer in enc.layers)
    assert all(layer.conv.conv1.out_channels == 16 for layer in enc.layers)
    h, chain = enc(torch.randn(2, 24, 3), return_logits=True)
    assert chain == [None] * 4 and h.shape == (2, 24, 16)


def test_branch_widths_follow_attention_ratio():
    enc = encoder(d_model=32, n_heads=4, attention_ratio=0.25)
    layer = enc.layers[0]
    assert layer.attention.out.out_features == 8
    assert layer.conv.conv1.out_channels == 24


@pytest.mark.parametrize("alpha,beta,p", [(0.5, 0.3, 0.5), (0.0, 0.0, 0.5), (0.5, 0.3, 1.0), (0.5, 0.3, 0.0)])
def test_padding_invariance(alpha, beta, p):
    enc = encoder(alpha=alpha, beta=beta, attention_ratio=p)
    x = torch.randn(3, 24, 3)
    valid = torch.ones(3, 24, dtype=torch.bool)
    valid[0, 9:] = False
    x_padded = x.clone()
    x_padded[0, 9:] = 123.0  # garbage in the padding must not matter
    batched = enc(x_padded, valid)
    alone = enc(x[:1, :9])
    torch.testing.assert_close(batched[0, :9], alone[0], atol=1e-5, rtol=1e-5)
    assert torch.all(batched[0, 9:] == 0)


def test_gradients_reach_every_parameter():
    enc = encoder().train()
    enc(torch.randn(4, 24, 3)).pow(2).mean().backward()
    missing = [name for name, p in enc.named_parameters() if p.grad is None or not torch.isfinite(p.grad).all()]
    assert missing == []


def test_head_split_uses_transpose():
    att = EvolvingAttention(8, 8, 2, evolve=False, dropout=0.0).eval()
    x = torch.randn(1, 5, 8)
    with torch.no_grad():
        att.out.weight.copy_(torch.eye(8))
        att.out.bias.zero_()
    out, _ = att(x)
    q, k, v = att.qkv(x).view(1, 5, 3, 2, 4).permute(2, 0, 3, 1, 4)
    heads = torch.softmax(q @ k.transpose(-1, -2) / 2.0, -1) @ v  # (1, 2, 5, 4)
    torch.testing.assert_close(out[0, :, :4], heads[0, 0])  # first 4 features = head 0, all steps
    torch.testing.assert_close(out[0, :, 4:], heads[0, 1])


def test_positions_past_table_reuse_last_row():
    enc = encoder(max_len=10)
    assert enc(torch.randn(1, 14, 3)).shape == (1, 14, 16)
    pos = enc.embedding.positions(14)
    assert torch.equal(pos[10:], enc.embedding.position[-1].expand(4, -1))


def test_config_rejects_indivisible_heads():
    with pytest.raises(ValueError, match="not divisible by n_heads"):
        EncoderConfig(n_channels=1, max_len=5, d_model=24, n_heads=8, attention_ratio=0.25)


def _grads(module):
    return {n: p.grad.clone() for n, p in module.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("block", [None, 2 * 24 * 5])  # one block per batch chunk; blocks of 5 rows
@pytest.mark.parametrize("padded", [False, True])
def test_checkpointing_gives_same_outputs_and_gradients(padded, block, monkeypatch):
    from eadct.networks import attention

    if block:
        monkeypatch.setattr(attention, "CHUNK_ELEMENTS", block)
    # float64: the loss's gradients span 1e-5 to 1e2, and float32 rounding of a different summation order
    # (per block) would need a loose tolerance
    plain = encoder(dropout=0.0, recompute_attention=False).double()
    ckpt = encoder(dropout=0.0, recompute_attention=True).double()
    ckpt.load_state_dict(plain.state_dict())
    plain.train()
    ckpt.train()
    x = torch.randn(3, 24, 3, dtype=torch.float64)
    valid = None
    if padded:
        valid = torch.ones(3, 24, dtype=torch.bool)
        valid[1, 15:] = False
    out_plain, out_ckpt = plain(x, valid), ckpt(x, valid)
    torch.testing.assert_close(out_ckpt, out_plain)
    out_plain.pow(2).sum().backward()
    out_ckpt.pow(2).sum().backward()
    g_plain, g_ckpt = _grads(plain), _grads(ckpt)
    assert g_plain.keys() == g_ckpt.keys()
    for name in g_plain:
        torch.testing.assert_close(g_ckpt[name], g_plain[name], atol=1e-5, rtol=1e-4)


def test_checkpointing_with_dropout_replays_the_same_masks():
    # one block per layer here, so the blocked path draws the same masks as the stored one
    plain, ckpt = encoder(recompute_attention=False), encoder(recompute_attention=True)
    ckpt.load_state_dict(plain.state_dict())
    x = torch.randn(2, 24, 3)
    grads = []
    for net in (plain.train(), ckpt.train()):
        torch.manual_seed(7)
        net(x).sum().backward()
        grads.append(_grads(net))
    for name in grads[0]:
        torch.testing.assert_close(grads[1][name], grads[0][name], atol=1e-5, rtol=1e-4)


def test_map_dropout_on_cpu_keeps_each_value_with_probability_1_minus_p_and_the_expectation():
    from eadct.networks.attention import map_dropout

    x = torch.ones(16, 8, 100, 100)  # 1.28 M values: a kept share is within 3e-3 of its probability (11 sd)
    torch.manual_seed(0)
    y = map_dropout(x, 0.1, True)
    keep = round(0.9 * 65536)
    kept = y != 0
    # each of the four 16-bit slices of a 64-bit draw (value i uses slice i % 4) keeps 90%
    lanes = kept.flatten().view(-1, 4).float().mean(0)
    assert torch.all((lanes - 0.9).abs() < 3e-3), lanes
    torch.testing.assert_close(y[kept], torch.full_like(y[kept], 65536 / keep))
    assert abs(y.mean().item() - 1.0) < 5e-3
    # neighbouring values are independent: P(both kept) = 0.81
    flat = kept.flatten().float()
    assert abs((flat[:-1] * flat[1:]).mean().item() - 0.81) < 3e-3
    torch.manual_seed(0)
    assert torch.equal(map_dropout(x, 0.1, True), y)  # torch.manual_seed reproduces it
    assert not torch.equal(map_dropout(x, 0.1, True), y)
    assert map_dropout(x, 0.1, False) is x and map_dropout(x, 0.0, True) is x
    assert torch.equal(map_dropout(x, 1.0, True), torch.zeros_like(x))  # F.dropout where keep rounds to 0


def test_map_dropout_gradient_is_the_scaled_mask():
    from eadct.networks.attention import map_dropout

    x = torch.randn(3, 2, 7, 5, dtype=torch.float64, requires_grad=True)
    torch.manual_seed(1)
    y = map_dropout(x, 0.3, True)
    g = torch.randn_like(y)
    y.backward(g)
    scale = 65536 / round(0.7 * 65536)
    mask = y.detach() != 0
    assert 0 < mask.sum() < mask.numel()
    torch.testing.assert_close(y.detach(), x.detach() * mask * scale)
    torch.testing.assert_close(x.grad, g * mask * scale)


@pytest.mark.parametrize("p", [0.5, 1.0])
def test_downsampled_attention_is_padding_invariant(p):
    enc = encoder(attention_downsample=4, attention_ratio=p)
    x = torch.randn(2, 24, 3)
    valid = torch.ones(2, 24, dtype=torch.bool)
    valid[0, 10:] = False
    torch.testing.assert_close(enc(x, valid)[0, :10], enc(x[:1, :10])[0], atol=1e-5, rtol=1e-5)
    _, chain = enc(x, return_logits=True)
    assert chain[1].shape == (2, 2, 6, 6)  # ceil(24 / 4) pooled tokens


def test_fast_path_matches_materialised_attention():
    fast, slow = (
        encoder(alpha=0.0, beta=0.0, dropout=0.0),
        encoder(alpha=0.0, beta=0.0, dropout=0.0, fast_plain_attention=False),
    )
    slow.load_state_dict(fast.state_dict())
    x = torch.randn(3, 24, 3)
    valid = torch.ones(3, 24, dtype=torch.bool)
    valid[2, 5:] = False
    torch.testing.assert_close(fast(x, valid), slow(x, valid), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("kind", ["lstm", "gru", "resnet"])
def test_baseline_encoders_are_padding_invariant(kind):
    from eadct.networks.baselines import RecurrentEncoder, ResNetEncoder

    torch.manual_seed(0)
    enc = (ResNetEncoder(3, (8, 16, 16)) if kind == "resnet" else RecurrentEncoder(kind, 3, 16)).eval()
    x = torch.randn(3, 20, 3)
    valid = torch.ones(3, 20, dtype=torch.bool)
    valid[0, 9:] = False
    out = enc(x, valid)
    assert out.shape == (3, 20, 16) and torch.all(out[0, 9:] == 0)
    torch.testing.assert_close(out[0, :9], enc(x[:1, :9])[0], atol=1e-5, rtol=1e-5)


def _map_inputs(b=3, heads=4, m=23, d_head=5):
    torch.manual_seed(0)
    shapes = [(b, heads, m, d_head)] * 3 + [(b, heads, m, m), (heads, heads, 3, 3), (heads,)]
    return [torch.randn(*s, dtype=torch.float64, requires_grad=True) for s in shapes]


@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize("halo", [0, 1])
def test_evolve_maps_backward_is_the_derivative(halo, overwrite):
    from eadct.networks.attention import evolve_maps

    x, w, b = _map_inputs(b=2, heads=2, m=9)[3:]

    def ref(x, w, b):
        return torch.lerp(x[:, :, halo : x.shape[2] - halo], F.relu(F.conv2d(x, w, b, padding=(1 - halo, 1))), 0.3)

    def evolve(x, w, b):  # overwrite=True writes into its input: give it an intermediate (x * 1)
        return evolve_maps(x * 1.0, w, b, 0.3, halo, overwrite=overwrite)

    torch.testing.assert_close(evolve(x, w, b), ref(x, w, b))
    assert torch.autograd.gradcheck(evolve, (x, w, b))
    if overwrite and halo == 0:
        inter = x * 1.0
        assert evolve_maps(inter, w, b, 0.3, overwrite=True) is inter
        with torch.no_grad():  # inference takes the same in-place route
            inter = x * 1.0
            torch.testing.assert_close(evolve_maps(inter, w, b, 0.3, overwrite=True), ref(x, w, b))
            torch.testing.assert_close(inter, ref(x, w, b))


@pytest.mark.parametrize("elements", [None, 4 * 23 * 23 * 2, 4 * 23 * 7, 1])  # 1, 2, 15 and 69 blocks
@pytest.mark.parametrize("padded", [False, True])
def test_blocked_map_path_matches_the_full_path(elements, padded):
    from eadct.networks.attention import MapSettings, chunked_map_path, map_block

    q, k, v, prev, w, b = _map_inputs()
    valid = None
    if padded:
        valid = torch.ones(3, 23, dtype=torch.bool)
        valid[1, 15:] = False
    settings = MapSettings(alpha=0.5, beta=0.3, dropout=0.0, training=True, block_elements=elements)
    tensors = dict(previous=prev, valid=valid, weight=w, bias=b)
    h1, l1 = map_block(q, k, v, **tensors, settings=settings)
    h2, l2 = chunked_map_path(q, k, v, **tensors, settings=settings)
    torch.testing.assert_close(torch.nan_to_num(h2), torch.nan_to_num(h1))
    torch.testing.assert_close(l2, l1)
    gh, gl = torch.randn_like(h1), torch.randn_like(l1)
    if padded:
        gh = gh * valid[:, None, :, None]  # padded query rows have no defined output
    leaves = (q, k, v, prev, w, b)
    full = torch.autograd.grad([h1, l1], leaves, [gh, gl])
    blocked = torch.autograd.grad([h2, l2], leaves, [gh, gl])
    for g1, g2 in zip(full, blocked, strict=True):
        torch.testing.assert_close(g2, g1)


def test_blocked_map_path_backward_is_the_derivative_with_dropout():
    from eadct.networks.attention import MapSettings, chunked_map_path

    valid = torch.ones(2, 9, dtype=torch.bool)
    valid[1, 6:] = False

    def f(q, k, v, prev, w, b):
        torch.manual_seed(3)  # the same dropout masks on every call; backward must replay them
        settings = MapSettings(alpha=0.5, beta=0.3, dropout=0.2, training=True, block_elements=2 * 9 * 4)  # 6 blocks
        return chunked_map_path(q, k, v, previous=prev, valid=valid, weight=w, bias=b, settings=settings)

    # fast mode: each input's Jacobian checked along a random direction (one pass), not column by column (about
    # 1,400 calls of the blocked path, 22 s on the 2-core CPU); a wrong backward still fails it
    assert torch.autograd.gradcheck(f, _map_inputs(b=2, heads=2, m=9, d_head=3), atol=1e-6, fast_mode=True)


def test_blocked_map_path_without_logits_or_convolution():
    from eadct.networks.attention import MapSettings, chunked_map_path, map_block

    q, k, v = _map_inputs()[:3]
    none = dict(previous=None, valid=None, weight=None, bias=None)
    settings = MapSettings(alpha=0.0, beta=0.0, training=True, need_logits=False, block_elements=4 * 23 * 5)
    h1, _ = map_block(q, k, v, **none, settings=settings)
    h2, logits = chunked_map_path(q, k, v, **none, settings=settings)
    assert logits is None
    torch.testing.assert_close(h2, h1)
    full, blocked = torch.autograd.grad(h1.sum(), (q, k, v)), torch.autograd.grad(h2.sum(), (q, k, v))
    for g1, g2 in zip(full, blocked, strict=True):
        torch.testing.assert_close(g2, g1)


def test_auto_checkpointing_blocks_large_maps_only(monkeypatch):
    from eadct import runtime
    from eadct.networks import attention

    monkeypatch.delenv("MALLOC_MMAP_MAX_", raising=False)
    monkeypatch.setattr(runtime, "_keeping", False)

    enc = encoder(recompute_attention="auto", dropout=0.0).train()
    x = torch.randn(2, 24, 3)

    def blocked_layers():
        _, chain = enc(x, return_logits=True)
        return [type(t.grad_fn).__name__ == "_ChunkedMapsBackward" for t in chain]

    assert blocked_layers() == [False] * 4  # maps of 2 * 2 * 24 * 24 values: stored
    monkeypatch.setattr(attention, "AUTO_BLOCKED_ELEMENTS", 2 * 2 * 24 * 24)
    assert blocked_layers() == [True] * 4
    monkeypatch.setenv("MALLOC_MMAP_MAX_", "0")  # the process keeps freed memory: stored maps are faster
    assert blocked_layers() == [False] * 4
    with pytest.raises(ValueError, match="recompute_attention must be True, False or 'auto'"):
        encoder(recompute_attention="yes")


def test_inference_runs_in_blocks_with_the_same_result(monkeypatch):
    from eadct.networks import attention

    enc = encoder(recompute_attention=False)
    x = torch.randn(3, 24, 3)
    with torch.enable_grad():
        stored = enc(x).detach()  # with gradients enabled the stored path runs
    monkeypatch.setattr(attention, "CHUNK_ELEMENTS", 2 * 24 * 4)
    with torch.no_grad():
        torch.testing.assert_close(enc(x), stored, atol=1e-5, rtol=1e-5)


# ------------------------------------------------------------------------------------------------- poolings
@pytest.fixture
def registered():
    """Register poolings for one test (``registered(pooling)``) and remove them from the registry after it."""
    names = []

    def register(pooling):
        names.append(pooling.name)
        return register_pooling(pooling)

    yield register
    for name in names:
        del pooling_module._REGISTRY[name]


def _steps():
    torch.manual_seed(0)
    h = torch.randn(3, 9, 4)
    valid = torch.ones(3, 9, dtype=torch.bool)
    valid[0, 5:] = False
    return h, valid


@pytest.mark.parametrize("name", sorted(POOLINGS))
def test_every_pooling_has_its_declared_width_and_ignores_padded_steps(name):
    h, valid = _steps()
    padded = h.clone()
    padded[0, 5:] = 123.0
    out = pool_steps(padded, valid, name, n_steps=9, n_segments=3)
    assert out.shape == (3, pooled_width(name, 4, 9, 3))
    torch.testing.assert_close(out[:1], pool_steps(h[:1, :5], None, name, n_steps=9, n_segments=3))


def test_the_registry_holds_the_four_poolings_and_is_read_only():
    assert list(POOLINGS) == ["mean", "max", "segments", "flatten"]
    assert {name: p.uses for name, p in POOLINGS.items()} == {
        "mean": frozenset(),
        "max": frozenset(),
        "segments": frozenset({"n_segments"}),
        "flatten": frozenset(),
    }
    assert all(p.description and p.build is None for p in POOLINGS.values())
    assert pooled_width("segments", 4, n_segments=8) == 36 and pooled_width("flatten", 4, 7) == 28
    with pytest.raises(TypeError):
        POOLINGS["mean-max"] = POOLINGS["mean"]
    with pytest.raises(ValueError, match="registered already"):
        register_pooling(POOLINGS["mean"])
    with pytest.raises(ValueError, match=r"pooling must be one of \['mean', 'max', 'segments', 'flatten'\]"):
        pooled_width("mean-max", 4)
    with pytest.raises(ValueError, match="pooling must be one of"):
        SeriesNetwork(encoder(), 3, None, "segments-attention")
    with pytest.raises(ValueError, match="needs n_steps"):
        pooled_width("flatten", 4)


def _last_step(h, valid, **_):
    lengths = valid.sum(dim=1) if valid is not None else torch.full((h.shape[0],), h.shape[1])
    return h[torch.arange(h.shape[0]), lengths - 1]


def test_a_registered_pooling_serves_the_network_and_pooled_width(registered):
    registered(Pooling("last", _last_step, lambda d, max_len, n_segments: d, description="the last valid step"))
    assert "last" in POOLINGS and pooled_width("last", 16) == 16
    enc = encoder()
    network = SeriesNetwork(enc, 3, ClassificationHead(pooled_width("last", 16), 2, 0.0), "last").eval()
    x, valid = torch.randn(2, 24, 3), torch.ones(2, 24, dtype=torch.bool)
    valid[1, 10:] = False
    h = enc(x, valid)
    torch.testing.assert_close(network.represent(x, valid), torch.stack([h[0, 23], h[1, 9]]))
    assert network(x, valid).shape == (2, 2) and network.pooler is None


class _Scores(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(d))


def _attend(h, valid, *, module, **_):
    scores = h @ module.weight
    if valid is not None:
        scores = scores.masked_fill(~valid, float("-inf"))
    return (torch.softmax(scores, dim=1).unsqueeze(-1) * h).sum(dim=1)


def test_a_registered_pooling_with_weights_has_them_built_and_trained(registered):
    registered(Pooling("attend", _attend, lambda d, max_len, n_segments: d, build=lambda d, max_len, n: _Scores(d)))
    network = SeriesNetwork(encoder(dropout=0.0), 3, RegressionHead(16, 1), "attend")
    assert "pooler.weight" in network.state_dict()
    x, valid = torch.randn(2, 24, 3), torch.ones(2, 24, dtype=torch.bool)
    valid[1, 10:] = False
    # the weights start at zero, where every step weighs the same: the mean
    mean = SeriesNetwork(network.encoder, 3, None, "mean")
    torch.testing.assert_close(network.represent(x, valid), mean.represent(x, valid))
    network(x, valid).pow(2).sum().backward()
    assert network.pooler.weight.grad.abs().sum() > 0


# ---------------------------------------------------------------------------------------------------- heads
def test_the_heads_are_one_linear_layer():
    z = torch.randn(5, 8)
    classify = ClassificationHead(8, 3, dropout=0.5).eval()
    assert [name for name, _ in classify.named_parameters()] == ["linear.weight", "linear.bias"]
    torch.testing.assert_close(classify(z), classify.linear(F.gelu(z)))
    assert classify.train()(z).shape == (5, 3)
    regress = RegressionHead(8, 2)
    assert [name for name, _ in regress.named_parameters()] == ["linear.weight", "linear.bias"]
    torch.testing.assert_close(regress(z), regress.linear(z))


# ------------------------------------------------------------------------------------------ row validation
@pytest.mark.parametrize("name", ["lstm", "gru", "resnet"])
def test_rows_without_attention_are_not_held_to_its_heads_rule(name):
    """d_model = 10 with n_heads = 3 leaves no whole attention width, a rule of attention these rows do not have."""
    architecture = get_architecture(name)
    settings = architecture.resolve({"d_model": 10, "n_heads": 3, "d_ff": 16})
    assert settings["uses"] == architecture.uses and validate_encoder_config(settings) == []
    config = EncoderConfig(n_channels=2, max_len=12, **settings)
    assert architecture.build(config)(torch.randn(2, 12, 2)).shape == (2, 12, architecture.width(config))
    # each value is still checked as a value of its setting
    assert validate_encoder_config({**settings, "n_heads": 0}) == ["n_heads must be a positive int, got 0"]


@pytest.mark.parametrize("name", ["ea-dc-transformer", "dc-transformer", "transformer"])
def test_rows_with_attention_are_held_to_its_heads_rule(name):
    settings = get_architecture(name).resolve({"d_model": 24, "n_heads": 5, "attention_ratio": 0.5})
    assert validate_encoder_config(settings) != []
    with pytest.raises(ValueError, match="not divisible by n_heads"):
        EncoderConfig(n_channels=2, max_len=12, **settings)
    assert {name for name, a in ARCHITECTURES.items() if not {"d_model", "n_heads"} <= a.uses} >= {"lstm", "resnet"}
