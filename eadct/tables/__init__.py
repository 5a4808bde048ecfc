"""Reproduce the paper's tables: configurations, a resumable runner and a report generator.

Command line: ``python -m eadct.tables run table2 --profile quick --data-dir ../shared/datasets/UEA`` then
``python -m eadct.tables report table2 --profile quick``. See docs/tables.md.
"""

from ._config import ModelSpec, Profile, TableConfig, TableConfigError, available_tables, load_table
from ._report import build_report, collect_results
from ._runner import load_data, result_path, run_table, run_unit

__all__ = [
    "ModelSpec",
    "Profile",
    "TableConfig",
    "TableConfigError",
    "available_tables",
    "build_report",
    "collect_results",
    "load_data",
    "load_table",
    "result_path",
    "run_table",
    "run_unit",
]
