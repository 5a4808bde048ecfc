"""Archive loading through sktime's ``.ts`` reader, offline first; never touches torch.

See :mod:`eadct.datasets._load` for the resolution order (data_dir, ``EADCT_DATA_DIR``, sktime's
bundled copies, the cache, a download).
"""

from ._download import CACHE_ENV, DownloadError, default_cache_dir
from ._load import (
    DATA_DIR_ENV,
    DatasetCheckError,
    DatasetNotFoundError,
    check_against_registry,
    find_ts_file,
    load_dataset,
    load_ts,
    load_tser,
    load_uea,
    locate,
    read_ts_header,
)
from ._registry import PAPER_TABLES, REGISTRY, DatasetInfo, get_info, register_dataset

__all__ = [
    "CACHE_ENV",
    "DATA_DIR_ENV",
    "PAPER_TABLES",
    "REGISTRY",
    "DatasetCheckError",
    "DatasetInfo",
    "DatasetNotFoundError",
    "DownloadError",
    "check_against_registry",
    "default_cache_dir",
    "find_ts_file",
    "get_info",
    "load_dataset",
    "load_ts",
    "load_tser",
    "load_uea",
    "locate",
    "read_ts_header",
    "register_dataset",
]
