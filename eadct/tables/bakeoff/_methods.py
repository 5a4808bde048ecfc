"""The methods a bake-off runs: eadct's rows and aeon's fast peers, each at its defaults.

A method is a name and a factory ``(task, seed, threads) -> estimator``. eadct's rows are the estimators'
defaults (``EA-DC``), the same with the Transformer or DC-Transformer architecture, and the paper's configuration
(``EA-DC-paper``: ``eadct.PAPER_CONFIGURATION`` as it stands). The peers are aeon's MiniRocket,
MultiRocket-Hydra and QUANT at their default settings. Each is seeded by the fold.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import numpy as np

from .._minirocket import equal_arrays


def _eadct(**params) -> Callable:
    def make(task, seed, threads):
        from ...estimators import EADCTClassifier, EADCTRegressor

        cls = EADCTClassifier if task == "classification" else EADCTRegressor
        return cls(**params, random_state=seed, n_jobs=threads)

    return make


def _paper(task, seed, threads):
    from ... import PAPER_CONFIGURATION

    return _eadct(**PAPER_CONFIGURATION)(task, seed, threads)


def _aeon(classifier: str, regressor: str, module: str) -> Callable:
    def make(task, seed, threads):
        from importlib import import_module

        kind = "classification" if task == "classification" else "regression"
        cls = getattr(import_module(f"aeon.{kind}.{module}"), classifier if kind == "classification" else regressor)
        est = cls(random_state=seed)
        return est.set_params(n_jobs=threads) if "n_jobs" in est.get_params() else est

    return make


#: name -> (factory, whether it is one of eadct's networks: they take the series as loaded, unequal lengths too,
#: and claim a GPU where the backend has one)
METHODS: dict[str, tuple[Callable, bool]] = {
    "EA-DC": (_eadct(), True),
    "EA-DC-paper": (_paper, True),
    "Transformer": (_eadct(architecture="transformer"), True),
    "DC-Transformer": (_eadct(architecture="dc-transformer"), True),
    "MiniRocket": (_aeon("MiniRocketClassifier", "MiniRocketRegressor", "convolution_based"), False),
    "MR-Hydra": (_aeon("MultiRocketHydraClassifier", "MultiRocketHydraRegressor", "convolution_based"), False),
    "QUANT": (_aeon("QUANTClassifier", "QUANTRegressor", "interval_based"), False),
}


def check_methods(names) -> list[str]:
    """``names`` as a list, or a ValueError naming the unknown ones and the known."""
    names = list(names)
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; the methods are {list(METHODS)}")
    return names


def make_estimator(name: str, task: str, seed: int, threads: int = 1):
    """A fresh estimator of method ``name`` for ``task``, seeded by ``seed``."""
    check_methods([name])
    return METHODS[name][0](task, seed, threads)


def method_inputs(name: str, X_train, X_test):
    """The inputs method ``name`` takes: eadct's rows take the series as loaded; aeon's peers take one 3D array,
    unequal series padded by repeating their last value (TEST padded or cut to TRAIN's length; as the tables'
    MiniRocket rows, :func:`eadct.tables.fit_minirocket`)."""
    return (X_train, X_test) if METHODS[name][1] else equal_arrays(X_train, X_test)


@cache
def warm_up(name: str, task: str) -> None:
    """Fit a peer once on a tiny random set, untimed, before its first timed fit in this process: aeon's numba
    kernels compile on first use (tens of seconds), and a fit time should measure fitting, not compiling."""
    if METHODS[name][1]:
        return
    rng = np.random.default_rng(0)
    y = np.arange(16) % 2 if task == "classification" else rng.normal(size=16)
    for channels in (1, 2):  # the kernels for one channel and for several differ
        make_estimator(name, task, seed=0, threads=1).fit(rng.normal(size=(16, channels, 64)), y)
