"""Ensembles (``n_estimators``): the members' splits of TRAIN (``kfold_indices``, ``member_splits``), their
averaged outputs, checkpoints and round trips."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from conftest import TINY, make_panel, make_unequal
from sklearn.base import clone

from eadct import EADCTClassifier, EADCTRegressor
from eadct.estimators._ensemble import kfold_indices, member_splits

FAST = {**TINY, "max_epochs": 2, "pretrain_epochs": 1}


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
