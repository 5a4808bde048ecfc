"""sktime estimators: :class:`EADCTClassifier` and :class:`EADCTRegressor` as sktime ``BaseClassifier`` /
``BaseRegressor``, for sktime's ``evaluate``, pipelines, benchmarking and every panel mtype it converts.

They delegate to the scikit-learn estimators of :mod:`eadct` (same hyperparameters, same defaults, same model
code): ``fit`` fits one in ``estimator_``, ``predict`` and ``predict_proba`` ask it. sktime converts the input
(numpy 3D, pd-multiindex, nested DataFrames, lists of DataFrames, ...) to a numpy 3D array for equal lengths,
or to a nested DataFrame for unequal ones, both of which the scikit-learn estimators read. See docs/sktime.md.
"""

from __future__ import annotations

from sktime.classification.base import BaseClassifier
from sktime.regression.base import BaseRegressor

from .delegation import TEST_PARAMS, Delegating
from .estimators import EADCTClassifier as _SklearnClassifier
from .estimators import EADCTRegressor as _SklearnRegressor

__all__ = ["EADCTClassifier", "EADCTRegressor"]

_TAGS = {
    "authors": ["eadct developers"],
    "maintainers": ["eadct developers"],
    "python_dependencies": ["torch"],
    # numpy 3D input stays an array; every other mtype becomes a nested DataFrame (sktime converts to the first
    # listed inner mtype, which must hold unequal lengths too)
    "X_inner_mtype": ["nested_univ", "numpy3D"],
    "capability:random_state": True,
    "capability:multivariate": True,
    "capability:unequal_length": True,
    "capability:missing_values": False,  # set per instance: True with missing_values="interpolate"
    "capability:multithreading": True,  # n_jobs: torch threads (docs/threads.md)
}


class _Delegating(Delegating):
    """The shared delegation (:class:`eadct.delegation.Delegating`) with sktime's test settings."""

    @classmethod
    def get_test_params(cls, parameter_set="default"):
        """Tiny settings for sktime's estimator checks."""
        return [dict(p) for p in TEST_PARAMS]


class EADCTClassifier(_Delegating, BaseClassifier):
    """sktime classifier on the EA-DC-Transformer: :class:`eadct.EADCTClassifier` for sktime.

    Parameters
    ----------
    **params
        The hyperparameters of :class:`eadct.EADCTClassifier`, with the same names and defaults.

    Attributes
    ----------
    estimator_ : eadct.EADCTClassifier
        The fitted scikit-learn estimator (its ``history_``, ``transform``, ``attention_maps``, ...).

    Examples
    --------
    >>> from sktime.datasets import load_basic_motions
    >>> from eadct.sktime import EADCTClassifier
    >>> X, y = load_basic_motions(split="train", return_type="pd-multiindex")
    >>> clf = EADCTClassifier(d_model=8, n_heads=2, n_blocks=1, max_epochs=2, pretrain_epochs=1, random_state=0)
    >>> clf.fit(X, y).predict(X).shape
    (40,)
    """

    _tags = {**_TAGS, "capability:predict_proba": True}
    _sklearn_class = _SklearnClassifier

    def _predict_proba(self, X):
        return self.estimator_.predict_proba(X)


class EADCTRegressor(_Delegating, BaseRegressor):
    """sktime regressor on the EA-DC-Transformer: :class:`eadct.EADCTRegressor` for sktime.

    Parameters
    ----------
    **params
        The hyperparameters of :class:`eadct.EADCTRegressor`, with the same names and defaults.

    Attributes
    ----------
    estimator_ : eadct.EADCTRegressor
        The fitted scikit-learn estimator.

    Examples
    --------
    >>> import numpy as np
    >>> from eadct.sktime import EADCTRegressor
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(20, 2, 12)), rng.normal(size=20)
    >>> reg = EADCTRegressor(d_model=8, n_heads=2, n_blocks=1, max_epochs=2, pretrain_epochs=1, random_state=0)
    >>> reg.fit(X, y).predict(X).shape
    (20,)
    """

    _tags = dict(_TAGS)
    _sklearn_class = _SklearnRegressor
