"""CUDA paths of the long-series machinery (marked ``gpu``; skipped without CUDA).

The CPU suite checks the same functions on the CPU; these check what differs on CUDA: the CUDA RNG replayed
in the blocked path's backward, its larger blocks, bf16 autocast through the custom autograd functions, and
"auto" storing the maps on CUDA.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel

from eadct import EADCTClassifier, EADCTRegressor
from eadct.networks import EADCTEncoder, EncoderConfig

pytestmark = pytest.mark.gpu
CUDA = torch.device("cuda")


def _map_inputs(b=3, heads=4, m=23, d_head=5, dtype=torch.float64):
    torch.manual_seed(0)
    shapes = [(b, heads, m, d_head)] * 3 + [(b, heads, m, m), (heads, heads, 3, 3), (heads,)]
    return [torch.randn(*s, dtype=dtype, device=CUDA, requires_grad=True) for s in shapes]


def _encoder(**kw):
    cfg = dict(n_channels=3, max_len=64, d_model=32, n_heads=4, n_blocks=2, attention_ratio=0.5, d_ff=32)
    cfg.update(kw)
    torch.manual_seed(0)
    return EADCTEncoder(EncoderConfig(**cfg)).to(CUDA)


def _grads(module):
    return {n: p.grad.clone() for n, p in module.named_parameters() if p.grad is not None}


def _rel(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


@pytest.mark.parametrize("elements", [None, 4 * 23 * 7])  # one block; 15 blocks
def test_blocked_map_path_matches_the_full_path_on_cuda(elements):
    from eadct.networks.attention import MapSettings, chunked_map_path, map_block

    q, k, v, prev, w, b = _map_inputs()
    valid = torch.ones(3, 23, dtype=torch.bool, device=CUDA)
    valid[1, 15:] = False
    settings = MapSettings(alpha=0.5, beta=0.3, dropout=0.0, training=True, block_elements=elements)
    tensors = dict(previous=prev, valid=valid, weight=w, bias=b)
    h1, l1 = map_block(q, k, v, **tensors, settings=settings)
    h2, l2 = chunked_map_path(q, k, v, **tensors, settings=settings)
    torch.testing.assert_close(torch.nan_to_num(h2), torch.nan_to_num(h1))
    torch.testing.assert_close(l2, l1)
    gh, gl = torch.randn_like(h1) * valid[:, None, :, None], torch.randn_like(l1)
    leaves = (q, k, v, prev, w, b)
    full = torch.autograd.grad([h1, l1], leaves, [gh, gl])
    blocked = torch.autograd.grad([h2, l2], leaves, [gh, gl])
    for g1, g2 in zip(full, blocked, strict=True):
        torch.testing.assert_close(g2, g1)


def test_blocked_map_path_replays_the_cuda_dropout_masks():
    from eadct.networks.attention import MapSettings, chunked_map_path

    valid = torch.ones(2, 9, dtype=torch.bool, device=CUDA)
    valid[1, 6:] = False

    def f(q, k, v, prev, w, b):
        torch.manual_seed(3)  # seeds the CUDA generator too: the same masks on every call
        settings = MapSettings(alpha=0.5, beta=0.3, dropout=0.2, training=True, block_elements=2 * 9 * 4)  # 6 blocks
        return chunked_map_path(q, k, v, previous=prev, valid=valid, weight=w, bias=b, settings=settings)

    assert torch.autograd.gradcheck(f, _map_inputs(b=2, heads=2, m=9, d_head=3), atol=1e-6)


def test_encoder_checkpointing_with_dropout_on_cuda():
    # one block per layer (CUDA blocks hold 2**24 values): the same masks as the stored path
    plain, ckpt = _encoder(recompute_attention=False), _encoder(recompute_attention=True)
    ckpt.load_state_dict(plain.state_dict())
    x = torch.randn(4, 64, 3, device=CUDA)
    outs, grads = [], []
    for net in (plain.train(), ckpt.train()):
        torch.manual_seed(7)
        out = net(x)
        out.sum().backward()
        outs.append(out.detach())
        grads.append(_grads(net))
    torch.testing.assert_close(outs[1], outs[0], atol=1e-5, rtol=1e-4)
    for name in grads[0]:
        torch.testing.assert_close(grads[1][name], grads[0][name], atol=1e-4, rtol=1e-3)


def test_bf16_autocast_blocked_and_stored_agree_with_float32():
    ref, stored, blocked = (_encoder(dropout=0.0, recompute_attention=c) for c in (False, False, True))
    x = torch.randn(4, 64, 3, device=CUDA)
    target = torch.randn(4, 64, 32, device=CUDA)
    results = []
    for net, bf16 in ((ref, False), (stored, True), (blocked, True)):
        net.train()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            out = net(x)
        (out.float() * target).sum().backward()
        grads = _grads(net)
        assert all(g.dtype == torch.float32 for g in grads.values())  # parameters and gradients stay float32
        results.append((out.detach(), torch.cat([g.flatten() for _, g in sorted(grads.items())])))
    (out_ref, g_ref), (out_s, g_s), (out_b, g_b) = results
    assert out_s.dtype == out_b.dtype
    for out, grads in ((out_s, g_s), (out_b, g_b)):
        assert torch.isfinite(out).all() and torch.isfinite(grads).all()
        # bf16 rounding through 4 layers and their backward: about 1e-2 on outputs, 5e-2 on gradients
        assert _rel(out, out_ref) < 3e-2 and _rel(grads, g_ref) < 1e-1, (_rel(out, out_ref), _rel(grads, g_ref))
    assert _rel(g_b, g_ref) < 1.5 * _rel(g_s, g_ref) + 1e-2  # blocking adds no error of its own
    # blocked and stored compute the same bf16 function: closer to each other than to float32
    assert _rel(out_b, out_s) < 1e-2


def test_auto_stores_the_maps_on_cuda(monkeypatch):
    from eadct.networks import attention

    monkeypatch.setattr(attention, "AUTO_BLOCKED_ELEMENTS", 1)  # every map counts as large
    enc = _encoder(recompute_attention="auto", dropout=0.0).train()
    _, chain = enc(torch.randn(2, 64, 3, device=CUDA), return_logits=True)
    names = [type(t.grad_fn).__name__ for t in chain]
    assert len(names) == 4 and "_ChunkedMapsBackward" not in names
    assert attention.auto_blocks(2**30, "cuda") is False


def test_blocked_inference_on_cuda_equals_stored(monkeypatch):
    from eadct.networks import attention

    # cuDNN convolves float32 in TF32 by default, and the algorithm (so the rounding) depends on the block's
    # shape: about 1e-3 apart. Without TF32 both paths are float32 and agree to 1e-5.
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)
    enc = _encoder(recompute_attention=False).eval()
    x = torch.randn(3, 64, 3, device=CUDA)
    with torch.enable_grad():
        stored = enc(x).detach()
    monkeypatch.setattr(attention, "CUDA_CHUNK_ELEMENTS", 2 * 64 * 4)  # many blocks
    with torch.no_grad():
        torch.testing.assert_close(enc(x), stored, atol=1e-5, rtol=1e-5)


def test_memory_estimate_bounds_the_cuda_peak():
    """The guard's estimate is within a factor 2 of the measured CUDA peak, float32 and bf16, stored and blocked."""
    from eadct.networks.memory import estimate_stack_training_bytes

    b, n, d, heads, layers = 8, 512, 64, 8, 3
    for checkpoint, bf16 in ((False, False), (True, False), (False, True), (True, True)):
        cfg = EncoderConfig(
            n_channels=d,
            max_len=n,
            d_model=d,
            n_heads=heads,
            attention_ratio=1.0,
            n_blocks=2,
            recompute_attention=checkpoint,
            attention_downsample=1,  # every step attends ("auto" would pool 512 steps before attention)
            fast_plain_attention=False,
        )
        torch.manual_seed(0)
        enc = EADCTEncoder(cfg).to(CUDA)
        enc.layers = enc.layers[:layers]
        x = torch.randn(b, n, d, device=CUDA)
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=bf16):
            loss = enc(x).float().pow(2).mean()
        loss.backward()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        est = estimate_stack_training_bytes(
            b,
            n,
            d_model=d,
            n_heads=heads,
            n_layers=layers,
            evolving=True,
            recompute=checkpoint,
            bytes_per_value=2 if bf16 else 4,
            device_type="cuda",
        )
        assert 0.5 * peak < est < 2.0 * peak, (checkpoint, bf16, peak / 2**20, est / 2**20)
        del enc, x
        torch.cuda.empty_cache()


# The options that change what a fit computes, on CUDA (bf16 autocast by default): the CPU suite checks what each
# one does; this checks that its tensors, generators and masks live on the fit's device.
CUDA_OPTIONS = [
    {"pooling": "flatten"},
    {"pooling": "max", "head_refit": None},
    {"average_epochs": 2},
    {"average_epochs": None, "validation_fraction": 0.25, "n_iter_no_change": 1},
    {"input_differences": True, "series_normalization": True},
    {"n_estimators": 2, "recompute_attention": True, "attention_downsample": 2},
    {"architecture": "transformer", "precision": "float32"},
    {"architecture": "lstm"},
    {"architecture": "resnet"},
    {"loss": "huber", "max_steps": 4},
]


@pytest.mark.parametrize("regression", [False, True], ids=["classifier", "regressor"])
@pytest.mark.parametrize("options", CUDA_OPTIONS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_options_fit_and_predict_on_cuda(options, regression):
    X, y = make_panel(n=24)
    cls = EADCTRegressor if regression else EADCTClassifier
    flat = {k: v for k, v in options.items() if k in cls._get_param_names()}
    fields = {k: v for k, v in options.items() if k in cls._option_names}  # the estimator's own options
    est = cls(**{**TINY, **flat, "options": fields, "device": "cuda"})
    est.fit(X, X[:, 0].mean(axis=1) if regression else y)
    assert est.device_.startswith("cuda")
    pred = est.predict(X)
    assert pred.shape == (len(X),)
    if regression:
        assert np.isfinite(pred).all()
    else:
        assert np.isfinite(est.predict_proba(X)).all()
