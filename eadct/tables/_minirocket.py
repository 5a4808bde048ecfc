"""The MiniRocket rows of the tables: sktime's MiniRocketMultivariate plus a ridge, fit on TRAIN."""

from __future__ import annotations

import time

import numpy as np

from ..estimators import fill_missing, to_panel
from ._data import Data


def as_equal_array(X) -> np.ndarray:
    """MiniRocket wants equal lengths: unequal series are padded by repeating their last value."""
    panel = fill_missing(to_panel(X, missing_values="interpolate"))
    values = np.array(panel.values.transpose(0, 2, 1), dtype=np.float64, copy=True)  # (n, C, N), writable
    for i, n in enumerate(panel.lengths):
        if n < values.shape[2]:
            values[i, :, n:] = values[i, :, n - 1 : n]
    return np.nan_to_num(values)  # a channel never observed in a series -> 0


def equal_arrays(X_train, X_test) -> tuple[np.ndarray, np.ndarray]:
    """TRAIN and TEST as :func:`as_equal_array`, TEST padded (its last value repeated) or cut to TRAIN's length."""
    X_tr, X_te = as_equal_array(X_train), as_equal_array(X_test)
    n = X_tr.shape[2]
    if X_te.shape[2] > n:
        return X_tr, X_te[:, :, :n]
    return X_tr, np.concatenate([X_te, np.repeat(X_te[:, :, -1:], n - X_te.shape[2], axis=2)], axis=2)


def fit_minirocket(data: Data, seed: int):
    """The MiniRocket row of the tables: fit on TRAIN and predict TEST.

    ``data`` is what :func:`load_data` returns, or any object with ``X_train``, ``y_train``, ``X_test`` and
    ``task`` (``"classification"`` or ``"regression"``). sktime's ``MiniRocketMultivariate`` (10,000
    kernels, seeded by ``seed``), standardised features, then ``RidgeClassifierCV`` / ``RidgeCV`` over 10
    regularisation strengths from 1e-3 to 1e3. Returns ``(predictions, fit_s, predict_s, n_parameters,
    hyperparameters, device)``.
    """
    try:
        import numba  # sktime's MiniRocket needs it and does not install it
    except ImportError:
        raise ImportError("MiniRocket needs numba: pip install 'eadct[bench]' (or pip install numba).") from None
    import torch

    # numba's OpenMP layer resets the process's OpenMP threads, which are torch's: without the restore, every
    # fit after a MiniRocket unit in the same process ran with all cores, whatever --threads said. MiniRocket
    # itself keeps to the same limit.
    threads = torch.get_num_threads()
    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        return _fit_minirocket(data, seed)
    finally:
        torch.set_num_threads(threads)


def _fit_minirocket(data: Data, seed: int):
    from sklearn.linear_model import RidgeClassifierCV, RidgeCV
    from sklearn.preprocessing import StandardScaler
    from sktime.transformations.panel.rocket import MiniRocketMultivariate

    X_tr, X_te = equal_arrays(data.X_train, data.X_test)
    alphas = np.logspace(-3, 3, 10)
    ridge = RidgeClassifierCV(alphas=alphas) if data.task == "classification" else RidgeCV(alphas=alphas)
    # The steps run one after the other, not in an sklearn Pipeline: sklearn 1.9's pipeline callbacks fail
    # on sktime transformers (AttributeError _parent_callback_ctx).
    transform, scaler = MiniRocketMultivariate(random_state=seed), StandardScaler()
    t0 = time.perf_counter()
    features = np.asarray(transform.fit_transform(X_tr), dtype=np.float64)
    ridge.fit(scaler.fit_transform(features), data.y_train)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = ridge.predict(scaler.transform(np.asarray(transform.transform(X_te), dtype=np.float64)))
    predict_s = time.perf_counter() - t0
    n_params = int(np.size(ridge.coef_) + np.size(ridge.intercept_))
    hyper = {"num_kernels": 10000, "ridge_alpha": float(ridge.alpha_)}
    return pred, fit_s, predict_s, n_params, hyper, "cpu"
