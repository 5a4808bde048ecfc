"""The opt-in ensemble (``n_estimators``): several networks, their predictions averaged.

With a validation split (``validation_fraction`` > 0, the regressor's default), the members are trained on
the folds of a k-fold split of TRAIN: member i trains on every fold but fold i and chooses its best epochs on
fold i (stratified by class for classification). Without one (``validation_fraction=0``, the classifier's
default with weight averaging), every member trains on all of TRAIN from its own seed, as InceptionTime
ensembles five networks. Predictions average the members' class probabilities (classification) or outputs
(regression). ``n_estimators=1`` is the single model: the usual ``validation_fraction`` split, the same
seeds, the same predictions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.special import softmax

from ..training import Checkpointer
from ._data import validation_split

#: Member i is seeded with ``seed + MEMBER_SEED_STEP * i`` (member 0 is the single model).
MEMBER_SEED_STEP = 7919


def kfold_indices(n: int, k: int, rng: np.random.RandomState, stratify=None) -> list[np.ndarray]:
    """``k`` disjoint folds of ``range(n)``; with ``stratify``, each class's members are dealt round-robin
    over the folds in random order, so every fold gets its share of every class (of at least k members)."""
    folds: list[list[int]] = [[] for _ in range(k)]
    groups = [np.arange(n)] if stratify is None else [np.flatnonzero(stratify == c) for c in np.unique(stratify)]
    start = 0
    for members in groups:
        for j, i in enumerate(rng.permutation(members)):
            folds[(start + j) % k].append(int(i))
        start += len(members)  # the next class starts where this one stopped, to balance fold sizes
    return [np.sort(np.array(f, dtype=int)) for f in folds]


def member_splits(n: int, k: int, fraction: float, rng, stratify=None, owner: str = "eadct"):
    """(train, valid) indices of each of the ``k`` members: the ``validation_fraction`` split when
    ``k == 1``; all of TRAIN and no validation for every member when ``fraction == 0``; else fold i held
    out for member i."""
    if k == 1:
        return [validation_split(n, fraction, rng, stratify, owner)]
    if fraction == 0:
        return [(np.arange(n), np.arange(0)) for _ in range(k)]
    if n < k:
        raise ValueError(f"{owner}: n_estimators={k} needs at least {k} training series, got {n}.")
    folds = kfold_indices(n, k, rng, stratify)
    return [(np.sort(np.concatenate(folds[:i] + folds[i + 1 :])), folds[i]) for i in range(k)]


def member_checkpointer(checkpointer: Checkpointer | None, member: int, k: int) -> Checkpointer | None:
    """The checkpoint of ``member``: the fit's own for the first (it also keeps the fit's seed), then
    ``<path>.member<i>``."""
    if checkpointer is None or member == 0:
        return checkpointer
    path = Path(checkpointer.path)
    name = path.with_name(f"{path.name}.member{member}")
    return Checkpointer(name, checkpointer.fingerprint, checkpointer.extra, checkpointer.warn)


def combine_outputs(outputs: list[np.ndarray], task: str | None) -> np.ndarray:
    """One member's outputs unchanged; several: the log of the mean class probabilities (classification,
    so that softmax of the result is the mean probability) or the mean output."""
    if len(outputs) == 1:
        return outputs[0]
    if task == "classification":
        return np.log(np.mean([softmax(o, axis=1) for o in outputs], axis=0) + 1e-300)
    return np.mean(outputs, axis=0)
