"""A table's datasets as the units see them: TRAIN and TEST loaded once, the task, the score."""

from __future__ import annotations

import numpy as np


class Data:
    """TRAIN and TEST of one dataset, loaded once for all its units."""

    def __init__(self, name, X_train, y_train, X_test, y_test, path=None):
        self.name = name
        self.X_train, self.y_train, self.X_test, self.y_test = X_train, y_train, X_test, y_test
        self.path = path
        self.task = "regression" if np.issubdtype(np.asarray(y_train).dtype, np.floating) else "classification"


def load_data(name: str, data_dirs, download: bool = False) -> Data | None:
    """Load a dataset from the first of ``data_dirs`` that holds it (then sktime's bundled copies, the
    cache and, with ``download``, the archives). None when it is nowhere: the unit is reported missing."""
    from ..datasets import DatasetNotFoundError, find_ts_file, load_dataset

    dirs = list(data_dirs or []) or [None]
    for i, d in enumerate(dirs):
        last = i == len(dirs) - 1
        try:
            X_tr, y_tr = load_dataset(name, "train", d, download=download and last, progress=False)
            X_te, y_te = load_dataset(name, "test", d, download=download and last, progress=False)
        except DatasetNotFoundError:
            continue
        try:
            path = str(find_ts_file(name, "train", d))
        except Exception:  # noqa: BLE001 - the path is informative only
            path = None
        return Data(name, X_tr, y_tr, X_te, y_te, path)
    return None


def subset(X, idx):
    """Rows ``idx`` of an array or a list of series."""
    return X[idx] if isinstance(X, np.ndarray) else [X[i] for i in idx]


def score(task: str, y_true, y_pred) -> float:
    """Accuracy (classification) or RMSE (regression)."""
    if task == "classification":
        return float(np.mean(np.asarray(y_pred) == np.asarray(y_true)))
    return float(np.sqrt(np.mean((np.asarray(y_pred, dtype=float) - np.asarray(y_true, dtype=float)) ** 2)))


def test_log_loss(est, X_test, y_test) -> float | None:
    """Mean log-loss (natural log) of a fitted classifier's TEST probabilities: how well calibrated its confidence
    is, which accuracy does not see; None where it gives no probabilities or TEST holds a class TRAIN has not."""
    from sklearn.metrics import log_loss

    classes = getattr(est, "classes_", None)
    if not hasattr(est, "predict_proba") or classes is None or not set(np.unique(y_test)) <= set(classes):
        return None
    return float(log_loss(y_test, est.predict_proba(X_test), labels=classes))


def metric_name(task: str) -> str:
    return "accuracy" if task == "classification" else "rmse"


def higher_is_better(task: str) -> bool:
    return task == "classification"
