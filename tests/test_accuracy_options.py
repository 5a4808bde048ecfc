"""Poolings, the ensembles, automatic token pooling, weight averaging, the Huber loss, the input switches, the
paper configuration of the table profiles and paired comparisons (the options of the accuracy work, issue 15)."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, check_option_fit, make_panel, make_unequal
from sklearn.base import clone

from eadct import PAPER_CONFIGURATION, EADCTClassifier, EADCTRegressor
from eadct.estimators._ensemble import kfold_indices, member_splits
from eadct.networks import POOLINGS, EncoderConfig, pool_steps, pooled_width
from eadct.networks.config import AUTO_ATTENTION_TOKENS, auto_downsample
from eadct.tables._config import load_table
from eadct.tables._paired import compare, effect, paired_differences

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


def _saved_before(model, *names):
    """``model`` as a version from before ``options`` and before ``names`` saved it: its pickled state with the
    option fields in effect flat (as such versions stored them) and ``names`` left out (the estimators upgrade
    such states, ``_persistence``)."""
    state = model.__getstate__()
    del state["options"]
    prefix = "options__"
    fields = {k.removeprefix(prefix): v for k, v in model.get_params().items() if k.startswith(prefix)}
    state.update({k: v for k, v in fields.items() if k not in names})
    for name in names:  # fitted attributes that came with the option
        state.pop(name, None)
    old = type(model).__new__(type(model))
    old.__setstate__(state)
    return old


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
    old = _saved_before(clf, "n_segments")
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


def test_ensemble_of_one_is_the_single_model():
    X, y = make_panel(n=24)
    single = EADCTClassifier(**FAST).fit(X, y)
    one = EADCTClassifier(**FAST, n_estimators=1).fit(X, y)
    np.testing.assert_array_equal(single.predict_proba(X), one.predict_proba(X))
    assert len(one.networks_) == 1 and one.network_ is one.networks_[0]


def test_kfold_members_validate_on_disjoint_folds_of_train_only():
    rng = np.random.RandomState(0)
    y = np.repeat(np.arange(3), [7, 5, 3])
    folds = kfold_indices(len(y), 3, rng, y)
    assert sorted(np.concatenate(folds).tolist()) == list(range(len(y)))  # a partition of TRAIN
    assert all(len(np.unique(y[f])) == 3 for f in folds)  # every class in every fold (3 members or more)
    for train, valid in member_splits(len(y), 3, 0.1, np.random.RandomState(0), y):
        assert set(train).isdisjoint(valid) and len(train) + len(valid) == len(y)
    for train, valid in member_splits(len(y), 3, 0.0, np.random.RandomState(0), y):
        assert train.tolist() == list(range(len(y))) and len(valid) == 0
    with pytest.raises(ValueError, match="n_estimators=5 needs at least 5"):
        member_splits(3, 5, 0.1, rng)


@pytest.mark.parametrize("fraction, sizes", [(0.0, (24, 0)), (0.1, (16, 8))])
def test_members_train_on_all_of_train_without_validation_and_on_folds_with_it(monkeypatch, fraction, sizes):
    """validation_fraction=0 (the classifier's default): InceptionTime's ensemble, every member on all of
    TRAIN from its own seed; a validation split: the k-fold ensemble."""
    X, y = make_panel(n=24)
    seen, real = [], EADCTClassifier._training_data

    def recording(self, panel, targets, extra, train_idx, valid_idx, device):
        seen.append((len(train_idx), len(valid_idx)))
        return real(self, panel, targets, extra, train_idx, valid_idx, device)

    monkeypatch.setattr(EADCTClassifier, "_training_data", recording)
    ens = EADCTClassifier(**FAST, n_estimators=3, validation_fraction=fraction).fit(X, y)
    assert seen == [sizes] * 3
    members = [pickle.loads(pickle.dumps(ens)) for _ in range(3)]
    for i, solo in enumerate(members):
        solo.networks_ = [ens.networks_[i]]
    probas = [m.predict_proba(X) for m in members]
    assert not np.array_equal(probas[0], probas[1]) and not np.array_equal(probas[1], probas[2])


def test_ensemble_averages_members_and_round_trips(tmp_path):
    X, y = make_panel(n=24)
    ens = EADCTClassifier(**FAST, n_estimators=3).fit(X, y)
    assert len(ens.networks_) == 3 and {r["member"] for r in ens.history_} == {0, 1, 2}
    members = []
    for net in ens.networks_:
        solo = pickle.loads(pickle.dumps(ens))
        solo.networks_ = [net]
        members.append(solo.predict_proba(X))
    np.testing.assert_allclose(ens.predict_proba(X), np.mean(members, axis=0), atol=1e-12)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(ens)).predict_proba(X), ens.predict_proba(X))
    np.testing.assert_array_equal(clone(ens).fit(X, y).predict_proba(X), ens.predict_proba(X))
    # checkpoints: one file per member; a second fit with the same settings loads them instead of training
    path = tmp_path / "ens.pt"
    first = EADCTClassifier(**FAST, n_estimators=2, checkpoint_path=str(path)).fit(X, y)
    assert path.exists() and (tmp_path / "ens.pt.member1").exists()
    again = EADCTClassifier(**FAST, n_estimators=2, checkpoint_path=str(path)).fit(X, y)
    np.testing.assert_array_equal(again.predict_proba(X), first.predict_proba(X))


def test_ensemble_regressor_averages_outputs():
    X, _, target = make_unequal()
    reg = EADCTRegressor(**FAST, n_estimators=2).fit(X, target)
    assert reg.predict(X).shape == (len(X),) and np.isfinite(reg.predict(X)).all()


def test_auto_attention_downsample():
    assert auto_downsample(AUTO_ATTENTION_TOKENS) == 1 and auto_downsample(AUTO_ATTENTION_TOKENS + 1) == 2
    assert EncoderConfig(n_channels=2, max_len=315, attention_downsample="auto").attention_downsample == 3
    X = np.random.default_rng(0).normal(size=(12, 2, 2 * AUTO_ATTENTION_TOKENS + 5))
    y = np.arange(12) % 2
    clf = EADCTClassifier(**FAST, options={"attention_downsample": "auto"}).fit(X, y)
    assert clf.network_.encoder.layers[0].attention.downsample == 3
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict(X), clf.predict(X))
    with pytest.raises(ValueError, match="attention_downsample must be an int >= 1 or 'auto'"):
        EADCTClassifier(**FAST, options={"attention_downsample": "fast"}).fit(X, y)


def test_attention_tokens_is_the_cap_of_auto():
    """``attention_tokens`` is the cap of ``attention_downsample="auto"``'s rule (an int factor ignores it); the
    option changes the fit, is deterministic, clones and pickles, is checked, and a model saved before it existed
    loads with the cap it was fitted under (128) and predicts as before."""
    assert EncoderConfig(n_channels=2, max_len=315, attention_tokens=64).attention_downsample == 5
    assert EncoderConfig(n_channels=2, max_len=64, attention_tokens=64).attention_downsample == 1
    fixed = EncoderConfig(n_channels=2, max_len=315, attention_downsample=2, attention_tokens=64)
    assert fixed.attention_downsample == 2
    X, y = make_panel(n=16, length=40)
    check_option_fit(EADCTClassifier, FAST, {"options": {"attention_tokens": 16}}, X, y)
    clf = EADCTClassifier(**FAST, options={"attention_tokens": 16}).fit(X, y)
    assert clf.network_.encoder.layers[0].attention.downsample == 3
    for bad in (0, 2.5, "64"):
        with pytest.raises(ValueError, match="attention_tokens must be an int >= 1"):
            EADCTClassifier(**FAST, options={"attention_tokens": bad}).fit(X, y)
    # saved before the option: fitted under "auto"'s cap of 128, which pools these 140 steps by 2
    X, y = make_panel(n=12, length=AUTO_ATTENTION_TOKENS + 12)
    clf = EADCTClassifier(**FAST).fit(X, y)
    old = _saved_before(clf, "attention_tokens")
    assert old.get_params()["options__attention_tokens"] == AUTO_ATTENTION_TOKENS == 128
    assert old.network_.encoder.layers[0].attention.downsample == 2
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))


def test_paper_profiles_use_the_paper_configuration_and_defaults_the_estimators():
    # the tables keep flat settings: the paper configuration's options are fields beside its parameters
    paper = {k: v for k, v in PAPER_CONFIGURATION.items() if k != "options"} | PAPER_CONFIGURATION["options"]
    table = load_table("accuracy")
    assert table.profile("defaults").base_params() == {
        k: v for k, v in EADCTClassifier()._settings().items() if k in paper
    }
    assert load_table("table2").profile("quick").base_params() == paper
    epochs = ("max_epochs", "pretrain_epochs", "n_iter_no_change")
    for task, estimator in (("classification", EADCTClassifier()), ("regression", EADCTRegressor())):
        assert table.profile("defaults").epochs(task) == {k: estimator.get_params()[k] for k in epochs}
    assert table.compare == ("EA-DC (defaults)", "Transformer (defaults)")


def test_paired_comparison():
    c = compare([0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [0.8, 0.8, 0.6, 0.5, 0.4, 0.3], higher_is_better=True)
    assert (c["wins"], c["ties"], c["losses"], c["n"]) == (5, 1, 0, 6)
    assert c["p"] == pytest.approx(0.0625)  # exact two-sided test, 5 positive differences
    # errors compare relative to their scale: 1000 -> 900 weighs as 1.0 -> 0.9
    np.testing.assert_allclose(paired_differences([900, 0.9], [1000, 1.0], False), [2 / 19, 2 / 19])
    assert compare([1.0], [0.5], True)["p"] is None
    # the effect: mean accuracy difference; for errors the geometric mean of the ratios
    assert effect([0.9, 0.5], [0.8, 0.6], True) == "+0.000"
    assert effect([0.9, 0.7], [0.8, 0.6], True) == "+0.100"
    assert effect([2.0, 50.0], [1.0, 200.0], False) == "x0.707"  # sqrt(2 * 0.25)
    assert effect([], [], True) == "n/a"


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
    resumed = _killed_then_resumed(EADCTClassifier, params, X, y, tmp_path, monkeypatch).predict_proba(X)
    np.testing.assert_array_equal(resumed, whole)


def _killed_then_resumed(cls, params, X, y, tmp_path, monkeypatch):
    """``cls(**params)`` fitted with a checkpoint, killed in its 4th epoch (pretraining epoch 1, fine-tuning epochs
    1-2, then killed in epoch 3), then fitted again with the same checkpoint: the resumed estimator."""
    from eadct.training import loop

    path = tmp_path / "fit.pt"
    calls, original = [], loop._train_epoch

    def dying(*args, **kwargs):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    monkeypatch.setattr(loop, "_train_epoch", dying)
    with pytest.raises(KeyboardInterrupt):
        cls(**params, checkpoint_path=str(path)).fit(X, y)
    monkeypatch.undo()
    return cls(**params, checkpoint_path=str(path)).fit(X, y)


def test_huber_loss_scales_targets_robustly():
    from eadct.estimators._regressor import _target_location_scale

    y = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [1000.0]])
    centre, scale = _target_location_scale(y, "huber")
    q25, q75 = np.percentile(y[:, 0], [25, 75])
    np.testing.assert_allclose(centre, [3.5])  # the median, not the mean (169)
    np.testing.assert_allclose(scale, [(q75 - q25) / 1.349])
    centre, scale = _target_location_scale(y, "squared_error")
    np.testing.assert_allclose(centre, y.mean(axis=0))
    np.testing.assert_allclose(scale, y.std(axis=0))
    # no spread between the quartiles: the standard deviation instead
    flat = np.array([[0.0]] * 9 + [[1.0]])
    assert _target_location_scale(flat, "huber")[1][0] == pytest.approx(flat.std())


def test_huber_loss_is_quadratic_then_linear():
    from eadct.training import REGRESSION_LOSSES
    from eadct.training.stages import HUBER_DELTA

    huber = REGRESSION_LOSSES["huber"]
    small, large = torch.tensor([0.5]), torch.tensor([10.0])
    zero = torch.zeros(1)
    assert float(huber(small, zero)) == pytest.approx(0.5 * 0.25)
    assert float(huber(large, zero)) == pytest.approx(HUBER_DELTA * (10.0 - 0.5 * HUBER_DELTA))
    assert float(REGRESSION_LOSSES["squared_error"](large, zero)) == pytest.approx(100.0)


def test_huber_regressor_fits_deterministically_and_round_trips():
    X, _ = make_panel(n=24)
    y = np.asarray(X).mean(axis=(1, 2))
    reg = EADCTRegressor(**FAST, options={"loss": "huber"}).fit(X, y)
    pred = reg.predict(X)
    assert pred.shape == (len(y),)
    assert reg.get_params()["options__loss"] == "huber"
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg)).predict(X), pred)
    np.testing.assert_array_equal(clone(reg).fit(X, y).predict(X), pred)
    # a different loss is a different fit
    assert not np.array_equal(EADCTRegressor(**FAST).fit(X, y).predict(X), pred)
    with pytest.raises(ValueError, match="loss must be one of"):
        EADCTRegressor(**FAST, options={"loss": "absolute"}).fit(X, y)
    assert "options__loss" not in EADCTClassifier().get_params()


def test_huber_loss_resists_extreme_targets():
    """A few extreme targets pull the squared-error fit of the other series far more than the Huber fit."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 1, 12))
    y = X[:, 0, :].mean(axis=1) * 3.0
    y_dirty = y.copy()
    y_dirty[:3] = 400.0
    clean = np.arange(3, 60)
    params = {**TINY, "max_epochs": 30, "pretrain_epochs": 0, "validation_fraction": 0.0, "dropout": 0.0}
    errors = {}
    for loss in ("squared_error", "huber"):
        pred = EADCTRegressor(**params, options={"loss": loss}).fit(X, y_dirty).predict(X[clean])
        errors[loss] = np.sqrt(np.mean((pred - y[clean]) ** 2))
    assert errors["huber"] < 0.5 * errors["squared_error"], errors


def test_conv_kernel_size_sets_the_dilated_convolutions_and_old_models_load_with_three():
    X, y = make_panel(n=16)
    clf = EADCTClassifier(**FAST, options={"conv_kernel_size": 5}).fit(X, y)
    kernels = {m.kernel_size[0] for m in clf.network_.modules() if isinstance(m, torch.nn.Conv1d) and m.dilation[0]}
    assert 5 in kernels and 3 not in kernels
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), clf.predict_proba(X))
    old = _saved_before(EADCTClassifier(**FAST).fit(X, y), "conv_kernel_size")
    assert old.get_params()["options__conv_kernel_size"] == 3
    with pytest.raises(ValueError, match="conv_kernel_size must be a positive int"):
        EADCTClassifier(options={"conv_kernel_size": 0}).fit(X, y)


def test_input_differences_embedding_reads_scaled_first_differences():
    from eadct.networks import InputEmbedding

    torch.manual_seed(0)
    emb = InputEmbedding(2, 8, 10, dropout=0.0, differences=True).eval()
    assert emb.projection.in_features == 4 and torch.equal(emb.difference_scale, torch.ones(2))
    x = torch.randn(3, 10, 2)
    valid = torch.arange(10)[None, :] < torch.tensor([[10], [6], [1]])
    d = InputEmbedding.first_differences(x * valid.unsqueeze(-1), valid)
    assert torch.equal(d[:, 0], torch.zeros(3, 2)) and torch.equal(d[1, 6:], torch.zeros(4, 2))
    torch.testing.assert_close(d[0, 1:], x[0, 1:] - x[0, :-1])
    # the scale: 1 / std of the differences between real neighbouring steps, here of series 0 and 1
    emb.fit_difference_scale(x, valid)
    pairs = torch.cat([x[0, 1:] - x[0, :-1], x[1, 1:6] - x[1, :5]])
    torch.testing.assert_close(emb.difference_scale, 1 / pairs.double().std(dim=0, unbiased=False).float())
    emb.fit_difference_scale(torch.ones(2, 5, 2))  # constant channels keep 1
    assert torch.equal(emb.difference_scale, torch.ones(2))
    # a series embeds the same alone and padded in a batch
    emb.fit_difference_scale(x, valid)
    torch.testing.assert_close(emb(x, valid)[1, :6], emb(x[1:2, :6])[0])
    # the value at a step reaches the output only there and at the next step (its difference to it)
    changed = x.clone()
    changed[0, 4] += 1.0
    moved = (emb(changed) - emb(x)).abs().sum(dim=-1)[0] > 0
    assert moved.nonzero().flatten().tolist() == [4, 5]


def _check_stem_switch(clf, X, y, name: str, flag: str) -> None:
    """``clf``, fitted on ``X, y`` with the stem switch ``name`` on: clone refits it exactly, pickle keeps it, it
    predicts otherwise than the defaults, a model saved before the switch loads with it off (the embedding's
    ``flag`` False), and a value that is not a bool is a clear error."""
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), clf.predict_proba(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), clf.predict_proba(X))
    off = EADCTClassifier(**FAST, options={name: False}).fit(X, y)
    assert not np.array_equal(off.predict_proba(X), clf.predict_proba(X))
    old = _saved_before(off, name)
    assert old.get_params()[f"options__{name}"] is False and not getattr(old.network_.encoder.embedding, flag)
    with pytest.raises(ValueError, match=f"{name} must be True or False"):
        EADCTClassifier(options={name: "yes"}).fit(X, y)


def test_input_differences_fit_sets_the_scale_on_train_only_and_round_trips():
    X, y = make_panel(n=16)
    clf = EADCTClassifier(**FAST, options={"input_differences": True}).fit(X, y)
    emb = clf.network_.encoder.embedding
    assert emb.projection.in_features == 2 * X.shape[1]
    # the scale comes from the standardised TRAIN series the fit saw
    z = (np.asarray(X, dtype=np.float64) - clf.channel_mean_[None, :, None]) / clf.channel_std_[None, :, None]
    expected = 1 / np.diff(z, axis=2).transpose(1, 0, 2).reshape(X.shape[1], -1).std(axis=1)
    np.testing.assert_allclose(emb.difference_scale.numpy(), expected, rtol=1e-4)
    _check_stem_switch(clf, X, y, "input_differences", "differences")
    EADCTClassifier(**FAST, options={"input_differences": np.True_}).fit(X, y)  # a parameter grid's numpy bool


def test_input_differences_regressor_fits_unequal_lengths():
    X, _, target = make_unequal(lengths=(3, 15))
    reg = EADCTRegressor(**FAST, options={"input_differences": True}).fit(X, target)
    assert reg.predict(X).shape == (len(X),) and np.isfinite(reg.predict(X)).all()
    np.testing.assert_array_equal(clone(reg).fit(X, target).predict(X), reg.predict(X))


def test_series_normalization_embedding_reads_each_series_shape_and_level():
    from eadct.networks import InputEmbedding
    from eadct.networks.embedding import SERIES_STD_FLOOR

    torch.manual_seed(0)
    x = torch.randn(3, 10, 2) * torch.tensor([1.0, 5.0]) + torch.tensor([0.0, 3.0])
    x[2] = 7.0  # a flat series: shape 0, its level, the floor's log
    valid = torch.arange(10)[None, :] < torch.tensor([[10], [6], [4]])
    x = x * valid.unsqueeze(-1)
    z = InputEmbedding.normalized_series(x, valid)
    assert z.shape == (3, 10, 6) and torch.equal(z[1, 6:], torch.zeros(4, 6))
    real = x[1, :6].double()
    mean, std = real.mean(dim=0), real.std(dim=0, unbiased=False)
    torch.testing.assert_close(z[1, :6, :2].double(), (real - mean) / std)
    torch.testing.assert_close(z[1, :6, 2:4].double(), mean.expand(6, 2))
    torch.testing.assert_close(z[1, :6, 4:].double(), std.log().expand(6, 2))
    flat = [0.0, 0.0, 7.0, 7.0, math.log(SERIES_STD_FLOOR), math.log(SERIES_STD_FLOOR)]
    torch.testing.assert_close(z[2, :4], torch.tensor([flat] * 4))
    # the shape channels do not move when a series is shifted and scaled; the level channels take it all
    moved = InputEmbedding.normalized_series(3.0 * x[:1] + 2.0)
    torch.testing.assert_close(moved[..., :2], z[:1, :, :2], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(moved[..., 2:4], 3.0 * z[:1, :, 2:4] + 2.0)
    emb = InputEmbedding(2, 8, 10, dropout=0.0, differences=True, series_normalization=True).eval()
    assert emb.projection.in_features == 8
    torch.testing.assert_close(emb(x, valid)[1, :6], emb(x[1:2, :6])[0])  # alone or padded in a batch


def test_series_normalization_fits_round_trips_and_is_off_in_old_models():
    X, y = make_panel(n=16)
    X = X * np.linspace(1, 40, len(X))[:, None, None]  # levels far apart
    clf = EADCTClassifier(**FAST, options={"series_normalization": True}).fit(X, y)
    assert clf.network_.encoder.embedding.projection.in_features == 3 * X.shape[1]
    _check_stem_switch(clf, X, y, "series_normalization", "series_normalization")
    Xu, _, target = make_unequal(lengths=(3, 15))
    reg = EADCTRegressor(**FAST, options={"series_normalization": True, "input_differences": True}).fit(Xu, target)
    assert reg.predict(Xu).shape == (len(Xu),) and np.isfinite(reg.predict(Xu)).all()
    np.testing.assert_array_equal(clone(reg).fit(Xu, target).predict(Xu), reg.predict(Xu))
