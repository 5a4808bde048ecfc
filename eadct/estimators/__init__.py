"""scikit-learn estimators around the EA-DC-Transformer."""

from ._classifier import EADCTClassifier
from ._regressor import EADCTRegressor
from ._representation import EADCTRepresentation

__all__ = ["EADCTClassifier", "EADCTRegressor", "EADCTRepresentation"]
