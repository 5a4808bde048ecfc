"""The options `augmentation` (magnitude augmentation of fine-tuning batches), `window_slicing` (time
augmentation), `mask_augmentation` (the pretraining's masks in fine-tuning), `average_batch_norm` (BatchNorm
statistics after weight averaging), `label_smoothing` and `mixup`; docs/training.md."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel, make_unequal, saved_without
from sklearn.base import clone

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.training import augment_magnitude, augment_mask, augment_window_slice, mixup_batch
from eadct.training import stages as stages_module
from eadct.training.augment import JITTER_SHARE

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1, "random_state": 0}


def test_scale_and_noise_have_the_documented_spread():
    g = torch.Generator().manual_seed(0)
    ones = torch.ones(4000, 50, 2)
    out = augment_magnitude(ones, None, 0.2, g)
    assert out.shape == ones.shape
    # the mean over a series' steps is its channel's scale factor (the noise averages out)
    scale = out.mean(dim=1)
    assert abs(float(scale.mean()) - 1.0) < 0.01 and abs(float(scale.std()) - 0.2) < 0.01
    noise = augment_magnitude(torch.zeros(200, 200, 2), None, 0.2, g)  # zeros: noise only
    assert abs(float(noise.std()) - JITTER_SHARE * 0.2) < 0.002


def test_padding_stays_zero_and_draws_follow_the_generator():
    x = torch.randn(3, 6, 2)
    valid = torch.arange(6)[None, :] < torch.tensor([[6], [4], [2]])
    x = x * valid.unsqueeze(-1)
    a = augment_magnitude(x, valid, 0.1, torch.Generator().manual_seed(1))
    b = augment_magnitude(x, valid, 0.1, torch.Generator().manual_seed(1))
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert bool((a[~valid] == 0).all()) and not torch.equal(a[valid], x[valid])


def test_zero_is_the_model_without_augmentation_and_the_option_changes_the_fit():
    X, y = make_panel(n=20)
    plain = EADCTClassifier(**FAST).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(EADCTClassifier(**FAST, augmentation=0.0).fit(X, y).predict_proba(X), plain)
    augmented = EADCTClassifier(**FAST, augmentation=0.2).fit(X, y).predict_proba(X)
    assert not np.array_equal(augmented, plain)


def test_augmented_fit_is_deterministic_and_round_trips():
    X, y, target = make_unequal(n=16)
    clf = EADCTClassifier(**FAST, augmentation=0.1).fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), proba)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)
    reg = EADCTRegressor(**FAST, augmentation=0.1).fit(X, target)
    assert np.isfinite(reg.predict(X)).all()


@pytest.mark.parametrize("function, option", [("augment_magnitude", "augmentation"),
                                              ("augment_window_slice", "window_slicing"),
                                              ("augment_mask", "mask_augmentation")])  # fmt: skip
def test_only_fine_tuning_training_batches_are_augmented(monkeypatch, function, option):
    """Pretraining, the validation split and prediction see the series as they are (magnitude augmentation,
    window slicing and masking alike)."""
    X, y = make_panel(n=20)
    seen = []

    def recording(x, valid, *strength_and_generator):
        seen.append(x.shape[0])
        return x

    monkeypatch.setattr(stages_module, function, recording)
    params = {**FAST, "max_epochs": 3, "pretrain_epochs": 2, "batch_size": 8, "validation_fraction": 0.25}
    clf = EADCTClassifier(**params, **{option: 0.1}).fit(X, y)
    # three epochs of the same training series, fewer than the 20 (a quarter or so validates), in batches of 8
    assert len(seen) % 3 == 0 and max(seen) <= 8
    per_epoch = [sum(seen[i : i + len(seen) // 3]) for i in range(0, len(seen), len(seen) // 3)]
    assert per_epoch[0] == per_epoch[1] == per_epoch[2] and 10 <= per_epoch[0] <= 15
    n_calls = len(seen)
    clf.predict(X)
    assert len(seen) == n_calls


def test_bad_strength_is_refused_and_the_representation_has_no_such_option():
    X, y = make_panel(n=12)
    with pytest.raises(ValueError, match="augmentation must be a number >= 0"):
        EADCTClassifier(augmentation=-0.1).fit(X, y)
    with pytest.raises(TypeError, match="augmentation"):
        EADCTRepresentation(augmentation=0.1)


def test_models_saved_before_augmentation_load_without_it():
    X, y = make_panel(n=16)
    clf = EADCTClassifier(**FAST).fit(X, y)
    old = saved_without(clf, "augmentation")
    assert old.augmentation == 0.0
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))


# ---------------------------------------------------------------- average_batch_norm="recompute"

AVERAGED = {**TINY, "max_epochs": 3, "pretrain_epochs": 1, "average_epochs": 2, "random_state": 0}


def _batch_norm_buffers(model):
    return {k: v for k, v in model.network_.state_dict().items() if "running" in k}


def test_recompute_changes_only_the_batch_norm_statistics():
    X, y = make_panel(n=20)
    mean = EADCTClassifier(**AVERAGED).fit(X, y)
    again = EADCTClassifier(**AVERAGED, average_batch_norm="recompute").fit(X, y)
    for key, value in mean.network_.state_dict().items():
        if "running" in key:
            assert not torch.equal(value, again.network_.state_dict()[key]), key
        elif key.endswith("num_batches_tracked"):
            continue
        else:
            torch.testing.assert_close(value, again.network_.state_dict()[key], rtol=0, atol=0)
    norms = [m for m in again.network_.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    assert norms and all(m.momentum == 0.1 for m in norms) and not again.network_.training
    default = EADCTClassifier(**AVERAGED, average_batch_norm="mean").fit(X, y)
    np.testing.assert_array_equal(default.predict_proba(X), mean.predict_proba(X))


def test_recomputed_statistics_are_those_of_the_training_series_under_the_kept_weights():
    """One batch holding every training series: the running mean is that batch's mean at each BatchNorm."""
    from eadct.training.data import SeriesTensors
    from eadct.training.loop import StageSettings, recompute_batch_norm

    X, y = make_panel(n=12)
    clf = EADCTClassifier(**{**AVERAGED, "dropout": 0.0}).fit(X, y)
    net = clf.network_
    norms = [m for m in net.modules() if isinstance(m, torch.nn.BatchNorm1d)]
    seen = {}
    hooks = [m.register_forward_hook(lambda m, a, out: seen.setdefault(m, a[0].detach().clone())) for m in norms]
    values = torch.as_tensor(np.transpose((X - clf.channel_mean_[None, :, None]) / clf.channel_std_[None, :, None],
                                          (0, 2, 1)), dtype=torch.float32)  # fmt: skip
    data = SeriesTensors(values, torch.full((12,), X.shape[2]), torch.as_tensor(y))
    recompute_batch_norm(net, lambda n, x, v, t: n(x, v), data, StageSettings(max_epochs=1, batch_size=12))
    for h in hooks:
        h.remove()
    for m in norms:
        flat = seen[m].reshape(-1, seen[m].shape[-1])  # (B * N, d): every step is valid here
        torch.testing.assert_close(m.running_mean, flat.mean(dim=0), rtol=1e-4, atol=1e-5)
        assert int(m.num_batches_tracked) == 1


def test_recompute_is_deterministic_and_round_trips():
    """(Resuming after a kill: test_accuracy_options.test_average_epochs_resumes_exactly_after_a_kill.)"""
    X, y = make_panel(n=20)
    clf = EADCTClassifier(**AVERAGED, average_batch_norm="recompute").fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), proba)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)


def test_average_batch_norm_is_checked_and_old_models_load_with_the_mean():
    X, y = make_panel(n=16)
    with pytest.raises(ValueError, match="average_batch_norm must be 'mean' or 'recompute'"):
        EADCTClassifier(average_batch_norm="update").fit(X, y)
    with pytest.raises(TypeError, match="average_batch_norm"):
        EADCTRepresentation(average_batch_norm="recompute")
    old = saved_without(EADCTClassifier(**FAST).fit(X, y), "average_batch_norm")
    assert old.average_batch_norm == "mean"


# ---------------------------------------------------------------- label_smoothing


def assert_zero_is_plain_and_the_option_is_deterministic(name: str, value: float) -> None:
    """``name=0`` fits the plain classifier exactly; ``name=value`` changes the fit, and its clone and pickle
    predict what it does."""
    X, y = make_panel(n=20)
    plain = EADCTClassifier(**FAST).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(EADCTClassifier(**FAST, **{name: 0.0}).fit(X, y).predict_proba(X), plain)
    clf = EADCTClassifier(**FAST, **{name: value}).fit(X, y)
    proba = clf.predict_proba(X)
    assert not np.array_equal(proba, plain)
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), proba)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)


def test_label_smoothing_zero_is_the_plain_model_and_a_smoothed_fit_is_deterministic():
    assert_zero_is_plain_and_the_option_is_deterministic("label_smoothing", 0.2)


def test_label_smoothing_enters_the_training_loss_only(monkeypatch):
    """Training batches (gradients on) use the smoothing; the validation loss is the plain cross-entropy."""
    X, y = make_panel(n=20)
    calls = []
    real = torch.nn.functional.cross_entropy

    def recording(outputs, target, label_smoothing=0.0):
        calls.append((torch.is_grad_enabled(), label_smoothing))
        return real(outputs, target, label_smoothing=label_smoothing)

    monkeypatch.setattr(stages_module.F, "cross_entropy", recording)
    params = {**FAST, "max_epochs": 2, "validation_fraction": 0.25, "average_epochs": None}
    EADCTClassifier(**params, label_smoothing=0.1).fit(X, y)
    assert {s for grad, s in calls if grad} == {0.1}
    assert {s for grad, s in calls if not grad} == {0.0}


def test_label_smoothing_is_checked_classifier_only_and_old_models_load_without_it():
    X, y = make_panel(n=16)
    for bad in (-0.1, 1.0, "0.1"):
        with pytest.raises(ValueError, match=r"label_smoothing must be a number in \[0, 1\)"):
            EADCTClassifier(label_smoothing=bad).fit(X, y)
    for cls in (EADCTRegressor, EADCTRepresentation):
        with pytest.raises(TypeError, match="label_smoothing"):
            cls(label_smoothing=0.1)
    clf = EADCTClassifier(**FAST).fit(X, y)
    old = saved_without(clf, "label_smoothing")
    assert old.label_smoothing == 0.0
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))


# ---------------------------------------------------------------- window_slicing


def test_window_slice_reads_a_window_of_each_series_stretched_to_its_length():
    n = 50
    ramp = torch.arange(n, dtype=torch.float32).reshape(1, n, 1).repeat(3, 1, 2)
    valid = torch.arange(n)[None, :] < torch.tensor([[50], [30], [1]])
    x = ramp * valid.unsqueeze(-1)
    out = augment_window_slice(x, valid, 0.2, torch.Generator().manual_seed(0))
    assert out.shape == x.shape and bool((out[~valid] == 0).all())
    for i, length in enumerate((50, 30)):
        values = out[i, :length, 0]
        steps = values[1:] - values[:-1]  # a ramp read on a window of 0.8 L stretched to L: equal steps
        torch.testing.assert_close(steps, torch.full_like(steps, (0.8 * length - 1) / (length - 1)))
        assert 0 <= float(values[0]) <= 0.2 * length + 1e-5 and float(values[-1]) <= length - 1
    one = augment_window_slice(torch.full((1, 4, 1), 7.0), valid[2:, :4], 0.2, torch.Generator())
    assert one[0, :, 0].tolist() == [7.0, 0.0, 0.0, 0.0]  # a one-step series stays itself
    torch.testing.assert_close(out[:, :, 0], out[:, :, 1])  # one window per series, all channels
    again = augment_window_slice(x, valid, 0.2, torch.Generator().manual_seed(0))
    torch.testing.assert_close(out, again, rtol=0, atol=0)
    torch.testing.assert_close(augment_window_slice(x, valid, 0.0, torch.Generator()), x)


#: The time augmentations whose share lies in [0, 1): window slicing and masking, each at a usual strength.
SHARE_OPTIONS = [("window_slicing", 0.1), ("mask_augmentation", 0.15)]


@pytest.mark.parametrize("option, value", SHARE_OPTIONS)
def test_zero_share_is_the_plain_model_and_an_augmented_fit_is_deterministic(option, value):
    X, y, target = make_unequal(n=16)
    plain = EADCTClassifier(**FAST).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(EADCTClassifier(**FAST, **{option: 0.0}).fit(X, y).predict_proba(X), plain)
    clf = EADCTClassifier(**FAST, **{option: value}).fit(X, y)
    proba = clf.predict_proba(X)
    assert not np.array_equal(proba, plain)
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), proba)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)
    reg = EADCTRegressor(**FAST, **{option: value}).fit(X, target)
    assert np.isfinite(reg.predict(X)).all()


@pytest.mark.parametrize("option, value", SHARE_OPTIONS)
def test_share_options_are_checked_and_old_models_load_without_them(option, value):
    X, y = make_panel(n=16)
    for bad in (-0.1, 1.0):
        with pytest.raises(ValueError, match=option + r" must be a number in \[0, 1\)"):
            EADCTClassifier(**{option: bad}).fit(X, y)
    with pytest.raises(TypeError, match=option):
        EADCTRepresentation(**{option: value})
    clf = EADCTClassifier(**FAST).fit(X, y)
    old = saved_without(clf, option)
    assert getattr(old, option) == 0.0
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))


# ---------------------------------------------------------------- max_steps


def test_step_cap_lowers_the_epochs_and_scales_the_averaged_share():
    from eadct.training import StageSettings

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
    # the regressor's default cap of 900 (docs/training.md): FloodModeling1 30 epochs (10 averaged),
    # ChilledWaterPredictor 42 (14), a set of 240 series (15 batches) all 60
    default = StageSettings(max_epochs=60, batch_size=16, average_epochs=20, max_steps=EADCTRegressor().max_steps)
    assert (default.capped(471).max_epochs, default.capped(471).average_epochs) == (30, 10)
    assert (default.capped(321).max_epochs, default.capped(321).average_epochs) == (42, 14)
    assert default.capped(240) is default


def _stage_epochs(model):
    epochs = {}
    for record in model.history_:
        epochs[record["stage"]] = max(epochs.get(record["stage"], 0), record["epoch"])
    return epochs


def test_a_capped_fit_is_the_fit_with_fewer_epochs():
    X, y, target = make_unequal(n=20)  # batches of 4: 5 steps per epoch; a cap of 10 steps is 2 epochs
    base = {**FAST, "batch_size": 4, "max_epochs": 4, "pretrain_epochs": 3}
    capped = EADCTClassifier(**base, max_steps=10).fit(X, y)
    assert sorted(_stage_epochs(capped).values()) == [2, 2]
    short = EADCTClassifier(**{**base, "max_epochs": 2, "pretrain_epochs": 2}).fit(X, y)
    np.testing.assert_array_equal(capped.predict_proba(X), short.predict_proba(X))
    # with weight averaging: 2 of 4 epochs averaged become 1 of 2
    averaged = EADCTRegressor(**base, max_steps=10, average_epochs=2, validation_fraction=0.0).fit(X, target)
    one = EADCTRegressor(**{**base, "max_epochs": 2, "pretrain_epochs": 2}, average_epochs=1,
                         validation_fraction=0.0).fit(X, target)  # fmt: skip
    np.testing.assert_array_equal(averaged.predict(X), one.predict(X))
    # a cap that does not bind changes nothing
    loose = EADCTClassifier(**base, max_steps=1000).fit(X, y)
    np.testing.assert_array_equal(loose.predict_proba(X), EADCTClassifier(**base).fit(X, y).predict_proba(X))


def test_step_floor_raises_the_epochs_and_scales_the_averaged_share():
    from eadct.training import StageSettings

    s = StageSettings(max_epochs=40, batch_size=8, average_epochs=20, min_steps=400)
    assert s.capped(120) is s  # 15 batches x 40 epochs = 600 steps: the floor does not bind
    ering = s.capped(30)  # 4 batches: 100 epochs, the last 50 averaged
    assert (ering.max_epochs, ering.average_epochs, ering.batch_size) == (100, 50, 8)
    assert (s.capped(15).max_epochs, s.capped(15).average_epochs) == (200, 100)  # 2 batches
    both = StageSettings(max_epochs=40, batch_size=8, min_steps=400, max_steps=300).capped(30)
    assert both.max_epochs == 75  # the cap still bounds: 300 steps of 4 batches
    for off in (
        StageSettings(max_epochs=0, batch_size=8, min_steps=400),
        StageSettings(max_epochs=0, batch_size=8, max_steps=400),
    ):
        assert off.capped(30) is off  # a stage of 0 epochs stays off


def test_a_floored_fit_is_the_fit_with_more_epochs_in_fine_tuning_only():
    X, y, target = make_unequal(n=20)  # batches of 4: 5 steps per epoch; a floor of 15 steps is 3 epochs
    base = {**FAST, "batch_size": 4, "max_epochs": 2, "pretrain_epochs": 1}
    floored = EADCTClassifier(**base, min_steps=15).fit(X, y)
    assert _stage_epochs(floored) == {"pretrain": 1, "finetune": 3}
    longer = EADCTClassifier(**{**base, "max_epochs": 3}).fit(X, y)
    np.testing.assert_array_equal(floored.predict_proba(X), longer.predict_proba(X))
    # with weight averaging: 1 of 2 epochs averaged becomes 2 of 4 (a floor of 20 steps)
    averaged = EADCTRegressor(**base, min_steps=20, average_epochs=1, validation_fraction=0.0).fit(X, target)
    two = EADCTRegressor(**{**base, "max_epochs": 4}, average_epochs=2, validation_fraction=0.0).fit(X, target)
    np.testing.assert_array_equal(averaged.predict(X), two.predict(X))
    # a floor that does not bind changes nothing
    loose = EADCTClassifier(**base, min_steps=1).fit(X, y)
    np.testing.assert_array_equal(loose.predict_proba(X), EADCTClassifier(**base).fit(X, y).predict_proba(X))
    assert "min_steps" not in EADCTRepresentation().get_params()  # no fine-tuning


def test_the_representation_caps_its_pretraining():
    X, _, _ = make_unequal(n=20)
    settings = {k: v for k, v in FAST.items() if k != "pretrain_epochs"}
    rep = EADCTRepresentation(**{**settings, "batch_size": 4, "max_epochs": 4}, max_steps=10).fit(X)
    assert list(_stage_epochs(rep).values()) == [2]


@pytest.mark.parametrize("name, value", [("max_steps", 1), ("min_steps", 12)])
def test_step_bounds_are_checked_deterministic_and_old_models_load_without_them(name, value):
    X, y = make_panel(n=16)
    for bad in (0, -3, 2.5, "10"):
        with pytest.raises(ValueError, match=f"{name} must be None or a positive int"):
            EADCTClassifier(**{name: bad}).fit(X, y)
    clf = EADCTClassifier(**FAST, **{name: value}).fit(X, y)
    proba = clf.predict_proba(X)
    np.testing.assert_array_equal(clone(clf).fit(X, y).predict_proba(X), proba)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), proba)
    old = saved_without(clf, name)
    assert getattr(old, name) is None
    np.testing.assert_array_equal(old.predict_proba(X), proba)


def test_a_capped_averaged_fit_resumes_exactly_after_a_kill(tmp_path, monkeypatch):
    from test_accuracy_options import _killed_then_resumed

    X, _, target = make_unequal(n=20)  # batches of 4: 5 steps; 15 steps = 3 of 6 epochs, the last 2 averaged
    params = {**FAST, "batch_size": 4, "max_epochs": 6, "average_epochs": 4, "validation_fraction": 0.0,
              "max_steps": 15}  # fmt: skip
    whole = EADCTRegressor(**params).fit(X, target)
    assert [r["epoch"] for r in whole.history_ if r["stage"] == "finetune"] == [1, 2, 3]
    resumed = _killed_then_resumed(EADCTRegressor, params, X, target, tmp_path, monkeypatch)  # killed in epoch 3
    np.testing.assert_array_equal(resumed.predict(X), whole.predict(X))


# ---------------------------------------------------------------- mixup


def test_beta_draw_has_the_beta_distributions_mean_and_variance():
    from eadct.training.augment import beta_draw

    g = torch.Generator().manual_seed(0)
    for alpha in (0.2, 1.0, 3.0, 50.0):  # Johnk's method up to 1, Marsaglia and Tsang's gamma ratio above
        draws = np.array([beta_draw(alpha, g) for _ in range(4000)])
        assert ((draws >= 0) & (draws <= 1)).all()
        # Beta(a, a): mean 1/2, variance 1 / (4 (2a + 1)); 4000 draws put both within a few percent
        assert abs(draws.mean() - 0.5) < 0.02
        assert abs(draws.var() - 1 / (4 * (2 * alpha + 1))) < 0.1 / (4 * (2 * alpha + 1))


def test_mixup_batch_mixes_pairs_over_the_union_of_their_valid_steps():
    x = torch.randn(4, 6, 2)
    valid = torch.arange(6)[None, :] < torch.tensor([[6], [4], [2], [5]])
    x = x * valid.unsqueeze(-1)
    mixed, mixed_valid, partner, lam = mixup_batch(x, valid, 0.4, torch.Generator().manual_seed(3))
    assert sorted(partner.tolist()) == [0, 1, 2, 3] and 0.0 <= lam <= 1.0
    torch.testing.assert_close(mixed, lam * x + (1 - lam) * x[partner])
    assert torch.equal(mixed_valid, valid | valid[partner])
    assert bool((mixed[~mixed_valid] == 0).all())
    again = mixup_batch(x, valid, 0.4, torch.Generator().manual_seed(3))
    assert torch.equal(again[0], mixed) and again[3] == lam
    assert mixup_batch(x, None, 0.4, torch.Generator().manual_seed(3))[1] is None


def test_mixup_zero_is_the_plain_model_and_a_mixed_fit_is_deterministic_and_round_trips():
    assert_zero_is_plain_and_the_option_is_deterministic("mixup", 0.2)
    Xu, yu, target = make_unequal(n=16)
    assert EADCTClassifier(**FAST, mixup=1.0).fit(Xu, yu).predict_proba(Xu).shape == (16, len(np.unique(yu)))
    reg = EADCTRegressor(**FAST, mixup=0.2).fit(Xu, target)
    assert np.isfinite(reg.predict(Xu)).all()


def test_mixup_enters_the_training_batches_only(monkeypatch):
    """Training batches (gradients on) are mixed, each loss taken against both targets of a pair; the validation
    split is scored as it is."""
    X, y = make_panel(n=20)
    grad_calls, eval_calls, mixes = [], [], []
    real_loss, real_mix = torch.nn.functional.cross_entropy, stages_module.mixup_batch

    def recording(outputs, target, label_smoothing=0.0):
        (grad_calls if torch.is_grad_enabled() else eval_calls).append(target.clone())
        return real_loss(outputs, target, label_smoothing=label_smoothing)

    def mixing(x, valid, alpha, generator):
        mixes.append(alpha)
        return real_mix(x, valid, alpha, generator)

    monkeypatch.setattr(stages_module.F, "cross_entropy", recording)
    monkeypatch.setattr(stages_module, "mixup_batch", mixing)
    params = {**FAST, "max_epochs": 2, "validation_fraction": 0.25, "average_epochs": None}
    EADCTClassifier(**params, mixup=0.5).fit(X, y)
    assert mixes and set(mixes) == {0.5}
    assert len(grad_calls) == 2 * len(mixes)  # two losses per mixed batch: its own targets, its partners'
    assert eval_calls  # the validation split is scored without a mixup draw
    assert sorted(grad_calls[0].tolist()) == sorted(grad_calls[1].tolist())


def test_mixup_is_checked_supervised_only_and_old_models_load_without_it():
    X, y = make_panel(n=16)
    for bad in (-0.1, "0.2", None):
        with pytest.raises(ValueError, match=r"mixup must be a number >= 0"):
            EADCTClassifier(mixup=bad).fit(X, y)
    with pytest.raises(TypeError, match="mixup"):
        EADCTRepresentation(mixup=0.2)
    clf = EADCTClassifier(**FAST).fit(X, y)
    old = saved_without(clf, "mixup")
    assert old.mixup == 0.0
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))


# ---------------------------------------------------------------- mask_augmentation


def test_mask_augmentation_zeroes_runs_of_the_documented_share_and_keeps_the_rest():
    x = torch.randn(400, 60, 3) + 5.0  # no value is 0 before masking
    valid = torch.arange(60)[None, :] < torch.randint(20, 61, (400, 1))
    x = x * valid.unsqueeze(-1)
    out = augment_mask(x, valid, 0.15, 3.0, torch.Generator().manual_seed(0))
    assert out.shape == x.shape and bool((out[~valid] == 0).all())
    masked = (out == 0) & valid.unsqueeze(-1)
    assert abs(float(masked.sum() / (valid.sum() * 3)) - 0.15) < 0.01
    torch.testing.assert_close(out[~masked & valid.unsqueeze(-1)], x[~masked & valid.unsqueeze(-1)])
    # runs, not single values: the mean length of a masked run is near 3 (runs cut by a series' end are shorter)
    flat = masked.transpose(1, 2).reshape(-1, 60).float()
    starts = flat[:, 0].sum() + (flat[:, 1:] > flat[:, :-1]).sum()
    assert 2.5 < float(masked.sum() / starts) < 3.1
    again = augment_mask(x, valid, 0.15, 3.0, torch.Generator().manual_seed(0))
    torch.testing.assert_close(out, again, rtol=0, atol=0)
