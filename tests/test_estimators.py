"""Estimator behaviour: sklearn integration, input forms, determinism, padding, resume."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import TINY, TINY_REPR, make_panel, make_unequal
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation

GRID = {"alpha": [0.1, 0.5], "beta": [0.0, 0.3], "attention_ratio": [0.5, 1.0]}


def test_grid_search_classifier(panel):
    X, y = panel
    fast = {**TINY, "max_epochs": 1, "pretrain_epochs": 0}
    search = GridSearchCV(EADCTClassifier(**fast), GRID, cv=2).fit(X, y)
    assert len(search.cv_results_["params"]) == 8
    assert set(search.best_params_) == set(GRID)
    assert search.predict(X).shape == (len(y),)


def test_grid_search_regressor(panel):
    X, _ = panel
    target = X[:, 0].mean(axis=1)
    fast = {**TINY, "max_epochs": 1, "pretrain_epochs": 0}
    search = GridSearchCV(EADCTRegressor(**fast), GRID, cv=2, scoring="neg_root_mean_squared_error")
    search.fit(X, target)
    assert len(search.cv_results_["params"]) == 8
    assert np.isfinite(search.best_score_)


def test_clone_keeps_params_and_drops_fit(fitted_classifier):
    c = clone(fitted_classifier)
    assert c.get_params() == fitted_classifier.get_params()
    assert not hasattr(c, "network_")


@pytest.mark.parametrize("fixture", ["fitted_classifier", "fitted_regressor", "fitted_representation"])
def test_pickle_round_trip(fixture, panel, request):
    est = request.getfixturevalue(fixture)
    X, _ = panel
    method = "transform" if fixture == "fitted_representation" else "predict"
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(getattr(restored, method)(X), getattr(est, method)(X))
    assert restored.history_ == est.history_


def test_representation_in_pipeline(panel):
    X, y = panel
    pipe = make_pipeline(EADCTRepresentation(**TINY_REPR), StandardScaler(), LogisticRegression(max_iter=500))
    pipe.fit(X, y)
    assert pipe.predict(X).shape == (len(y),)
    assert pipe.named_steps["eadctrepresentation"].transform(X).shape == (len(y), TINY["d_model"])


def test_representation_pretrains_only(fitted_representation):
    assert {r["stage"] for r in fitted_representation.history_} == {"pretrain"}


def test_two_stage_history(fitted_classifier):
    stages = [r["stage"] for r in fitted_classifier.history_]
    assert stages == ["pretrain"] * TINY["pretrain_epochs"] + ["finetune"] * TINY["max_epochs"]


def test_same_random_state_same_predictions(panel):
    X, y = panel
    a = EADCTClassifier(**TINY).fit(X, y).predict_proba(X)
    b = EADCTClassifier(**TINY).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(a, b)
    c = EADCTClassifier(**{**TINY, "random_state": 1}).fit(X, y).predict_proba(X)
    assert not np.array_equal(a, c)


def test_fit_leaves_global_rng_alone(panel):
    X, y = panel
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    EADCTClassifier(**TINY).fit(X, y)
    torch.testing.assert_close(torch.rand(3), expected)


def test_series_predicts_same_alone_and_padded_in_batch():
    X, y, _ = make_unequal(lengths=(6, 20))
    clf = EADCTClassifier(**TINY).fit(X, y)
    short = np.random.default_rng(5).normal(size=(2, 7))
    longer = [np.random.default_rng(i).normal(size=(2, 19)) for i in range(3)]
    alone = clf.predict_proba([short])
    in_batch = clf.predict_proba(longer[:2] + [short] + longer[2:])
    np.testing.assert_allclose(in_batch[2], alone[0], atol=1e-6)


def test_unequal_length_list_and_nested_dataframe():
    X, y, target = make_unequal()
    clf = EADCTClassifier(**TINY).fit(X, y)
    nested = pd.DataFrame({f"dim_{c}": [pd.Series(x[c]) for x in X] for c in range(2)})
    np.testing.assert_allclose(clf.predict_proba(nested), clf.predict_proba(X), atol=1e-6)
    reg = EADCTRegressor(**TINY).fit(nested, target)
    assert reg.predict(X).shape == (len(X),)
    assert clf.n_timepoints_ == max(x.shape[1] for x in X)


def test_longer_series_at_predict_warn_and_work(fitted_classifier):
    X, _ = make_panel(n=4, length=40)
    with pytest.warns(UserWarning, match="reuse the last learned"):
        assert fitted_classifier.predict(X).shape == (4,)


def test_flatten_pooling_ties_the_model_to_the_training_length():
    X, y, _ = make_unequal(lengths=(6, 20))
    n = max(x.shape[1] for x in X)
    clf = EADCTClassifier(**{**TINY, "pooling": "flatten"}).fit(X, y)
    assert clf.network_.task_head(torch.zeros(1, n * TINY["d_model"])).shape == (1, 2)
    # padding is zeroed before flattening: a short series predicts the same alone and inside a batch
    short = np.random.default_rng(5).normal(size=(2, 7))
    longer = [np.random.default_rng(i).normal(size=(2, n - 1)) for i in range(3)]
    np.testing.assert_allclose(clf.predict_proba(longer + [short])[3], clf.predict_proba([short])[0], atol=1e-6)
    # longer series (JapaneseVowels' test split is longer than its train split): the head reads the first n steps
    longer_one = np.random.default_rng(9).normal(size=(2, n + 3))
    with pytest.warns(UserWarning, match="reads only the first"):
        cropped = clf.predict_proba([longer_one])
    assert cropped.shape == (1, 2) and np.isfinite(cropped).all()
    rep = EADCTRepresentation(**{**TINY_REPR, "pooling": "flatten"}).fit(X)
    assert rep.transform(X).shape == (len(X), n * TINY["d_model"])


def test_univariate_2d_input():
    X, y = make_panel(channels=1)
    clf = EADCTClassifier(**TINY).fit(X[:, 0], y)
    assert clf.n_features_in_ == 1
    np.testing.assert_array_equal(clf.predict(X[:, 0]), clf.predict(X))


def test_multi_output_regression(panel):
    X, _ = panel
    Y = np.stack([X[:, 0].mean(axis=1), X[:, 1].std(axis=1)], axis=1)
    reg = EADCTRegressor(**TINY).fit(X, Y)
    assert reg.predict(X).shape == (len(X), 2)


def test_string_labels_and_proba(panel):
    X, y = panel
    labels = np.array(["walk", "run", "jump"])[y]
    clf = EADCTClassifier(**TINY).fit(X, labels)
    assert set(clf.classes_) == {"walk", "run", "jump"}
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba, atol=1e-6)
    assert set(clf.predict(X)) <= set(labels)


def test_interpolate_missing_values():
    X, y = make_panel()
    X[0, 1, 3:7] = np.nan
    X[1, 0, :] = np.nan  # a whole channel missing in one series
    clf = EADCTClassifier(**{**TINY, "missing_values": "interpolate"}).fit(X, y)
    assert np.isfinite(clf.predict_proba(X)).all()


def test_other_optimizer_class(panel):
    X, y = panel
    clf = EADCTClassifier(**TINY, optimizer=torch.optim.AdamW, optimizer_kwargs={"weight_decay": 0.01})
    assert clf.fit(X, y).predict(X).shape == (len(y),)


def test_unlabeled_series_join_pretraining(panel):
    X, y = panel
    extra, _ = make_panel(n=10, length=30, seed=3)
    clf = EADCTClassifier(**TINY).fit(X, y, X_unlabeled=extra)
    assert clf.n_timepoints_ == 30
    assert clf.predict(X).shape == (len(y),)


def test_verbose_progress(panel, capsys):
    X, y = panel
    EADCTClassifier(**{**TINY, "verbose": True}).fit(X, y)
    assert "finetune" in capsys.readouterr().err


def test_validation_fraction_zero_and_early_stop(panel):
    X, y = panel
    clf = EADCTClassifier(**{**TINY, "validation_fraction": 0.0}).fit(X, y)
    assert "valid_loss" not in clf.history_[-1]


class CrashingRAdam(torch.optim.RAdam):
    """RAdam that raises after ``budget`` steps, to simulate a crash mid-fit."""

    budget: int | None = None

    def step(self, closure=None):
        if CrashingRAdam.budget is not None:
            if CrashingRAdam.budget == 0:
                raise RuntimeError("simulated crash")
            CrashingRAdam.budget -= 1
        return super().step(closure)


@pytest.mark.parametrize("crash_after", [3, 7])  # inside pretraining, inside fine-tuning
def test_resume_after_crash_equals_uninterrupted_fit(panel, tmp_path, crash_after):
    X, y = panel
    params = {**TINY, "max_epochs": 3, "pretrain_epochs": 2, "optimizer": CrashingRAdam}
    CrashingRAdam.budget = None
    reference = EADCTClassifier(**params).fit(X, y)

    path = tmp_path / "fit.ckpt"
    CrashingRAdam.budget = crash_after  # 2 batches per epoch: 3 = pretrain epoch 2, 11 = finetune
    with pytest.raises(RuntimeError, match="simulated crash"):
        EADCTClassifier(**params, checkpoint_path=path).fit(X, y)
    assert path.exists()
    CrashingRAdam.budget = None
    resumed = EADCTClassifier(**params, checkpoint_path=path).fit(X, y)
    np.testing.assert_array_equal(resumed.predict_proba(X), reference.predict_proba(X))
    assert [r["epoch"] for r in resumed.history_] == [r["epoch"] for r in reference.history_]


def test_finished_checkpoint_is_loaded_not_retrained(panel, tmp_path):
    X, y = panel
    path = tmp_path / "fit.ckpt"
    first = EADCTClassifier(**TINY, checkpoint_path=path).fit(X, y)
    again = EADCTClassifier(**TINY, checkpoint_path=path).fit(X, y)
    np.testing.assert_array_equal(first.predict_proba(X), again.predict_proba(X))
    other = EADCTClassifier(**{**TINY, "alpha": 0.2}, checkpoint_path=path).fit(X, y)  # new params: new fit
    assert not np.array_equal(first.predict_proba(X), other.predict_proba(X))


def test_subset_invariance_float32(fitted_representation, fitted_regressor, fitted_classifier, panel):
    X, _ = panel
    np.testing.assert_allclose(
        fitted_classifier.transform(X[:7]), fitted_classifier.transform(X)[:7], atol=1e-5, rtol=1e-5
    )
    np.testing.assert_allclose(
        fitted_representation.transform(X[:7]), fitted_representation.transform(X)[:7], atol=1e-5, rtol=1e-5
    )
    np.testing.assert_allclose(fitted_regressor.predict(X[3:9]), fitted_regressor.predict(X)[3:9], atol=1e-5, rtol=1e-5)


@pytest.mark.gpu
def test_cuda_fit_bf16_and_cpu_unpickle(panel):
    X, y = panel
    clf = EADCTClassifier(**{**TINY, "device": "cuda"}).fit(X, y)
    assert clf.device_.startswith("cuda")
    assert clf._autocast_dtype(torch.device(clf.device_)) is torch.bfloat16
    restored = pickle.loads(pickle.dumps(clf))
    np.testing.assert_allclose(restored.predict_proba(X), clf.predict_proba(X), atol=1e-6)


def test_chunked_inference_equals_one_batch(fitted_classifier, panel, monkeypatch):
    X, _ = panel
    whole = fitted_classifier.predict_proba(X)
    import eadct.estimators._base as base

    monkeypatch.setattr(base, "inference_batch_size", lambda config, **kw: 4)
    np.testing.assert_allclose(fitted_classifier.predict_proba(X), whole, atol=1e-6)


def test_memory_guard_raises_with_options(panel, monkeypatch):
    import eadct.estimators._base as base

    X, y = panel
    monkeypatch.setattr(base, "available_memory_bytes", lambda device: 2 * 2**20)  # pretend 2 MB free
    with pytest.raises(ValueError, match=r"training would need about .* GB .* Settings that would fit: .*batch_size="):
        EADCTClassifier(**{**TINY, "d_model": 16, "batch_size": 32}).fit(X.repeat(4, axis=2), y)


def test_memory_guard_auto_picks_a_plan(panel, monkeypatch):
    import eadct.estimators._base as base

    X, y = panel
    monkeypatch.setattr(base, "available_memory_bytes", lambda device: 2 * 2**20)
    with pytest.warns(UserWarning, match="memory_plan_"):
        clf = EADCTClassifier(**{**TINY, "memory_guard": "auto"}).fit(X.repeat(4, axis=2), y)
    assert clf.memory_plan_ and clf.predict(X).shape == (len(y),)
    restored = pickle.loads(pickle.dumps(clf))  # the plan's network is rebuilt on unpickling
    np.testing.assert_array_equal(restored.predict(X), clf.predict(X))


def test_long_series_options_fit(panel):
    X, y = panel
    clf = EADCTClassifier(**TINY, recompute_attention=True, attention_downsample=4).fit(X, y)
    assert clf.memory_plan_ == {} and clf.predict(X).shape == (len(y),)


@pytest.mark.parametrize(
    "architecture", ["ea-dc-transformer", "dc-transformer", "transformer", "dilated-conv", "lstm", "gru", "resnet"]
)
def test_every_table_row_trains_through_the_same_estimators(architecture, panel):
    X, y = panel
    clf = EADCTClassifier(**TINY, architecture=architecture).fit(X, y)
    assert clf.predict(X).shape == (len(y),)
    assert {r["stage"] for r in clf.history_} == {"pretrain", "finetune"}
    reg = EADCTRegressor(**TINY, architecture=architecture).fit(X, X[:, 0].mean(axis=1))
    assert np.isfinite(reg.predict(X)).all()


def test_architecture_overrides_the_transformer_family(panel):
    X, y = panel
    tst = EADCTClassifier(**{**TINY, "alpha": 0.7, "beta": 0.4}, architecture="transformer").fit(X, y)
    layers = tst.network_.encoder.layers
    assert all(layer.conv is None and layer.attention.map_conv is None for layer in layers)
    conv = EADCTClassifier(**TINY, architecture="dilated-conv").fit(X, y)
    assert all(layer.attention is None for layer in conv.network_.encoder.layers)
    with pytest.raises(ValueError, match="architecture must be one of"):
        EADCTClassifier(**TINY, architecture="mamba").fit(X, y)
