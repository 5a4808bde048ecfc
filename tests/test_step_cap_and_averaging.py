"""Weight averaging (``average_epochs``: the mean of the last epochs' weights) and the step cap of a training stage
(``max_steps``, :meth:`StageSettings.capped`): the epochs the cap leaves, the fits they give, resuming them after a
kill; docs/training.md."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, killed_then_resumed, make_panel, make_unequal
from sklearn.base import clone

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.networks import ClassificationHead, EADCTEncoder, EncoderConfig, SeriesNetwork
from eadct.training import Checkpointer, SeriesTensors, StageSettings, train_two_stage

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1, "random_state": 0}


def test_step_cap_lowers_the_epochs_and_scales_the_averaged_share():
    s = StageSettings(max_epochs=60, batch_size=16, average_epochs=20, max_steps=1200)
    assert s.capped(314) is s  # 20 batches x 60 epochs = 1200 steps: the cap does not bind
    flood = s.capped(471)  # 30 batches: 40 epochs, the last 13 (20 * 40 / 60 = 13.3) averaged
    assert (flood.max_epochs, flood.average_epochs, flood.batch_size) == (40, 13, 16)
    chilled = s.capped(321)  # 21 batches: 57 epochs, 19 averaged
    assert (chilled.max_epochs, chilled.average_epochs) == (57, 19)
    tiny = s.capped(10**6)  # more batches than the cap: one epoch, one averaged
    assert (tiny.max_epochs, tiny.average_epochs) == (1, 1)
    plain = StageSettings(max_epochs=60, batch_size=16, max_steps=1200).capped(471)
    assert (plain.max_epochs, plain.average_epochs) == (40, None)
    uncapped = StageSettings(max_epochs=60, batch_size=16, average_epochs=20)
    assert uncapped.capped(10**6) is uncapped
    # a cap of 900 (the regressor's default until issue 86): FloodModeling1 30 epochs (10 averaged),
    # ChilledWaterPredictor 42 (14), a set of 240 series (15 batches) all 60
    cap = StageSettings(max_epochs=60, batch_size=16, average_epochs=20, max_steps=900)
    assert (cap.capped(471).max_epochs, cap.capped(471).average_epochs) == (30, 10)
    assert (cap.capped(321).max_epochs, cap.capped(321).average_epochs) == (42, 14)
    assert cap.capped(240) is cap
    off = StageSettings(max_epochs=0, batch_size=8, max_steps=400)
    assert off.capped(30) is off  # a stage of 0 epochs stays off


def _network_and_data(n=20, length=16, channels=2):
    """A tiny classification network (seeded) and ``n`` series of unequal length with two classes."""
    torch.manual_seed(0)
    cfg = EncoderConfig(
        n_channels=channels, max_len=length, d_model=8, n_heads=2, n_blocks=1, attention_ratio=0.5, d_ff=8
    )
    net = SeriesNetwork(EADCTEncoder(cfg), channels, ClassificationHead(8, 2))
    g = torch.Generator().manual_seed(0)
    lengths = torch.randint(6, length + 1, (n,), generator=g)
    x = torch.randn(n, length, channels, generator=g) * (torch.arange(length)[None, :] < lengths[:, None])[..., None]
    return net, SeriesTensors(x, lengths, torch.arange(n) % 2)


def _fit(pretrain: StageSettings | None, finetune: StageSettings | None, checkpointer=None):
    """Both stages on the same 20 series (no validation split): the network's state and the history's epochs."""
    net, data = _network_and_data()
    history = []
    task = "classification" if finetune is not None else None
    train_two_stage(
        net,
        task=task,
        pretrain_data=(data, None),
        finetune_data=(data, None),
        pretrain_settings=pretrain,
        finetune_settings=finetune,
        generator=torch.Generator().manual_seed(1),
        history=history,
        checkpointer=checkpointer,
    )
    return net.state_dict(), [(r["stage"], r["epoch"]) for r in history]


def _assert_same_state(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=0, atol=0, msg=key)


def test_a_capped_stage_is_the_stage_with_fewer_epochs():
    """20 series in batches of 4: 5 steps per epoch, so a cap of 10 steps is 2 epochs of each stage."""
    capped, epochs = _fit(StageSettings(4, 4, max_steps=10), StageSettings(4, 4, max_steps=10))
    assert epochs == [("pretrain", 1), ("pretrain", 2), ("finetune", 1), ("finetune", 2)]
    _assert_same_state(capped, _fit(StageSettings(2, 4), StageSettings(2, 4))[0])
    # with weight averaging: 2 of 4 epochs averaged become 1 of 2
    averaged, _ = _fit(None, StageSettings(4, 4, average_epochs=2, max_steps=10))
    _assert_same_state(averaged, _fit(None, StageSettings(2, 4, average_epochs=1))[0])
    # a cap that does not bind changes nothing; pretraining alone (a representation) is capped as well
    loose, _ = _fit(StageSettings(3, 4, max_steps=1000), StageSettings(3, 4, max_steps=1000))
    _assert_same_state(loose, _fit(StageSettings(3, 4), StageSettings(3, 4))[0])
    alone, epochs = _fit(StageSettings(4, 4, max_steps=10), None)
    assert epochs == [("pretrain", 1), ("pretrain", 2)]
    _assert_same_state(alone, _fit(StageSettings(2, 4), None)[0])


def test_a_capped_averaged_stage_resumes_exactly_after_a_kill(tmp_path, monkeypatch):
    """Killed in fine-tuning's 2nd epoch of 3 (a cap of 15 steps on 6 epochs, the last 2 averaged), the fit started
    again from its checkpoint ends with the weights of an uninterrupted one."""
    from eadct.training import loop

    settings = (StageSettings(1, 4), StageSettings(6, 4, average_epochs=4, max_steps=15))
    whole, epochs = _fit(*settings)
    assert [e for stage, e in epochs if stage == "finetune"] == [1, 2, 3]
    path = tmp_path / "fit.pt"
    calls, original = [], loop._train_epoch

    def dying(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(loop, "_train_epoch", dying)
    with pytest.raises(KeyboardInterrupt):
        _fit(*settings, Checkpointer(path, "fit"))
    monkeypatch.undo()
    resumed, epochs = _fit(*settings, Checkpointer(path, "fit"))
    assert epochs == [("pretrain", 1), ("finetune", 1), ("finetune", 2), ("finetune", 3)]
    _assert_same_state(resumed, whole)


# ---------------------------------------------------------------- the estimators' average_epochs


def _snapshots_per_epoch(monkeypatch):
    """Record the network's state after every fine-tuning epoch (what the averaging must use)."""
    from eadct.training import loop

    seen = []
    original = loop._Progress.update

    def update(self, key, network, epoch):
        seen.append({k: v.detach().clone() for k, v in network.state_dict().items()})
        return original(self, key, network, epoch)

    monkeypatch.setattr(loop._Progress, "update", update)
    return seen


def test_average_epochs_keeps_the_mean_of_the_last_epochs(monkeypatch):
    X, y = make_panel(n=20)
    seen = _snapshots_per_epoch(monkeypatch)
    params = {**TINY, "max_epochs": 4, "pretrain_epochs": 0, "n_iter_no_change": 1, "options": {"average_epochs": 3}}
    clf = EADCTClassifier(**params).fit(X, y)
    # every epoch ran (no early stopping at patience 1), and the weights are the mean of epochs 2-4
    assert [r["epoch"] for r in clf.history_ if r["stage"] == "finetune"] == [1, 2, 3, 4]
    state = clf.network_.state_dict()
    for key, value in state.items():
        if value.is_floating_point():
            expected = torch.stack([s[key].double() for s in seen[1:]]).mean(0).to(value.dtype)
            torch.testing.assert_close(value, expected)
        else:
            torch.testing.assert_close(value, seen[-1][key])
    monkeypatch.undo()
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), proba)  # deterministic
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)
    assert clone(clf).get_params()["options__average_epochs"] == 3
    reg = EADCTRegressor(**FAST, options={"average_epochs": 2}).fit(X, np.arange(20.0))
    assert np.isfinite(reg.predict(X)).all()
    with pytest.raises(ValueError, match="average_epochs must be None or a positive int"):
        EADCTClassifier(**FAST, options={"average_epochs": 0}).fit(X, y)


def test_average_epochs_resumes_exactly_after_a_kill(tmp_path, monkeypatch):
    """A fit killed inside the averaged tail and started again ends with the weights of an uninterrupted one."""

    X, y = make_panel(n=20)
    params = {**TINY, "max_epochs": 4, "pretrain_epochs": 1, "options": {"average_epochs": 3}, "random_state": 0}
    whole = EADCTClassifier(**params).fit(X, y).predict_proba(X)
    resumed = killed_then_resumed(EADCTClassifier, params, X, y, tmp_path, monkeypatch).predict_proba(X)
    np.testing.assert_array_equal(resumed, whole)


# ---------------------------------------------------------------- the estimators' max_steps


def test_the_representation_caps_its_pretraining():
    X, _, _ = make_unequal(n=20)
    settings = {k: v for k, v in FAST.items() if k != "pretrain_epochs"}
    rep = EADCTRepresentation(**{**settings, "batch_size": 4, "max_epochs": 4}, options={"max_steps": 10}).fit(X)
    assert [r["epoch"] for r in rep.history_] == [1, 2]


def test_the_step_cap_is_checked_and_deterministic():
    X, y = make_panel(n=16)
    for bad in (0, -3, 2.5, "10"):
        with pytest.raises(ValueError, match="max_steps must be None or a positive int"):
            EADCTClassifier(options={"max_steps": bad}).fit(X, y)
    clf = EADCTClassifier(**FAST, options={"max_steps": 1}).fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), proba)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)
