"""``EADCTRegressor``'s own hyperparameters (its loss, its head's refit and the clips of its outputs): one
definition each, part of ``PARAMS`` (:mod:`eadct.estimators._params`), kept apart only for the size of that file.
"""

from __future__ import annotations

from ..networks.config import is_positive_int, is_switch
from ..training import REGRESSION_LOSSES
from ._param import Param, _none_or
from ._ridge import REFITS

REGRESSOR_HEAD = {
    "loss": Param(
        "squared_error",
        lambda v: isinstance(v, str) and v in REGRESSION_LOSSES,
        f"one of {list(REGRESSION_LOSSES)}",
        '{"squared_error", "huber"}, default="squared_error"\n'
        "    The regressor's fine-tuning loss, which also chooses its best epoch on the validation split.\n"
        '    "squared_error": MSE on targets standardised by their mean and standard deviation (paper Eq. 9).\n'
        '    "huber": the Huber loss on targets centred on their median and scaled by their interquartile range\n'
        "    (/ 1.349): quadratic up to 1.35 such units from the target, linear beyond, so that a few extreme\n"
        "    targets in TRAIN cannot dominate the fit (docs/training.md).",
        before="squared_error",
    ),
    "head_refit": Param(
        "ridge",
        lambda v: v in REFITS,
        f"one of {list(REFITS)}",
        'None, "ridge" or "ridge-1se", default="ridge"\n'
        '    None: the regressor\'s linear head as fine-tuned. "ridge": after fine-tuning, fitted again by ridge\n'
        "    regression on the pooled representation of every TRAIN series, its strength the one with the lowest\n"
        '    leave-one-out error on TRAIN. "ridge-1se": the same, its strength the largest whose leave-one-out\n'
        "    error is within one standard error of the lowest (more shrinkage towards the mean target where the\n"
        '    errors cannot tell strengths apart). With loss="huber" the head stays as fine-tuned, whose robustness\n'
        "    a squared-error refit would undo (docs/training.md).",
        before=None,
    ),
    "head_input_parts": Param(
        None,
        _none_or(is_positive_int),
        "None or a positive int",
        "int or None, default=None\n"
        '    With head_refit="ridge": the outputs also read the input itself, the means of this many consecutive\n'
        "    parts of each channel (of each series' own length), through weights that the ridge refit sets beside\n"
        "    the head's, the input's block weighed against the representation by leave-one-out on TRAIN (weight 0\n"
        "    drops it). A linear path for sets whose signal lies in the input's shape (docs/training.md).",
        before=None,
    ),
    "clip_predictions": Param(
        False,
        is_switch,
        "True or False",
        "bool, default=False\n"
        "    Clip each predicted target to the range of that target in TRAIN (its minimum and maximum in fit). On\n"
        "    small, noisy sets a head fitted to a representation that has seen the TRAIN targets can predict far\n"
        "    outside them; the clip bounds that error and changes nothing where predictions stay inside. Where a\n"
        "    test target can lie beyond TRAIN's range, it also clips a right prediction: for bounded targets\n"
        '    (docs/accuracy.md, "Candidate: predictions clipped to TRAIN\'s target range").',
        before=False,
    ),
    "clip_representation": Param(
        False,
        is_switch,
        "True or False",
        "bool, default=False\n"
        "    Clip each feature of the pooled representation (the head's input) to the range it took over the\n"
        "    TRAIN series after fitting. A series unlike any in TRAIN (an input far larger than TRAIN's, say) then\n"
        "    cannot push the linear head into extrapolating; series inside TRAIN's range are unchanged, and so is\n"
        "    the fit (the ridge refit reads TRAIN's features, all inside the range). ``transform`` returns the\n"
        '    clipped features (docs/accuracy.md, "Candidate: the representation clipped to TRAIN\'s range").',
        before=False,
    ),
}
