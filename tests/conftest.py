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
    """``model`` as an older version saved it: its pickled state as the versions before ``options`` wrote it (every
    setting flat: the fields of ``options`` in effect beside the parameters), without the entries ``names``
    (parameters, option fields or fitted attributes that came later; each must be one of them), loaded as the
    estimators upgrade such states (``_persistence``)."""
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


def killed_then_resumed(cls, params, X, y, tmp_path, monkeypatch):
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
