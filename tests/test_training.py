"""Training layer: masks, masked loss, the two stages, checkpoints."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from eadct.networks import ClassificationHead, EADCTEncoder, EncoderConfig, SeriesNetwork
from eadct.training import (
    Checkpointer,
    SeriesTensors,
    StageSettings,
    finetune,
    make_geometric_mask,
    masked_mse,
    pretrain,
)


def run_lengths(mask):
    """Lengths of masked runs along time, (B, N, C) bool."""
    rows = mask.permute(0, 2, 1).reshape(-1, mask.shape[1]).numpy().astype(int)
    out = []
    for row in rows:
        d = np.diff(np.concatenate([[0], row, [0]]))
        out.extend(np.flatnonzero(d == -1) - np.flatnonzero(d == 1))
    return np.array(out)


def test_mask_share_and_mean_run():
    mask = make_geometric_mask((256, 400, 3), 0.15, 3.0, torch.Generator().manual_seed(0))
    assert mask.shape == (256, 400, 3) and mask.dtype == torch.bool
    assert abs(mask.float().mean().item() - 0.15) < 0.01
    assert abs(run_lengths(mask).mean() - 3.0) < 0.15


def test_mask_other_settings_and_short_series():
    mask = make_geometric_mask((400, 200, 2), 0.3, 5.0, torch.Generator().manual_seed(1))
    assert abs(mask.float().mean().item() - 0.3) < 0.02
    assert abs(run_lengths(mask).mean() - 5.0) < 0.4
    assert make_geometric_mask((4, 1, 2), 0.15, 3.0).shape == (4, 1, 2)


def test_mask_is_reproducible_and_per_channel():
    a = make_geometric_mask((8, 50, 4), generator=torch.Generator().manual_seed(3))
    b = make_geometric_mask((8, 50, 4), generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b)
    assert not torch.equal(a[..., 0], a[..., 1])  # channels are masked independently


def test_mask_rejects_bad_ratio():
    with pytest.raises(ValueError, match="mask ratio"):
        make_geometric_mask((1, 5, 1), ratio=1.5)


def test_masked_mse_hand_computed():
    pred = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]])  # (1, 3, 2)
    target = torch.tensor([[[0.0, 2.0], [1.0, 1.0], [9.0, 0.0]]])
    mask = torch.tensor([[[True, False], [True, True], [False, True]]])
    valid = torch.tensor([[True, True, False]])  # step 2 is padding
    # masked & valid entries: (0,0): 1, (1,0): 4, (1,1): 9 -> mean 14 / 3
    assert masked_mse(pred, target, mask, valid).item() == pytest.approx(14 / 3)
    # without padding, (2,1) joins: (14 + 36) / 4
    assert masked_mse(pred, target, mask).item() == pytest.approx(50 / 4)
    # nothing masked: 0, and still differentiable
    zero = masked_mse(pred.requires_grad_(), target, torch.zeros_like(mask))
    assert zero.item() == 0.0
    zero.backward()


def _network_and_data(n=24, length=16, channels=2):
    torch.manual_seed(0)
    cfg = EncoderConfig(
        n_channels=channels, max_len=length, d_model=8, n_heads=2, n_blocks=1, attention_ratio=0.5, d_ff=8
    )
    net = SeriesNetwork(EADCTEncoder(cfg), channels, ClassificationHead(8, 2))
    x = torch.randn(n, length, channels)
    y = torch.arange(n) % 2
    data = SeriesTensors(x, torch.full((n,), length), y)
    return net, data


def _params(module):
    return {k: v.detach().clone() for k, v in module.named_parameters()}


def test_pretraining_changes_encoder_not_task_head():
    net, data = _network_and_data()
    enc0, head0 = _params(net.encoder), _params(net.task_head)
    history = []
    settings = StageSettings(max_epochs=2, batch_size=8)
    pretrain(net, data, settings=settings, generator=torch.Generator().manual_seed(0), history=history)
    assert [r["stage"] for r in history] == ["pretrain", "pretrain"]
    assert any(not torch.equal(v, _params(net.encoder)[k]) for k, v in enc0.items())
    assert all(torch.equal(v, _params(net.task_head)[k]) for k, v in head0.items())


def test_finetuning_trains_head_and_encoder():
    net, data = _network_and_data()
    enc0, head0, rec0 = _params(net.encoder), _params(net.task_head), _params(net.reconstruction_head)
    history = []
    settings = StageSettings(max_epochs=2, batch_size=8)
    finetune(
        net,
        data,
        data,
        task="classification",
        settings=settings,
        generator=torch.Generator().manual_seed(0),
        history=history,
    )
    assert any(not torch.equal(v, _params(net.task_head)[k]) for k, v in head0.items())
    assert any(not torch.equal(v, _params(net.encoder)[k]) for k, v in enc0.items())
    assert all(torch.equal(v, _params(net.reconstruction_head)[k]) for k, v in rec0.items())
    assert {"valid_loss", "valid_accuracy", "train_loss", "time_s", "best"} <= set(history[-1])


def test_any_optimizer_class_is_used():
    calls = []

    class Recording(torch.optim.SGD):
        def step(self, closure=None):
            calls.append(1)
            return super().step(closure)

    net, data = _network_and_data()
    settings = StageSettings(max_epochs=1, batch_size=8, optimizer=Recording, optimizer_kwargs={"momentum": 0.9})
    finetune(
        net, data, task="classification", settings=settings, generator=torch.Generator().manual_seed(0), history=[]
    )
    assert len(calls) == 3  # 24 samples / batch 8


def test_early_stopping_stops():
    net, data = _network_and_data()
    history = []
    settings = StageSettings(max_epochs=200, batch_size=8, lr=1e-2, n_iter_no_change=3)
    generator = torch.Generator().manual_seed(0)
    finetune(net, data, data, task="classification", settings=settings, generator=generator, history=history)
    flags = [r["best"] for r in history]
    assert len(history) < 200
    assert flags[-4:] == [True, False, False, False]  # stopped 3 epochs after the last improvement


def _running_checkpoint(path, fingerprint, **entries):
    """A checkpoint of a fine-tuning stage killed after its first epoch, with ``entries`` added."""
    from eadct.training.loop import _Progress, rng_state

    net, _ = _network_and_data()
    optimizer = torch.optim.RAdam(net.parameters())
    state = {"stage": "finetune", "stage_done": False, **_Progress(epoch=1).state(), "network": net.state_dict(),
             "optimizer": optimizer.state_dict(), "history": [], "rng": rng_state(torch.Generator())}  # fmt: skip
    Checkpointer(path, fingerprint).save({**state, **entries})


def test_a_running_checkpoint_of_an_earlier_version_is_replaced_not_refused(tmp_path):
    """A running stage's checkpoint written when the progress held a moving average (``moving_sum``) is an eadct
    checkpoint: another fit's is deleted with a warning; this fit's is not resumed."""
    path = tmp_path / "fit.pt"
    _running_checkpoint(path, "other fit", moving_sum=None)
    warned = []
    assert Checkpointer(path, "this fit", warn=warned.append).load() is None
    assert not path.exists() and "belongs to another fit" in warned[0]
    _running_checkpoint(path, "this fit", moving_sum=None)
    with pytest.raises(ValueError, match="entries a checkpoint does not have: 'moving_sum'"):
        Checkpointer(path, "this fit").load()
    _running_checkpoint(path, "other fit", unknown=None)  # any other entry: not an eadct checkpoint, kept
    with pytest.raises(ValueError, match="not an eadct checkpoint"):
        Checkpointer(path, "this fit").load()
    assert path.exists()
