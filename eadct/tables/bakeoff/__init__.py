"""Resampled benchmarks as the field runs them (``eadct-bakeoff``).

Each unit is one method on one fold of one dataset, exactly as tsml-eval makes the fold: fold 0 is the archive's
TRAIN/TEST split, fold ``k > 0`` a resample of TRAIN+TEST with the same sizes (stratified for classification)
drawn with seed ``k`` (:func:`fold_indices`). A finished unit is one tsml-eval predictions file; ``collect``
turns them into the ``<method>_<measure>.csv`` tables that tsml-eval and aeon's benchmarking tools read; the
report (:mod:`eadct.tables.bakeoff.report`) reads only those tables. See docs/bakeoff.md.
"""

from ._folds import fold_indices, load_fold
from ._methods import METHODS, make_estimator
from ._results import collect, read_summary, write_predictions
from ._run import run_bakeoff

__all__ = [
    "METHODS",
    "collect",
    "fold_indices",
    "load_fold",
    "make_estimator",
    "read_summary",
    "run_bakeoff",
    "write_predictions",
]
