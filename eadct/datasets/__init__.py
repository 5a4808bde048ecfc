"""Archive loading (through sktime's ``.ts`` reader); never touches torch."""

from ._load import DATA_DIR_ENV, find_ts_file, load_dataset, load_ts, read_ts_header

__all__ = ["DATA_DIR_ENV", "find_ts_file", "load_dataset", "load_ts", "read_ts_header"]
