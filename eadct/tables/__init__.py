"""Reproduce the paper's tables: configurations, a resumable runner and a report generator.

Command line: ``python -m eadct.tables run table2 --profile quick --data-dir ../shared/datasets/UEA`` then
``python -m eadct.tables report table2 --profile quick``. See docs/tables.md.
"""

from ._backends import BackendUnavailable
from ._config import ModelSpec, Profile, TableConfig, TableConfigError, available_tables, load_table
from ._data import score, subset
from ._keys import REFERENCE_DEFAULTS
from ._minirocket import fit_minirocket
from ._report import ReportNotReplaced, build_report, collect_results
from ._runner import load_data, result_path, run_table, run_unit
from ._search import ties_by_index
from ._store import FolderBusy, append_jsonl, read_jsonl

__all__ = [
    "REFERENCE_DEFAULTS",
    "BackendUnavailable",
    "FolderBusy",
    "ModelSpec",
    "Profile",
    "ReportNotReplaced",
    "TableConfig",
    "TableConfigError",
    "append_jsonl",
    "available_tables",
    "build_report",
    "collect_results",
    "fit_minirocket",
    "load_data",
    "load_table",
    "read_jsonl",
    "result_path",
    "run_table",
    "run_unit",
    "score",
    "subset",
    "ties_by_index",
]
