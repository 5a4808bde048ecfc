"""Safe persistence (eadct.save / eadct.load), versions recorded with models and checkpoints, and files that
would run code under pickle refused by the safe loaders (issue 19, points 1-3)."""

from __future__ import annotations

import json
import pickle
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel, make_unequal
from sklearn.base import clone

import eadct
from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.networks import ARCHITECTURES
from eadct.provenance import VERSIONS_KEY, InconsistentVersionWarning, model_versions

FIXTURES = Path(__file__).parent / "fixtures"
FAST = dict(TINY, max_epochs=1)


class _RunsCode:
    """Unpickling this creates ``marker``: the proof that a loader executed code from the file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (Path(self.marker).touch, ())


def _fitted(kind: str, architecture: str, X, y):
    params = dict(FAST, architecture=architecture)
    if kind == "classifier":
        return EADCTClassifier(**params).fit(X, np.array(["low", "mid", "high"])[y]), "predict_proba"
    if kind == "regressor":
        return EADCTRegressor(**params).fit(X, X[:, 0].mean(axis=1)), "predict"
    params.pop("pretrain_epochs")
    return EADCTRepresentation(**params).fit(X), "transform"


@pytest.mark.parametrize("architecture", sorted(ARCHITECTURES))
@pytest.mark.parametrize("kind", ["classifier", "regressor", "representation"])
def test_save_load_round_trip_equals_predictions(kind, architecture, tmp_path):
    X, y = make_panel(n=24)
    est, method = _fitted(kind, architecture, X, y)
    restored = eadct.load(eadct.save(est, tmp_path / "model.safetensors"))
    assert type(restored) is type(est)
    np.testing.assert_array_equal(getattr(restored, method)(X), getattr(est, method)(X))
    assert restored.get_params() == est.get_params()
    assert restored.history_ == est.history_
    if kind == "classifier":
        np.testing.assert_array_equal(restored.classes_, est.classes_)
        assert restored.classes_.dtype == est.classes_.dtype


def test_round_trip_keeps_members_unequal_lengths_and_custom_settings(tmp_path):
    X, _, target = make_unequal()
    est = EADCTRegressor(**FAST, n_estimators=2, optimizer=torch.optim.AdamW, optimizer_kwargs={"betas": (0.8, 0.9)})
    est.fit(X, target)
    restored = eadct.load(eadct.save(est, tmp_path / "m.safetensors"))
    np.testing.assert_array_equal(restored.predict(X), est.predict(X))
    assert len(restored.networks_) == 2
    assert restored.optimizer is torch.optim.AdamW and restored.optimizer_kwargs == {"betas": (0.8, 0.9)}


def test_unfitted_estimator_round_trips_its_parameters(tmp_path):
    est = EADCTClassifier(alpha=0.2, beta=0.7, attention_ratio=0.25, random_state=3)
    restored = eadct.load(eadct.save(est, tmp_path / "m.safetensors"))
    assert restored.get_params() == est.get_params()
    assert not hasattr(restored, "network_")


def test_load_to_an_explicit_device(fitted_classifier, panel, tmp_path):
    X, _ = panel
    restored = eadct.load(eadct.save(fitted_classifier, tmp_path / "m.safetensors"), device="cpu")
    assert restored.device_ == "cpu" and next(restored.network_.parameters()).device.type == "cpu"
    np.testing.assert_array_equal(restored.predict(X), fitted_classifier.predict(X))


def test_committed_model_of_the_release_loads_and_predicts_as_written():
    """tests/fixtures/classifier_0.1.0.safetensors was written by eadct 0.1.0 (make_fixture.py); a later
    version must still load it (or refuse with both versions named, which would fail this test)."""
    expected = np.load(FIXTURES / "classifier_0.1.0.npz")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InconsistentVersionWarning)
        clf = eadct.load(FIXTURES / "classifier_0.1.0.safetensors")
    np.testing.assert_allclose(clf.predict_proba(expected["X"]), expected["proba"], atol=1e-5)
    np.testing.assert_array_equal(clf.classes_, expected["classes"])
    # parameters added after 0.1.0 take the values that do what 0.1.0 did, so the model clones and refits as
    # it was fitted: average_epochs None (the best epoch), not the classifier's default of today (20)
    params = clone(clf).get_params()
    assert set(params) == set(EADCTClassifier().get_params()) and params["options__average_epochs"] is None
    assert EADCTClassifier().get_params()["options__average_epochs"] == 20 and params["validation_fraction"] == 0.1


def _rewrite_header(src: Path, dst: Path, edit) -> Path:
    """Copy a safetensors file with its JSON header changed by ``edit(header_dict)``."""
    raw = src.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    inner = json.loads(header["__metadata__"]["eadct"])
    edit(inner)
    header["__metadata__"]["eadct"] = json.dumps(inner)
    blob = json.dumps(header).encode()
    blob += b" " * (-len(blob) % 8)
    dst.write_bytes(struct.pack("<Q", len(blob)) + blob + raw[8 + n :])
    return dst


@pytest.fixture
def saved(fitted_classifier, tmp_path):
    return eadct.save(fitted_classifier, tmp_path / "model.safetensors")


def test_pickle_payload_is_refused_by_load_without_running_it(tmp_path):
    marker, path = tmp_path / "ran", tmp_path / "evil.safetensors"
    path.write_bytes(pickle.dumps(_RunsCode(marker)))
    with pytest.raises(ValueError, match="not an eadct model file"):
        eadct.load(path)
    assert not marker.exists()


def test_torch_file_with_code_is_refused_by_load(tmp_path):
    marker, path = tmp_path / "ran", tmp_path / "evil.pt"
    torch.save({"weights": torch.zeros(2), "payload": _RunsCode(marker)}, path)
    with pytest.raises(ValueError, match="not an eadct model file"):
        eadct.load(path)
    assert not marker.exists()


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda h: h.update({"class": "Popen"}), "declares class 'Popen'"),
        (lambda h: h.update({"format": 99}), "format 99 of eadct 0.1.0.*reads format 1"),
        (lambda h: h["state"].update({"d_model": 32}), "does not match its declared settings"),
        (lambda h: h["state"].update({"architecture": "lstm"}), "does not match its declared settings"),
        (
            lambda h: h["state"].update({"optimizer": {"__class__": "not_imported_module:Evil"}}),
            "import its module .'not_",
        ),
    ],
)
def test_a_file_that_contradicts_its_settings_is_refused(saved, tmp_path, edit, message):
    bad = _rewrite_header(saved, tmp_path / "bad.safetensors", edit)
    with pytest.raises(ValueError, match=message):
        eadct.load(bad)


def test_a_truncated_model_file_is_refused(saved, tmp_path):
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(saved.read_bytes()[: saved.stat().st_size // 2])
    with pytest.raises(ValueError, match="not an eadct model file"):
        eadct.load(cut)


def test_a_model_of_another_version_loads_with_a_warning_naming_both(saved, tmp_path, panel):
    other = _rewrite_header(saved, tmp_path / "old.safetensors", lambda h: h["versions"].update({"eadct": "0.0.9"}))
    with pytest.warns(InconsistentVersionWarning, match="eadct 0.0.9.*eadct 0.1.0"):
        clf = eadct.load(other)
    assert clf.predict(panel[0]).shape == (len(panel[0]),)


def test_models_and_pickles_record_the_versions(saved, fitted_classifier):
    from safetensors import safe_open

    with safe_open(str(saved), framework="pt") as f:
        header = json.loads(f.metadata()["eadct"])
    assert header["versions"] == model_versions()
    assert set(header["versions"]) == {"eadct", "torch", "scikit-learn", "numpy"}
    state = fitted_classifier.__getstate__()
    assert state[VERSIONS_KEY] == model_versions()
    state[VERSIONS_KEY] = {**model_versions(), "eadct": "0.0.9"}
    with pytest.warns(InconsistentVersionWarning, match="pickled estimator was written by eadct 0.0.9"):
        EADCTClassifier.__new__(EADCTClassifier).__setstate__(state)


def test_sktime_estimators_point_to_their_fitted_estimator(tmp_path):
    from eadct.sktime import EADCTClassifier as SktimeClassifier

    X, y = make_panel(n=12)
    est = SktimeClassifier(**{k: v for k, v in FAST.items() if k != "n_jobs"}).fit(X, y)
    with pytest.raises(TypeError, match="Save its fitted `estimator_`"):
        eadct.save(est, tmp_path / "m.safetensors")
    restored = eadct.load(eadct.save(est.estimator_, tmp_path / "m.safetensors"))
    np.testing.assert_array_equal(restored.predict(X), est.predict(X))


# ------------------------------------------------------------------------------------------------- checkpoints
def _fit_with_checkpoint(path, **extra):
    X, y = make_panel(n=24)
    return EADCTClassifier(**FAST, **extra, checkpoint_path=str(path)).fit(X, y), X


# files at checkpoint_path that are not checkpoints, and crafted checkpoints: tests/test_checkpoint_attacks.py
def test_checkpoint_records_versions_and_another_version_is_not_resumed(tmp_path):
    path = tmp_path / "fit.ckpt"
    _fit_with_checkpoint(path)
    state = torch.load(path, weights_only=True)
    assert state[VERSIONS_KEY] == model_versions()
    state[VERSIONS_KEY] = {**model_versions(), "eadct": "0.0.9"}
    torch.save(state, path)
    with pytest.warns(UserWarning, match="written by eadct 0.0.9 and this is eadct 0.1.0"):
        _fit_with_checkpoint(path)


@pytest.mark.gpu
def test_gpu_model_loads_on_the_cpu(tmp_path, monkeypatch):
    # float32 without TF32 on CUDA, so that the two devices compute the same function (the default bf16
    # autocast on CUDA differs from the CPU's float32 by about 3e-3 in these probabilities: rounding, not loading)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    monkeypatch.setattr(torch.backends.cuda.matmul, "allow_tf32", False)
    X, y = make_panel(n=24)
    clf = EADCTClassifier(**{**FAST, "device": "cuda"}, options={"precision": "float32"}).fit(X, y)
    restored = eadct.load(eadct.save(clf, tmp_path / "gpu.safetensors"), device="cpu")
    assert restored.device_ == "cpu"
    np.testing.assert_allclose(restored.predict_proba(X), clf.predict_proba(X), atol=1e-5)


@pytest.mark.parametrize(
    "kind,options",
    [
        ("classifier", {}),
        ("classifier", {"n_estimators": 2, "options": {"input_differences": "auto", "wide_scales": 2}}),
        ("regressor", {}),
        ("regressor", {"n_estimators": 2, "options": {"input_differences": "auto"}}),
        ("regressor", {"y2d": True}),
        ("representation", {}),
    ],
)
def test_every_fitted_attribute_is_declared_and_survives_load(kind, options, tmp_path):
    """eadct.load reads only what eadct.estimators._state declares: a fit that sets an attribute the schema lacks
    would save a file that load refuses, so each fit's state must be declared exactly, and load must give it back."""
    from eadct.estimators._state import FITTED_STATE

    X, y = make_panel(n=24)
    X = X * np.geomspace(1, 1e4, 24)[:, None, None]  # wide scales, for wide_scales to act
    options = dict(options)
    y2d = options.pop("y2d", False)
    if kind == "classifier":
        est = EADCTClassifier(**FAST, **options).fit(X, y)
    elif kind == "regressor":
        target = X[:, 0].mean(axis=1)
        est = EADCTRegressor(**FAST, **options).fit(X, np.c_[target, -target] if y2d else target)
    else:
        est = EADCTRepresentation(**{k: v for k, v in FAST.items() if k != "pretrain_epochs"}).fit(X)
    schema = FITTED_STATE[type(est).__name__]
    fitted = set(vars(est)) - set(est.get_params())
    assert fitted <= set(schema), f"not declared in eadct/estimators/_state.py: {fitted - set(schema)}"
    assert {n for n, a in schema.items() if a.required} <= fitted
    restored = eadct.load(eadct.save(est, tmp_path / "m.safetensors"))
    assert set(vars(restored)) == set(vars(est))
    for name in fitted - {"network_", "networks_"}:
        np.testing.assert_equal(getattr(restored, name), getattr(est, name))
    method = "transform" if kind == "representation" else "predict"
    np.testing.assert_array_equal(getattr(restored, method)(X), getattr(est, method)(X))


def test_float_and_negative_labels_round_trip(panel, tmp_path):
    X, y = panel
    for labels in (np.array([0.0, 1.0, -2.0])[y], np.array([-1, 7, 300])[y]):  # float labels: sklearn takes whole ones
        est = EADCTClassifier(**FAST).fit(X, labels)
        restored = eadct.load(eadct.save(est, tmp_path / "m.safetensors"))
        np.testing.assert_array_equal(restored.predict(X), est.predict(X))
        assert restored.classes_.dtype == est.classes_.dtype


def test_a_model_fitted_on_a_device_this_machine_lacks_loads_on_the_cpu(saved, tmp_path, panel):
    """device_ "cuda:7" (a GPU this machine does not have, or no GPU at all): the networks go to the CPU; an
    explicit device= that this machine lacks is refused instead."""
    X, _ = panel
    bad = _rewrite_header(saved, tmp_path / "gpu.safetensors", lambda h: h["state"].update({"device_": "cuda:7"}))
    restored = eadct.load(bad)
    assert restored.device_ == "cpu" and next(restored.network_.parameters()).device.type == "cpu"
    np.testing.assert_array_equal(restored.predict(X), eadct.load(saved).predict(X))
    if not torch.cuda.is_available() or torch.cuda.device_count() < 8:
        with pytest.raises(ValueError, match="no such device"):
            eadct.load(saved, device="cuda:7")
