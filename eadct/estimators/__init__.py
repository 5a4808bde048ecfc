"""scikit-learn estimators around the EA-DC-Transformer, and the input coercion they share."""

from ._classifier import EADCTClassifier
from ._data import SCALE_SPREAD, differences_rule, scale_spread, spread_threshold, validation_split
from ._input import Panel, fill_missing, to_panel
from ._loading import device_here, estimator_from_state, short_text
from ._paper import PAPER_CONFIGURATION, paper_configuration
from ._proxy import proxy_scores as treatment_proxy_scores
from ._regressor import EADCTRegressor
from ._representation import EADCTRepresentation
from ._ridge import RIDGE_ALPHAS, one_standard_error
from ._state import is_device
from ._treatment import MARGIN as TREATMENT_MARGIN
from ._treatment import NETWORK_BELOW as TREATMENT_NETWORK_BELOW
from ._treatment import PROXY_MARGIN as TREATMENT_PROXY_MARGIN

__all__ = [
    "EADCTClassifier",
    "EADCTRegressor",
    "EADCTRepresentation",
    "PAPER_CONFIGURATION",
    "RIDGE_ALPHAS",
    "SCALE_SPREAD",
    "TREATMENT_MARGIN",
    "TREATMENT_NETWORK_BELOW",
    "TREATMENT_PROXY_MARGIN",
    "Panel",
    "differences_rule",
    "fill_missing",
    "one_standard_error",
    "to_panel",
    "paper_configuration",
    "scale_spread",
    "spread_threshold",
    "treatment_proxy_scores",
    "validation_split",
    # the reading side of eadct.load (eadct.persistence)
    "device_here",
    "estimator_from_state",
    "is_device",
    "short_text",
]
