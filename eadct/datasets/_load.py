"""Load UEA / TSER ``.ts`` files through sktime's reader, offline first.

Resolution order for ``load_dataset(name, split)``:

1. ``data_dir`` when given;
2. each folder of the ``EADCT_DATA_DIR`` environment variable (``os.pathsep``-separated);
3. sktime's bundled copies (JapaneseVowels, BasicMotions, Covid3Month, Tecator, ...);
4. the cache directory (``cache_dir``, else ``$EADCT_CACHE_DIR``, else ``~/.cache/eadct``);
5. a download into the cache (``download=True``): UEA from the mirrors sktime uses (then sktime's own
   ``load_UCR_UEA_dataset`` if those answer but fail), TSER from the archive's Zenodo record.

In the folders of steps 1, 2 and 4 the layouts ``<dir>/<Name>/<Name>_TRAIN.ts``, ``<dir>/<Name>_TRAIN.ts``
and the archives' zip files ``<dir>/<Name>.zip`` (unpacked into the cache) are accepted.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from ._download import DownloadError, default_cache_dir, download_dataset, unpack
from ._registry import DatasetInfo, get_info

DATA_DIR_ENV = "EADCT_DATA_DIR"
SPLITS = ("train", "test")


class DatasetNotFoundError(FileNotFoundError):
    """The dataset is in none of the places looked at and could not be downloaded."""


class DatasetCheckError(ValueError):
    """A loaded file does not match the registry (truncated, wrong or mislabelled)."""


def _sktime_bundled_dir() -> Path | None:
    try:
        import sktime.datasets
    except ImportError:  # pragma: no cover - sktime is a dependency
        return None
    return Path(sktime.datasets.__file__).parent / "data"


def _split_file(folder: Path, name: str, split: str) -> Path | None:
    fname = f"{name}_{split.upper()}.ts"
    for path in (folder / name / fname, folder / fname):
        if path.is_file():
            return path
    return None


def _zip_in(folder: Path, name: str) -> Path | None:
    for path in (folder / f"{name}.zip", folder / name / f"{name}.zip"):
        if path.is_file():
            return path
    return None


def locate(
    name: str, split: str = "train", data_dir=None, cache_dir=None, download: bool = False, progress: bool = True
) -> Path:
    """Path of ``<name>_<SPLIT>.ts``, following the resolution order of this module.

    Raises
    ------
    DatasetNotFoundError
        Naming the dataset, every place tried, and where to put the files.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    folders = [("data_dir", Path(data_dir))] if data_dir is not None else []
    folders += [(DATA_DIR_ENV, Path(p)) for p in os.environ.get(DATA_DIR_ENV, "").split(os.pathsep) if p]
    bundled = _sktime_bundled_dir()
    if bundled is not None:
        folders.append(("sktime bundled", bundled))
    folders.append(("cache", cache))

    tried = []
    for label, folder in folders:
        found = _split_file(folder, name, split)
        if found is not None:
            return found
        archive_zip = _zip_in(folder, name) if label != "sktime bundled" else None
        if archive_zip is not None:
            unpack(archive_zip, name, cache)
            return _split_file(cache, name, split)
        tried.append(
            f"{label}: {folder}/{name}/{name}_{split.upper()}.ts, {folder}/{name}_{split.upper()}.ts"
            + (f", {folder}/{name}.zip" if label != "sktime bundled" else "")
        )

    info = get_info(name)
    failure = "download not attempted (download=False)"
    if download:
        archive = info.archive if info is not None else "UEA"
        try:
            download_dataset(
                info.name if info else name,
                archive,
                cache,
                info.url if info else None,
                info.sha256 if info else None,
                progress,
            )
            return _split_file(cache, info.name if info else name, split)
        except DownloadError as err:
            failure = f"download failed: {err}"
            if archive == "UEA" and "HTTP Error" in str(err):
                found = _sktime_download(name, split, cache)
                if found is not None:
                    return found
    places = "\n  ".join(tried)
    raise DatasetNotFoundError(
        f"Dataset {name!r} ({split} split) was not found.\nTried:\n  {places}\n  {failure}\n"
        f"Put {name}_TRAIN.ts and {name}_TEST.ts (or the archive's {name}.zip) in <dir>/{name}/ and pass "
        f"data_dir=<dir>, or set {DATA_DIR_ENV}=<dir>, or copy them to {cache}/{name}/."
    )


def _sktime_download(name: str, split: str, cache: Path) -> Path | None:
    """Last resort for UEA: sktime's own downloader (other mirrors and strategies)."""
    try:
        from sktime.datasets import load_UCR_UEA_dataset

        load_UCR_UEA_dataset(name, split=split, return_X_y=True, extract_path=str(cache))
    except Exception:  # sktime raises several kinds; the caller reports our own errors
        return None
    return _split_file(cache, name, split)


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
    X : ndarray ``(n, C, N)`` when all series have one length (and ``equal_length_as_array``), else a list
        of ``(C, L_i)`` arrays; missing values are NaN.
    y : ndarray of str (classification) or float (regression)

    Raises
    ------
    ValueError
        Naming the file, when it cannot be parsed.
    """
    from sktime.datasets import load_from_tsfile

    try:
        tags = read_ts_header(path)
        regression = tags.get("targetlabel", "false").lower() == "true"
        X, y = load_from_tsfile(str(path), return_data_type="nested_univ", y_dtype="float" if regression else "str")
        series = nested_to_list(X)
    except Exception as err:  # sktime raises IOError, TsFileParseException, ValueError, ...
        raise ValueError(f"{path} is not a valid .ts file: {type(err).__name__}: {err}") from err
    if not series:
        raise ValueError(f"{path} holds no series")
    y = np.asarray(y, dtype=float if regression else str)
    if equal_length_as_array and len({s.shape for s in series}) == 1:
        return np.stack(series), y
    return series, y


def check_against_registry(info: DatasetInfo, split: str, X, y, path) -> None:
    """Raise :class:`DatasetCheckError` (naming ``path``) when X, y do not match ``info``."""
    n = len(X)
    channels = {x.shape[0] for x in X}
    lengths = [x.shape[1] for x in X] if isinstance(X, list) else [X.shape[2]] * n
    problems = []
    if n != info.n_samples(split):
        problems.append(f"{n} series, the archive's {split} split has {info.n_samples(split)}")
    if channels != {info.n_channels}:
        problems.append(f"channels {sorted(channels)}, expected {info.n_channels}")
    if min(lengths) < info.length[0] or max(lengths) > info.length[1]:
        problems.append(f"lengths {min(lengths)}..{max(lengths)}, expected within {info.length[0]}..{info.length[1]}")
    if info.equal_length and len(set(lengths)) > 1:
        problems.append("unequal lengths in an equal-length dataset")
    if info.task == "classification":
        n_classes = len(set(np.asarray(y).tolist()))
        if n_classes > info.n_classes or (split == "train" and n_classes != info.n_classes):
            problems.append(f"{n_classes} classes, expected {info.n_classes}")
    elif not np.issubdtype(np.asarray(y).dtype, np.floating):
        problems.append("targets are not numbers")
    if problems:
        raise DatasetCheckError(
            f"{path} does not match the registry entry of {info.name} ({info.source}): "
            + "; ".join(problems)
            + ". The file may be truncated or another version; replace it, or pass check=False to load it anyway."
        )


def load_dataset(
    name: str,
    split: str = "train",
    data_dir=None,
    *,
    cache_dir=None,
    download: bool = True,
    check: bool = True,
    progress: bool = True,
):
    """Load one split of an archive dataset (UEA classification or TSER regression).

    Parameters
    ----------
    name : str
        Dataset name as in the archive, e.g. ``"JapaneseVowels"``.
    split : {"train", "test"}
    data_dir : str or path, optional
        Folder holding ``<name>/<name>_TRAIN.ts``, ``<name>_TRAIN.ts`` or ``<name>.zip``; looked at first.
    cache_dir : str or path, optional
        Where zips are unpacked and downloads go (default ``$EADCT_CACHE_DIR`` or ``~/.cache/eadct``).
    download : bool, default=True
        Download when no local copy is found.
    check : bool, default=True
        Compare sizes, channels, lengths and classes with the registry (a mismatch is a
        :class:`DatasetCheckError` naming the file).
    progress : bool, default=True
        Progress bar while downloading.

    Returns
    -------
    X : ndarray ``(n, C, N)`` for equal lengths, else list of ``(C, L_i)`` arrays; missing values are NaN
    y : ndarray of str (classification) or float (regression)

    Examples
    --------
    >>> from eadct.datasets import load_dataset
    >>> X, y = load_dataset("BasicMotions", "train")
    >>> X.shape
    (40, 6, 100)
    """
    info = get_info(name)
    name = info.name if info is not None else name
    path = locate(name, split, data_dir, cache_dir, download, progress)
    X, y = load_ts(path)
    if check and info is not None:
        check_against_registry(info, split, X, y, path)
    return X, y


def load_uea(name: str, split: str = "train", data_dir=None, **kwargs):
    """:func:`load_dataset` for a UEA multivariate classification dataset."""
    return load_dataset(name, split, data_dir, **kwargs)


def load_tser(name: str, split: str = "train", data_dir=None, **kwargs):
    """:func:`load_dataset` for a Monash/UEA/UCR TSER regression dataset."""
    return load_dataset(name, split, data_dir, **kwargs)


def find_ts_file(name: str, split: str = "train", data_dir=None) -> Path:
    """Local path of ``<name>_<SPLIT>.ts`` (no download)."""
    return locate(name, split, data_dir, download=False)
