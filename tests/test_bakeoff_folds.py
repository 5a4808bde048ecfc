"""The bake-off's folds are tsml-eval's: checked against the splits tsml-eval 0.6.0 itself made
(tests/data/tsml_eval_splits.json, written by tests/data/make_tsml_eval_splits.py) on the copies of BasicMotions
(classification, stratified) and Covid3Month (regression) that aeon ships."""

import json
from pathlib import Path

import aeon
import numpy as np
import pytest

from eadct.tables._data import load_data
from eadct.tables.bakeoff import fold_indices, load_fold

AEON_DATA = Path(aeon.__file__).parent / "datasets" / "data"
REFERENCE = json.loads((Path(__file__).parent / "data" / "tsml_eval_splits.json").read_text())["folds"]


def _sums(X):
    return np.array([float(np.sum(x)) for x in X])


@pytest.mark.parametrize("key", sorted(REFERENCE))
def test_folds_are_tsml_evals(key):
    name, fold = key.split("/")
    data = load_data(name, [AEON_DATA])
    X_tr, y_tr, X_te, y_te = load_fold(data, int(fold))
    ref = REFERENCE[key]
    if data.task == "classification":
        assert list(map(str, y_tr)) == ref["y_train"] and list(map(str, y_te)) == ref["y_test"]
    else:
        np.testing.assert_allclose(y_tr, ref["y_train"]), np.testing.assert_allclose(y_te, ref["y_test"])
    np.testing.assert_allclose(_sums(X_tr), ref["train_sums"], rtol=1e-9)
    np.testing.assert_allclose(_sums(X_te), ref["test_sums"], rtol=1e-9)


def test_resamples_differ_and_keep_sizes_and_class_counts():
    data = load_data("BasicMotions", [AEON_DATA])
    train0, _ = fold_indices(data.y_train, data.y_test, 0, "classification")
    train1, test1 = fold_indices(data.y_train, data.y_test, 1, "classification")
    y = np.concatenate([data.y_train, data.y_test])
    assert len(train1) == len(data.y_train) and len(test1) == len(data.y_test)
    assert sorted(np.concatenate([train1, test1])) == list(range(len(y)))
    assert set(train1) != set(train0)
    assert sorted(y[train1]) == sorted(data.y_train)  # stratified: the same class counts as TRAIN


@pytest.mark.parametrize("fold", [-1, 1.5, True, "1"])
def test_a_bad_fold_is_a_value_error(fold):
    with pytest.raises(ValueError, match="fold must be an integer"):
        fold_indices(np.array(["a", "b"]), np.array(["a", "b"]), fold, "classification")


def test_a_class_missing_from_test_cannot_be_stratified():
    with pytest.raises(ValueError, match="same classes in TRAIN and TEST"):
        fold_indices(np.array(["a", "b", "c"]), np.array(["a", "b"]), 1, "classification")
