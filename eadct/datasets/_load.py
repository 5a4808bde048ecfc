"""Load UEA / TSER ``.ts`` files through sktime's reader, from a folder or sktime's bundled copies."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

DATA_DIR_ENV = "EADCT_DATA_DIR"
SPLITS = ("train", "test")


def _sktime_bundled_dir() -> Path | None:
    try:
        import sktime.datasets
    except ImportError:  # pragma: no cover - sktime is a dependency
        return None
    return Path(sktime.datasets.__file__).parent / "data"


def _candidates(name: str, split: str, data_dir) -> list[Path]:
    fname = f"{name}_{split.upper()}.ts"
    places = []
    roots = [Path(data_dir)] if data_dir is not None else []
    if data_dir is None and os.environ.get(DATA_DIR_ENV):
        roots += [Path(p) for p in os.environ[DATA_DIR_ENV].split(os.pathsep) if p]
    bundled = _sktime_bundled_dir()
    if data_dir is None and bundled is not None:
        roots.append(bundled)
    for root in roots:
        places += [root / name / fname, root / fname]
    return places


def find_ts_file(name: str, split: str = "train", data_dir=None) -> Path:
    """Path of ``<name>_<SPLIT>.ts``.

    Looked for, in order: ``data_dir`` (when given, only there), then each folder in
    the ``EADCT_DATA_DIR`` environment variable (``os.pathsep``-separated), then
    sktime's bundled copies; in each folder as ``<dir>/<name>/<name>_TRAIN.ts`` or
    ``<dir>/<name>_TRAIN.ts``.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    places = _candidates(name, split, data_dir)
    for path in places:
        if path.is_file():
            return path
    tried = "\n  ".join(str(p) for p in places) or "(nowhere)"
    raise FileNotFoundError(
        f"Dataset {name!r} ({split} split) not found. Tried:\n  {tried}\n"
        f"Put {name}_{split.upper()}.ts in <dir>/{name}/ and pass data_dir=<dir>, or set "
        f"{DATA_DIR_ENV}=<dir>."
    )


def read_ts_header(path) -> dict:
    """Header tags of a ``.ts`` file (lower-cased keys without '@'), up to ``@data``."""
    tags = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.lower().startswith("@data"):
                break
            if line.startswith("@"):
                key, _, value = line[1:].partition(" ")
                tags[key.lower()] = value.strip()
    return tags


def nested_to_list(X: pd.DataFrame) -> list[np.ndarray]:
    """sktime nested DataFrame -> list of ``(n_channels, length_i)`` float arrays."""
    return [np.stack([np.asarray(cell, dtype=float) for cell in row]) for row in X.itertuples(index=False)]


def load_ts(path, equal_length_as_array: bool = True):
    """Read one ``.ts`` file with sktime's ``load_from_tsfile``.

    Returns
    -------
    X : ndarray (n, C, N) when all series have one length (and ``equal_length_as_array``),
        else list of ``(C, L_i)`` arrays; missing values are NaN.
    y : ndarray of str (classification) or float (regression)
    """
    from sktime.datasets import load_from_tsfile

    tags = read_ts_header(path)
    regression = tags.get("targetlabel", "false").lower() == "true"
    X, y = load_from_tsfile(str(path), return_data_type="nested_univ", y_dtype="float" if regression else "str")
    series = nested_to_list(X)
    if equal_length_as_array and len({s.shape for s in series}) == 1:
        return np.stack(series), np.asarray(y, dtype=float if regression else str)
    return series, np.asarray(y, dtype=float if regression else str)


def load_dataset(name: str, split: str = "train", data_dir=None):
    """Load one split of an archive dataset (UEA classification or TSER regression).

    Parameters
    ----------
    name : str
        Dataset name as in the archive, e.g. ``"JapaneseVowels"``.
    split : {"train", "test"}
    data_dir : str or path, optional
        Folder holding ``<name>/<name>_TRAIN.ts`` (or ``<name>_TRAIN.ts``). Without it,
        ``EADCT_DATA_DIR`` and then sktime's bundled copies (JapaneseVowels,
        BasicMotions, Covid3Month, Tecator, ...) are searched.

    Returns
    -------
    X : ndarray (n, C, N) or list of (C, L_i) arrays
    y : ndarray
    """
    return load_ts(find_ts_file(name, split, data_dir))
