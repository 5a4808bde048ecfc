"""Shared tiny presets and fitted estimators, so the default suite stays fast on 2 cores."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from sklearn.base import clone

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation

# d_model 8-16, 1 block, 2 heads, a few epochs (STYLE: tests on a 2-core CPU).
TINY = dict(
    d_model=16,
    n_heads=2,
    n_blocks=1,
    d_ff=16,
    attention_ratio=0.5,
    batch_size=16,
    max_epochs=3,
    pretrain_epochs=1,
    device="cpu",
    n_jobs=1,  # one thread: tiny models gain nothing from more, and results do not depend on the load
    random_state=0,
)
TINY_REPR = {k: v for k, v in TINY.items() if k != "pretrain_epochs"}


def make_panel(n=30, channels=3, length=24, n_classes=3, seed=0):
    """Seeded synthetic classification data whose classes differ in shape, (n, C, N)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    t = np.linspace(0, 1, length)
    X = 0.3 * rng.normal(size=(n, channels, length))
    for k in range(n_classes):
        X[y == k, 0] += np.sin(2 * np.pi * (k + 1) * t)
    return X, y


def saved_without(model, *names):
    """``model`` as a version without the parameters ``names`` saved it: loaded from its pickled state as the
    versions before ``options`` wrote it (every setting flat: the fields of ``options`` in effect beside the
    parameters), with the entries ``names`` (parameters, fields or fitted attributes) removed (the estimators
    upgrade such states, ``_persistence``)."""
    state = model.__getstate__()
    state.pop("options")
    state.update({k.removeprefix("options__"): v for k, v in model.get_params().items() if "__" in k})
    for name in names:
        del state[name]
    old = type(model).__new__(type(model))
    old.__setstate__(state)
    return old


def check_option_fit(cls, base: dict, option: dict, X, labels) -> None:
    """``cls(**base, **option)``: finite outputs, the same after ``clone`` + fit and after a pickle round trip, and
    different from ``cls(**base)``'s."""
    method = "predict_proba" if cls is EADCTClassifier else "predict"
    model = cls(**base, **option).fit(X, labels)
    out = getattr(model, method)(X)
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(getattr(clone(model).fit(X, labels), method)(X), out)
    np.testing.assert_array_equal(getattr(pickle.loads(pickle.dumps(model)), method)(X), out)
    assert not np.array_equal(getattr(cls(**base).fit(X, labels), method)(X), out)


def check_checked_and_old_models_load(base: dict, option: str, bad, strip) -> None:
    """``option=bad`` is refused with a ValueError that names it; a classifier saved before ``option`` existed (its
    entry removed from the pickled state, and ``strip(layer)`` deleting what each encoder layer gained with it) loads
    with the option's default and predicts exactly as it did."""
    X, y = make_panel(n=16)
    key = f"options__{option}" if option in EADCTClassifier._option_names else option
    with pytest.raises(ValueError, match=f"{option} must be"):
        EADCTClassifier(**base).set_params(**{key: bad}).fit(X, y)
    clf = EADCTClassifier(**base).fit(X, y)
    old = saved_without(clf, option)
    for layer in old.network_.encoder.layers:
        strip(layer)  # a network pickled before the attribute existed
    assert old.get_params()[key] == EADCTClassifier().get_params()[key]
    np.testing.assert_array_equal(old.predict_proba(X), clf.predict_proba(X))


def check_resumes_exactly(option: dict, tmp_path, monkeypatch) -> None:
    """A classifier with ``option`` fitted with a checkpoint, killed in its 4th epoch and fitted again, predicts
    exactly as an uninterrupted fit."""
    from test_accuracy_options import _killed_then_resumed

    X, y = make_panel(n=20)
    params = {**TINY, "max_epochs": 4, "pretrain_epochs": 1, **option}
    whole = EADCTClassifier(**params).fit(X, y).predict_proba(X)
    resumed = _killed_then_resumed(EADCTClassifier, params, X, y, tmp_path, monkeypatch).predict_proba(X)
    np.testing.assert_array_equal(resumed, whole)


def make_unequal(n=24, channels=2, lengths=(8, 20), seed=0):
    """List of (C, L_i) series of unequal length, with labels and a float target."""
    rng = np.random.default_rng(seed)
    X = [rng.normal(size=(channels, int(rng.integers(*lengths)))) for _ in range(n)]
    y = np.arange(n) % 2
    target = np.array([x.mean() for x in X])
    return X, y, target


@pytest.fixture(scope="session")
def panel():
    return make_panel()


@pytest.fixture(scope="session")
def fitted_classifier(panel):
    X, y = panel
    return EADCTClassifier(**TINY).fit(X, y)


@pytest.fixture(scope="session")
def fitted_regressor(panel):
    X, _ = panel
    return EADCTRegressor(**TINY).fit(X, X[:, 0].mean(axis=1))


@pytest.fixture(scope="session")
def fitted_representation(panel):
    X, _ = panel
    return EADCTRepresentation(**TINY_REPR).fit(X)


def pytest_collection_modifyitems(config, items):
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs CUDA")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
