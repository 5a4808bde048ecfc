"""scikit-learn estimators around the EA-DC-Transformer, and the input coercion they share."""

from ._classifier import EADCTClassifier
from ._data import differences_rule, spread_threshold
from ._input import Panel, fill_missing, to_panel
from ._loading import device_here, estimator_from_state, short_text
from ._options import flatten, nest
from ._paper import PAPER_CONFIGURATION, paper_configuration
from ._regressor import EADCTRegressor
from ._representation import EADCTRepresentation
from ._state import is_device, stray_state
from ._warn import LearnedNothingWarning, LongerSeriesWarning

__all__ = [
    "EADCTClassifier",
    "EADCTRegressor",
    "EADCTRepresentation",
    "PAPER_CONFIGURATION",
    "Panel",
    "fill_missing",
    "to_panel",
    "paper_configuration",
    "LearnedNothingWarning",
    "LongerSeriesWarning",
    # the benchmark tables' flat settings <-> an estimator's keyword arguments (eadct.tables)
    "flatten",
    "nest",
    # the data-dependent rules whose decisions the tables' keys record (eadct.tables)
    "differences_rule",
    "spread_threshold",
    # the reading side of eadct.load (eadct.persistence)
    "device_here",
    "estimator_from_state",
    "is_device",
    "short_text",
    # the writing side's check (eadct.persistence.save)
    "stray_state",
]
