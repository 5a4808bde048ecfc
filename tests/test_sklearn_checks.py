"""scikit-learn's estimator checks over the three estimators."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import (
    check_classifiers_train,
    check_n_features_in,
    check_n_features_in_after_fitting,
    check_transformer_general,
    parametrize_with_checks,
)

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation

# Small but able to learn sklearn's toy problems (2-feature blobs read as length-2 series).
CHECK = dict(
    d_model=16,
    n_heads=2,
    n_blocks=1,
    d_ff=32,
    attention_ratio=0.5,
    max_epochs=5,
    pretrain_epochs=0,
    validation_fraction=0.0,
    n_iter_no_change=None,
    batch_size=32,
    device="cpu",
    n_jobs=1,  # sklearn's idempotency checks compare refits to 1e-7: a fixed thread count (docs/threads.md)
    random_state=0,
)

# Every entry carries the measured reason (see docs/estimator_checks.md).
N_FEATURES_REASON = (
    "2D X is a batch of univariate series (n_samples, n_timepoints), so n_features_in_ is the number "
    "of channels (1), not X.shape[1]; a different length at predict is a legitimate unequal-length "
    "input, not an error"
)
TRAIN_CHECK_REASON = (
    "the check ends by predicting on X.T, shape (2, 300): two univariate series of length 300, which "
    "is valid time-series input, not a feature-count mismatch; with sklearn's feature-count rule "
    "added the whole check passes (test_failures_are_only_the_feature_count_convention)"
)
EXPECTED_FAILURES = {
    "check_n_features_in": N_FEATURES_REASON,
    "check_n_features_in_after_fitting": N_FEATURES_REASON,
    "check_classifiers_train": TRAIN_CHECK_REASON,
    "check_classifiers_train(readonly_memmap=True)": TRAIN_CHECK_REASON,
    "check_classifiers_train(readonly_memmap=True,X_dtype=float32)": TRAIN_CHECK_REASON,
    "check_transformer_general": TRAIN_CHECK_REASON.replace("X.T, shape (2, 300)", "X.T"),
    "check_transformer_general(readonly_memmap=True)": TRAIN_CHECK_REASON.replace("X.T, shape (2, 300)", "X.T"),
}
SUBSET_REASON = (
    "float32 matrix products round differently for different batch sizes: results on X[subset] and on X "
    "differ by at most 1.1e-6 (transform) and 2.8e-7 (regressor predict), measured, above the check's "
    "atol = rtol = 1e-7; tests/test_estimators.py::test_subset_invariance_float32 asserts agreement to 1e-5"
)


def _expected_failed_checks(estimator):
    failures = {
        k: v
        for k, v in EXPECTED_FAILURES.items()
        if not (k.startswith("check_transformer") and not hasattr(estimator, "transform"))
    }
    failures["check_methods_subset_invariance"] = SUBSET_REASON  # every estimator has transform
    return failures


@parametrize_with_checks(
    [
        EADCTClassifier(**CHECK),
        EADCTRegressor(**CHECK),
        EADCTRepresentation(**{k: v for k, v in CHECK.items() if k != "pretrain_epochs"}),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def _with_sklearn_feature_count(cls):
    """The estimator with sklearn's tabular rule added: for 2D X, n_features_in_ = X.shape[1] and a
    different X.shape[1] at predict / transform is a ValueError. Only for proving the reasons above."""

    class Strict(cls):
        def fit(self, X, y=None):
            super().fit(X, y)
            self.n_features_in_ = np.asarray(X).shape[1]
            return self

        def _forward(self, X, method="forward", networks=None):
            # the rule is for predict / transform; fit's own pass over X (the ridge refit) names its networks
            if networks is None and np.ndim(X) == 2 and np.shape(X)[1] != self.n_features_in_:
                raise ValueError(
                    f"X has {np.shape(X)[1]} features, but {cls.__name__} is expecting "
                    f"{self.n_features_in_} features as input"
                )
            return super()._forward(X, method, networks)

    Strict.__name__ = cls.__name__
    return Strict


# lr 1e-2 and 10 epochs: enough to pass check_classifiers_train's training-accuracy threshold (> 0.83) with room
# (0.975 on its two-class blobs, 0.92 on its three-class ones).
LEARNING = {**CHECK, "max_epochs": 10, "lr": 1e-2}


@pytest.mark.parametrize(
    "cls,check",
    [
        (EADCTClassifier, check_classifiers_train),
        (EADCTRepresentation, check_transformer_general),
        (EADCTClassifier, check_n_features_in),
        (EADCTClassifier, check_n_features_in_after_fitting),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_failures_are_only_the_feature_count_convention(cls, check):
    params = {k: v for k, v in LEARNING.items() if cls is not EADCTRepresentation or k != "pretrain_epochs"}
    estimator = _with_sklearn_feature_count(cls)(**params)
    check(cls.__name__, estimator)
