"""The aeon estimators (issue 17, point 2): aeon's own checks, its pipelines, unequal lengths."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_unequal

pytest.importorskip("aeon")
from aeon.testing.estimator_checking import check_estimator  # noqa: E402

import eadct  # noqa: E402
from eadct.aeon import EADCTClassifier, EADCTRegressor  # noqa: E402

TINY = EADCTClassifier._get_test_params()[0]


@pytest.mark.parametrize("cls", [EADCTClassifier, EADCTRegressor])
def test_aeon_check_estimator(cls):
    results = check_estimator(cls, raise_exceptions=True)
    assert results and all(v == "PASSED" for v in results.values())


def test_same_hyperparameters_as_the_sklearn_estimators_but_aeons_n_jobs():
    for ours, theirs in ((EADCTClassifier, eadct.EADCTClassifier), (EADCTRegressor, eadct.EADCTRegressor)):
        assert ours().get_params() == {**theirs().get_params(), "n_jobs": 1}
        assert ours(n_jobs=None).get_params() == theirs().get_params()
    with pytest.raises(TypeError, match="unexpected keyword argument 'alhpa'"):
        EADCTClassifier(alhpa=0.5)
    assert EADCTClassifier(missing_values="interpolate").get_tag("capability:missing_values") is True
    assert EADCTClassifier().get_tag("capability:missing_values") is False


def test_predictions_equal_the_sklearn_estimators():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(16, 2, 10))
    y = np.arange(16) % 2
    X[y == 1, 0] += 1.5
    ours = EADCTClassifier(**TINY).fit(X, y)
    theirs = eadct.EADCTClassifier(**TINY, n_jobs=1).fit(X, y)
    np.testing.assert_array_equal(ours.predict_proba(X), theirs.predict_proba(X))


def test_classifier_pipeline_takes_multivariate_unequal_series():
    """The issue: aeon's ClassifierPipeline refused the estimator as unable to handle multivariate series."""
    from aeon.classification.compose import ClassifierPipeline
    from aeon.transformations.collection import Normalizer

    X, y, _ = make_unequal(n=16)  # 2 channels, lengths 8 to 19
    pipe = ClassifierPipeline([Normalizer()], EADCTClassifier(**TINY)).fit(X, y)
    assert pipe.predict(X).shape == (16,)
    assert pipe.predict_proba(X).shape == (16, 2)


def test_regressor_on_unequal_lengths():
    X, _, target = make_unequal(n=16)
    reg = EADCTRegressor(**TINY).fit(X, target)
    assert np.all(np.isfinite(reg.predict(X)))
