"""The folds of a dataset, as tsml-eval makes them (``tsml_eval.experiments`` with ``resample_id=fold``).

Fold 0 is the archive's TRAIN/TEST split. Fold ``k > 0`` pools TRAIN and TEST (TEST after TRAIN, each in file
order) and draws a new split of the same sizes with seed ``k``: per class for classification
(``stratified_resample_data_indices``, the classes in sorted order of their labels as read from the file), over
all cases for regression (``resample_data_indices``). aeon's functions are the ones tsml-eval uses;
tests/test_bakeoff_folds.py checks the splits against files tsml-eval wrote.
"""

from __future__ import annotations

import numpy as np

from .._data import Data, subset


def fold_indices(y_train, y_test, fold: int, task: str) -> tuple[np.ndarray, np.ndarray]:
    """Indices into TRAIN+TEST (TEST after TRAIN) of fold ``fold``'s TRAIN and TEST cases."""
    if not isinstance(fold, (int, np.integer)) or isinstance(fold, bool) or fold < 0:
        raise ValueError(f"fold must be an integer >= 0 (0 is the archive's split), got {fold!r}")
    if task not in ("classification", "regression"):
        raise ValueError(f"task must be 'classification' or 'regression', got {task!r}")
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    n_train, n_test = len(y_train), len(y_test)
    if fold == 0:
        return np.arange(n_train), np.arange(n_train, n_train + n_test)
    from aeon.benchmarking.resampling import resample_data_indices, stratified_resample_data_indices

    if task == "regression":
        return resample_data_indices(y_train, y_test, random_state=int(fold))
    if list(np.unique(y_train)) != list(np.unique(y_test)):
        raise ValueError(
            "a stratified resample needs the same classes in TRAIN and TEST (as tsml-eval does); "
            f"TRAIN has {sorted(np.unique(y_train))}, TEST {sorted(np.unique(y_test))}"
        )
    return stratified_resample_data_indices(y_train, y_test, random_state=int(fold))


def load_fold(data: Data, fold: int) -> tuple:
    """``(X_train, y_train, X_test, y_test)`` of fold ``fold`` of ``data`` (from :func:`eadct.tables.load_data`)."""
    train, test = fold_indices(data.y_train, data.y_test, fold, data.task)
    X = _pooled(data.X_train, data.X_test)
    y = np.concatenate([np.asarray(data.y_train), np.asarray(data.y_test)])
    return subset(X, train), y[train], subset(X, test), y[test]


def _pooled(X_train, X_test):
    if isinstance(X_train, np.ndarray) and isinstance(X_test, np.ndarray) and X_train.shape[1:] == X_test.shape[1:]:
        return np.concatenate([X_train, X_test])
    return [*list(X_train), *list(X_test)]
