"""Metrics of representations (numpy only).

The paper's Eq. 13 measures how tightly a representation groups each class: the average within-class
distance AvgWCD (smaller is better; the paper reports EA-DC-Transformer 36% below the Transformer).
"""

from __future__ import annotations

import numpy as np

__all__ = ["average_within_class_distance"]


def average_within_class_distance(Z, y, normalize: bool = False) -> float:
    """AvgWCD of the paper's Eq. 13: the mean Euclidean distance of each representation to its class centre.

    ``AvgWCD = 1/N sum_i sum_{q in C_i} sqrt((q - m_i)^2)``. We read Eq. 13's ``sqrt((q - m_i)^2)`` as the
    Euclidean norm ``||q - m_i||_2`` of the vector difference (the squares summed over the features before
    the root), the distance that "within-cluster distance" names; ``m_i`` is the mean representation of
    class ``C_i`` and N the number of series.

    Parameters
    ----------
    Z : array-like of shape (n_samples, n_features)
        Representations, e.g. ``estimator.transform(X)``.
    y : array-like of shape (n_samples,)
        Class labels.
    normalize : bool, default=False
        Divide by the mean distance of all representations to their overall centre (the AvgWCD of one
        class holding everything). The raw value scales with the representation (its width, its norm), so
        it is not comparable across models or data sets; the normalised one is scale-free: 1 means the
        classes are as spread as the whole set (no grouping at all), 0 that every class collapses to a point.

    Returns
    -------
    float
    """
    Z, codes = _checked(Z, y)
    total = 0.0
    for code in range(codes.max() + 1):
        members = Z[codes == code]
        total += np.linalg.norm(members - members.mean(axis=0), axis=1).sum()
    value = total / len(Z)
    if not normalize:
        return float(value)
    spread = np.linalg.norm(Z - Z.mean(axis=0), axis=1).mean()
    return float(value / spread) if spread > 0 else 0.0


def _checked(Z, y) -> tuple[np.ndarray, np.ndarray]:
    """``Z`` as float64 and each row's class as a code 0, 1, ...; a ValueError naming what is wrong: ``Z`` not a 2-D
    array of finite numbers, ``y`` not one label per row, or a missing label (NaN or None)."""
    if np.iscomplexobj(Z):
        raise ValueError("Z holds complex numbers; representations are real (n_samples, n_features) arrays.")
    try:
        Z = np.asarray(Z, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"Z must be a 2-D array of numbers (n_samples, n_features): {str(err).rstrip('.')}.") from None
    if Z.ndim != 2:
        raise ValueError(f"Z must be 2-D (n_samples, n_features), got shape {Z.shape}.")
    try:
        y = np.asarray(y)
    except ValueError as err:  # ragged nested lists
        raise ValueError(f"y must be 1-D with one label per row of Z: {str(err).rstrip('.')}.") from None
    if y.ndim != 1 or len(y) != len(Z):
        raise ValueError(f"y must be 1-D with one label per row of Z ({len(Z)}), got shape {y.shape}.")
    if len(Z) == 0:
        raise ValueError("Z is empty; AvgWCD needs at least one sample.")
    if not np.all(np.isfinite(Z)):
        bad = np.argwhere(~np.isfinite(Z))[0]
        raise ValueError(
            f"Z contains NaN or infinite values ({int((~np.isfinite(Z)).sum())}, the first at row {bad[0]}, column "
            f"{bad[1]}); compute the representations of finite inputs, or drop those rows from Z and y."
        )
    labels = y.tolist()
    missing = [i for i, label in enumerate(labels) if _is_missing(label)]
    if missing:
        raise ValueError(
            f"y has {len(missing)} missing label(s) (NaN or None), the first at index {missing[0]}; AvgWCD needs "
            "the class of every row. Drop those rows from Z and y."
        )
    index: dict = {}
    try:
        codes = np.array([index.setdefault(label, len(index)) for label in labels], dtype=np.int64)
    except TypeError as err:  # an unhashable label: a list or a dict
        raise ValueError(
            f"y must hold one label (a number or a string) per row of Z: {str(err).rstrip('.')}."
        ) from None
    return Z, codes


def _is_missing(label) -> bool:
    """NaN, None, pandas' NA or NaT: any label that does not equal itself (or cannot say)."""
    if label is None:
        return True
    try:
        return bool(label != label)
    except TypeError:  # pd.NA's comparison is NA, which has no truth value
        return True
    except ValueError:  # an array as a label: not a missing one (and not a label either)
        return False
