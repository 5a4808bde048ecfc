"""aeon estimators: :class:`EADCTClassifier` and :class:`EADCTRegressor` as aeon ``BaseClassifier`` /
``BaseRegressor``, for aeon's pipelines, benchmarking (tsml-eval) and every collection type it converts.

They delegate to the scikit-learn estimators of :mod:`eadct` (same hyperparameters and model code; see
:mod:`eadct.delegation`): ``fit`` fits one in ``estimator_``, ``predict`` and ``predict_proba`` ask it. aeon
converts the input to a numpy 3D array (equal lengths) or a list of 2D ``(n_channels, n_timepoints)`` arrays
(unequal lengths), both of which the scikit-learn estimators read. One difference follows aeon's convention:
``n_jobs`` defaults to 1 (one torch thread) instead of None. See docs/aeon.md.
"""

from __future__ import annotations

from aeon.classification.base import BaseClassifier
from aeon.regression.base import BaseRegressor

from .delegation import TEST_PARAMS, Delegating
from .estimators import EADCTClassifier as _SklearnClassifier
from .estimators import EADCTRegressor as _SklearnRegressor

__all__ = ["EADCTClassifier", "EADCTRegressor"]

_TAGS = {
    "python_dependencies": "torch",
    "X_inner_type": ["np-list", "numpy3D"],
    "capability:multivariate": True,
    "capability:unequal_length": True,
    "capability:missing_values": False,  # set per instance: True with missing_values="interpolate"
    "capability:multithreading": True,  # n_jobs: torch threads (docs/threads.md); aeon's default of 1
}
#: aeon's convention: estimators that can use threads default to one.
_AEON_DEFAULTS = {"n_jobs": 1}


class _Delegating(Delegating):
    """The shared delegation (:class:`eadct.delegation.Delegating`) with aeon's defaults, ``_n_jobs`` and test
    settings."""

    _own_defaults = _AEON_DEFAULTS

    def _fit(self, X, y):
        from aeon.utils.validation import check_n_jobs

        self._n_jobs = check_n_jobs(self.n_jobs)
        return super()._fit(X, y)

    @classmethod
    def _get_test_params(cls, parameter_set="default"):
        """Tiny settings for aeon's estimator checks."""
        return [dict(p) for p in TEST_PARAMS]


class EADCTClassifier(_Delegating, BaseClassifier):
    """aeon classifier on the EA-DC-Transformer: :class:`eadct.EADCTClassifier` for aeon.

    Parameters
    ----------
    **params
        The hyperparameters of :class:`eadct.EADCTClassifier`, with the same names and defaults, except
        ``n_jobs=1`` (aeon's convention).

    Attributes
    ----------
    estimator_ : eadct.EADCTClassifier
        The fitted scikit-learn estimator (its ``history_``, ``transform``, ``attention_maps``, ...).

    Examples
    --------
    >>> from aeon.datasets import load_basic_motions
    >>> from eadct.aeon import EADCTClassifier
    >>> X, y = load_basic_motions(split="train")
    >>> clf = EADCTClassifier(d_model=8, n_heads=2, n_blocks=1, max_epochs=2, pretrain_epochs=1, random_state=0)
    >>> clf.fit(X, y).predict(X).shape
    (40,)
    """

    _tags = dict(_TAGS)
    _sklearn_class = _SklearnClassifier

    def _predict_proba(self, X):
        return self.estimator_.predict_proba(X)


class EADCTRegressor(_Delegating, BaseRegressor):
    """aeon regressor on the EA-DC-Transformer: :class:`eadct.EADCTRegressor` for aeon.

    Parameters
    ----------
    **params
        The hyperparameters of :class:`eadct.EADCTRegressor`, with the same names and defaults, except
        ``n_jobs=1`` (aeon's convention).

    Attributes
    ----------
    estimator_ : eadct.EADCTRegressor
        The fitted scikit-learn estimator.

    Examples
    --------
    >>> import numpy as np
    >>> from eadct.aeon import EADCTRegressor
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(20, 2, 12)), rng.normal(size=20)
    >>> reg = EADCTRegressor(d_model=8, n_heads=2, n_blocks=1, max_epochs=2, pretrain_epochs=1, random_state=0)
    >>> reg.fit(X, y).predict(X).shape
    (20,)
    """

    _tags = dict(_TAGS)
    _sklearn_class = _SklearnRegressor
