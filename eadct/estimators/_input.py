"""Validation and coercion of X: arrays, lists of arrays, sktime nested DataFrames."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

INPUT_HELP = (
    "Pass a numpy array of shape (n_samples, n_channels, n_timepoints), a 2D array "
    "(n_samples, n_timepoints) for univariate series, a list of (n_channels, length_i) "
    "arrays, an sktime nested pandas DataFrame, or a pandas DataFrame with an (instance, time) MultiIndex."
)


#: The networks compute in float32; larger input values cannot be represented.
FLOAT32_MAX = float(np.finfo(np.float32).max)


@dataclass
class Panel:
    """Series right-padded into one array.

    Attributes
    ----------
    values : ndarray ``(n, N_max, C)``, float64
        Padded steps are 0; missing values are NaN until :func:`fill_missing`.
    lengths : ndarray ``(n,)``, int64
    """

    values: np.ndarray
    lengths: np.ndarray

    @property
    def n_channels(self) -> int:
        return self.values.shape[2]

    def valid_mask(self) -> np.ndarray:
        """``(n, N_max)`` bool, True at real steps."""
        return np.arange(self.values.shape[1])[None, :] < self.lengths[:, None]


def _as_float(a, what: str) -> np.ndarray:
    if sp.issparse(a):
        raise TypeError(f"{what} is a sparse matrix; time series must be dense. {INPUT_HELP}")
    try:
        arr = np.asarray(a)
        if not np.iscomplexobj(arr):
            return arr.astype(np.float64)
    except (TypeError, ValueError) as err:
        # Keep the exception type: a dict in X is a TypeError, a non-numeric string or a ragged list a ValueError.
        raise type(err)(f"{what} could not be converted to float: {str(err).rstrip('.')}. {INPUT_HELP}") from None
    raise ValueError(f"Complex data not supported in {what}. {INPUT_HELP}")


def _is_nested(df: pd.DataFrame) -> bool:
    """Whether some cell of ``df`` (in a column of objects) holds a series: sktime's nested_univ layout."""
    return any(
        isinstance(v, (pd.Series, np.ndarray, list))
        for j in range(df.shape[1])
        if df.iloc[:, j].dtype == object
        for v in df.iloc[:, j]
    )


def _nested_series(X: pd.DataFrame) -> list[np.ndarray]:
    """The ``(n_channels, length)`` series of a nested DataFrame, a row each: every cell one channel's series."""
    out = []
    for i, row in enumerate(X.itertuples(index=False)):
        cells = []
        for j, cell in enumerate(row):
            where = f"X.iloc[{i}, {j}] (row {X.index[i]!r}, column {X.columns[j]!r})"
            if not isinstance(cell, (pd.Series, np.ndarray, list, tuple)) or np.ndim(cell) != 1:
                shown = f"{type(cell).__name__} {cell!r}"[:60] if np.ndim(cell) == 0 else f"{np.ndim(cell)}D"
                raise ValueError(
                    f"The nested DataFrame's cell {where} is {shown}, not a series: each cell holds one channel's "
                    "series (a pd.Series or 1D array). For a missing series put a series of NaN of the other "
                    "channels' length (with missing_values='interpolate'), or drop the row."
                )
            cells.append(_as_float(cell, f"the nested DataFrame's cell {where}"))
        if len({len(cell) for cell in cells}) > 1:
            _unequal_channels(cells)
        out.append(np.stack(cells))
    return out


def _series_list(X) -> list[np.ndarray] | np.ndarray:
    """Return a 3D float array (equal length) or a list of ``(C, L_i)`` float arrays."""
    if isinstance(X, pd.DataFrame):
        if isinstance(X.index, pd.MultiIndex):
            return _multiindex_series(X)
        if _is_nested(X):
            return _nested_series(X)
        X = X.to_numpy()
    if isinstance(X, (list, tuple)) and len(X) and not np.isscalar(X[0]):
        items = [_as_float(item, f"X[{i}]") for i, item in enumerate(X)]
        out = []
        for i, item in enumerate(items):
            if item.ndim == 1:
                item = item[None, :]  # a univariate series
            if item.ndim != 2:
                raise ValueError(
                    f"X[{i}] has {item.ndim} dimensions; each series must be (n_channels, length) "
                    f"or (length,). {INPUT_HELP}"
                )
            out.append(item)
        return out
    arr = _as_float(X, "X")
    if arr.ndim == 2:
        return arr[:, None, :]  # univariate: (n, 1, m)
    if arr.ndim == 3:
        return arr
    hint = " Reshape your data: a single series as (1, n_channels, n_timepoints)." if arr.ndim == 1 else ""
    raise ValueError(f"Expected 2D or 3D array for X, got {arr.ndim}D array of shape {arr.shape}.{hint} {INPUT_HELP}")


def float_targets(y, owner: str) -> np.ndarray:
    """A regressor's ``y`` as float64, 1D or 2D (scikit-learn's ``check_array``). Whatever makes it fail (strings,
    ragged lists, NaN, a 3D array) is an error of the same type that names ``owner`` and what ``y`` must be, raised
    here rather than from inside numpy."""
    from sklearn.utils.validation import check_array

    try:
        return check_array(y, ensure_2d=False, dtype=np.float64, input_name="y")
    except (TypeError, ValueError) as err:
        raise type(err)(
            f"{owner}: y must hold one finite number per series (a row of them per series for several targets): {err}"
        ) from None


def _multiindex_series(X: pd.DataFrame) -> list[np.ndarray]:
    """sktime's pd-multiindex: rows indexed by (instance, time), a column per channel; instances in the order
    they first appear."""
    if X.index.nlevels != 2:
        raise ValueError(
            f"X is a DataFrame with a {X.index.nlevels}-level MultiIndex; eadct reads two levels, (instance, time), "
            f"one column per channel (sktime's pd-multiindex). {INPUT_HELP}"
        )
    return [_as_float(group, f"instance {key!r} of X").T for key, group in X.groupby(level=0, sort=False)]


def _unequal_channels(row) -> np.ndarray:
    lengths = [len(cell) for cell in row]
    raise ValueError(
        f"A series has channels of different lengths {lengths}; all channels of one series must "
        "have the same length (pad or resample them first)."
    )


def to_panel(
    X, *, missing_values: str = "raise", n_channels: int | None = None, estimator_name: str = "estimator"
) -> Panel:
    """Check X and pad it into a :class:`Panel`.

    Parameters
    ----------
    X : array-like, list of arrays or nested DataFrame
    missing_values : {"raise", "interpolate", "trim"}
        ``"raise"``: NaN is an error. ``"interpolate"``: NaN is kept here and filled
        later by :func:`fill_missing`. ``"trim"``: the steps after a series' last value are NaN padding; each series
        ends at its last step with a value in some channel (:func:`trim_nan_padding`), and NaN left before that
        is an error.
    n_channels : int, optional
        Channels seen in ``fit``; a different number is an error.
    estimator_name : str
        For error messages.
    """
    series = _series_list(X)
    n = len(series)
    shape = np.shape(X) if isinstance(X, np.ndarray) else (n,)
    if n == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={shape}) while a minimum of 1 is required. {INPUT_HELP}")
    if isinstance(series, np.ndarray):
        _, c, m = series.shape
        if m == 0 or c == 0:
            raise ValueError(
                f"Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is required: "
                "every series needs at least one channel and one time point."
            )
        values = np.ascontiguousarray(series.transpose(0, 2, 1))  # (n, N, C)
        lengths = np.full(n, m, dtype=np.int64)
    else:
        channels = {s.shape[0] for s in series}
        if len(channels) > 1:
            raise ValueError(
                f"Series in X have different numbers of channels {sorted(channels)}; all must have the same."
            )
        c = channels.pop()
        lengths = np.array([s.shape[1] for s in series], dtype=np.int64)
        if c == 0 or lengths.min() == 0:
            bad = int(np.argmin(lengths)) if lengths.min() == 0 else 0
            raise ValueError(f"X[{bad}] is empty; every series needs at least one channel and one time point.")
        values = np.zeros((n, int(lengths.max()), c))
        for i, s in enumerate(series):
            values[i, : s.shape[1]] = s.T
    if n_channels is not None and c != n_channels:
        raise ValueError(
            f"X has {c} channels, but {estimator_name} was fitted with {n_channels} channels; "
            "pass series with the same channels as in fit."
        )
    panel = Panel(values, lengths)
    if missing_values == "trim":
        panel = trim_nan_padding(panel)
    _check_values(panel, missing_values, estimator_name)
    return panel


def trim_nan_padding(panel: Panel) -> Panel:
    """Read NaN at the end of a series, in every channel, as padding: unequal lengths as tslearn writes them.

    Each series ends at its last step that has a value in at least one channel; the steps after it become the
    panel's padding (0). A series with no value at all is an error.
    """
    lengths = _value_lengths(panel)
    if (lengths == 0).any():
        bad = np.flatnonzero(lengths == 0)
        raise ValueError(
            f"X[{int(bad[0])}] is NaN at every step and channel ({len(bad)} such series); with "
            "missing_values='trim' a series needs at least one value. Remove it from X."
        )
    values = panel.values[:, : int(lengths.max())].copy()
    values[np.arange(values.shape[1])[None, :] >= lengths[:, None]] = 0.0
    return Panel(values, lengths.astype(np.int64))


def _check_values(panel: Panel, missing_values: str, estimator_name: str) -> None:
    """Refuse infinity at real steps, and NaN unless ``missing_values="interpolate"`` (after ``"trim"``, the NaN
    left is inside series)."""
    real = panel.values[panel.valid_mask()]  # (M, C) real steps only
    if np.isinf(real).any():
        raise ValueError(
            f"Input X contains infinity at {int(np.isinf(real).sum())} value(s); replace it with "
            "finite values or NaN (with missing_values='interpolate')."
        )
    largest = float(np.nanmax(np.abs(real))) if real.size and not np.isnan(real).all() else 0.0
    if largest > FLOAT32_MAX:
        raise ValueError(
            f"Input X has values up to {largest:.3g}, beyond the float32 range ({FLOAT32_MAX:.3g}) the network "
            "computes in; rescale X (for example to other units) before fitting or predicting."
        )
    n_nan = int(np.isnan(real).sum())
    if n_nan and missing_values == "trim":
        raise ValueError(
            f"Input X contains NaN ({n_nan} missing value(s)) inside series, before their last values; "
            "missing_values='trim' reads only NaN after a series' last value (in every channel) as padding. Impute "
            "the others first, or pass the series cut to their lengths as a list with missing_values='interpolate'."
        )
    if n_nan and missing_values != "interpolate":
        padded = _nan_ended(panel)
        if padded:
            raise ValueError(
                f"Input X contains NaN ({n_nan} missing value(s)); {padded} series end in NaN in every channel, "
                "as series of unequal length padded with NaN do (tslearn's to_time_series_dataset writes them "
                "so). Set missing_values='trim' to end each series at its last value, or pass unequal lengths as a "
                "list of (channels, length) arrays, each series cut to its own length (docs/input.md); "
                "missing_values='interpolate' would fill the padding as data."
            )
        raise ValueError(
            f"Input X contains NaN ({n_nan} missing value(s)). Set missing_values='interpolate' "
            f"on {estimator_name} to fill them by linear interpolation along time, or impute them first."
        )


def _value_lengths(panel: Panel) -> np.ndarray:
    """Each series' steps up to its last one with a value in some channel (0: none); shorter than its length where
    it ends in NaN in every channel, the mark of NaN padding."""
    observed = ~np.isnan(panel.values).all(axis=2) & panel.valid_mask()  # (n, N): a value in some channel
    return np.where(observed.any(axis=1), panel.values.shape[1] - np.argmax(observed[:, ::-1], axis=1), 0)


def _nan_ended(panel: Panel) -> int:
    """How many series of ``panel`` end in NaN in every channel."""
    return int((_value_lengths(panel) < panel.lengths).sum())


def fill_missing(panel: Panel) -> Panel:
    """Linear interpolation of NaN along time, per series and channel.

    Leading and trailing NaN take the nearest observed value; a channel with no
    observed value in a series stays NaN (the estimators then set it to the channel's
    training mean, i.e. 0 after standardisation).
    """
    values = panel.values.copy()
    for i, length in enumerate(panel.lengths):
        block = values[i, :length]  # (L, C) view
        if not np.isnan(block).any():
            continue
        steps = np.arange(length)
        for ch in range(block.shape[1]):
            col = block[:, ch]
            missing = np.isnan(col)
            if missing.any() and not missing.all():
                col[missing] = np.interp(steps[missing], steps[~missing], col[~missing])
    return Panel(values, panel.lengths)
