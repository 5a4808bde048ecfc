"""Issue 86, item 3: TRAIN-only evidence for the "auto" input treatments (the first differences).

Classifier (``input_differences="auto"``: the differences where X has one channel): 3-fold stratified
cross-validation inside the TRAIN split of the univariate sets that ship with aeon/sktime, plus two synthetic
univariate sets: one built for the property (the class is a small bump's presence under large random levels and
tilts: the slopes carry it) and its control (the class is the level). Defaults ("auto") against
``options={"input_differences": False}``.

Regressor (proxy rule): the same on the synthetic regression set built for the property (a peak's height under
random baselines and tilts; research/benchmarks/treatment_one_se.py) and its control (the target is the level):
the defaults' rule against the differences off. No TEST file is read.

    python research/benchmarks/differences_train_cv.py run [--worker 0 --workers 1]
    python research/benchmarks/differences_train_cv.py report

One JSON per unit (set, variant, fold) in research/reports/differences_train_cv/, written whole; a rerun skips
the units done.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "research" / "reports" / "differences_train_cv"
UNIVARIATE = ["ItalyPowerDemand", "ArrowHead", "GunPoint", "UnitTest", "PickupGestureWiimoteZ", "OSULeaf"]
SYNTHETIC = ["bump-under-levels", "class-is-level", "peak-under-baselines", "target-is-level"]
VARIANTS = {"defaults": None, "differences_off": {"input_differences": False}}
FOLDS = 3


def synthetic(name: str, n: int = 150, length: int = 100, seed: int = 0):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, length)
    base, tilt = rng.normal(0, 3, n), rng.normal(0, 3, n)
    if name in ("bump-under-levels", "class-is-level"):
        label = rng.integers(0, 2, n)
        height = label * 0.5 if name == "bump-under-levels" else np.zeros(n)
        base = base if name == "bump-under-levels" else base + 4 * label
        y = label.astype(str)
    else:
        height = rng.uniform(0, 1, n)
        y = height if name == "peak-under-baselines" else base
    X = base[:, None] + tilt[:, None] * t + height[:, None] * np.exp(-(((t - 0.5) / 0.05) ** 2))
    X += rng.normal(0, 0.01, X.shape)
    return X[:, None, :], y


def _train(name: str):
    if name in SYNTHETIC:
        return synthetic(name)
    import aeon

    from eadct.datasets import load_dataset

    return load_dataset(name, "train", Path(aeon.__file__).parent / "datasets" / "data", download=False,
                        progress=False)  # fmt: skip


def units():
    """Every unit: the synthetic sets, then the real ones from the quickest. The control whose target is the level
    runs no unit: the proxy takes the differences on none of its subsets (treatment_one_se.json), so the defaults'
    fit there is the fit without them."""
    sets = [s for s in SYNTHETIC if s != "target-is-level"] + UNIVARIATE
    return [(s, v, f) for s in sets for f in range(FOLDS) for v in VARIANTS]


def _path(unit) -> Path:
    return OUT / f"{unit[0]}__{unit[1]}__{unit[2]}.json"


def run_unit(name, variant, fold) -> dict:
    import torch
    from sklearn.model_selection import KFold, StratifiedKFold

    from eadct import EADCTClassifier, EADCTRegressor

    torch.set_num_threads(1)
    X, y = _train(name)
    y = np.asarray(y)
    regression = np.issubdtype(y.dtype, np.floating)
    split = (KFold if regression else StratifiedKFold)(FOLDS, shuffle=True, random_state=0)
    fit_idx, val_idx = list(split.split(np.zeros(len(y)), y))[fold]
    take = lambda idx: X[idx] if isinstance(X, np.ndarray) else [X[i] for i in idx]  # noqa: E731
    cls = EADCTRegressor if regression else EADCTClassifier
    est = cls(random_state=fold, n_jobs=1, options=VARIANTS[variant])
    t0 = time.perf_counter()
    est.fit(take(fit_idx), y[fit_idx])
    pred = est.predict(take(val_idx))
    if regression:
        score = float(np.sqrt(np.mean((pred - y[val_idx]) ** 2)) / np.std(y[fit_idx]))
    else:
        score = float(np.mean(pred == y[val_idx]))
    return {"set": name, "variant": variant, "fold": fold, "metric": "rmse/std" if regression else "accuracy",
            "score": score, "differences": bool(getattr(est, "input_differences_", False)),
            "seconds": time.perf_counter() - t0}  # fmt: skip


def run(worker: int, workers: int) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for i, unit in enumerate(units()):
        if i % workers != worker or _path(unit).exists():
            continue
        result = run_unit(*unit)
        tmp = _path(unit).with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1) + "\n")
        tmp.replace(_path(unit))
        print(unit, f"{result['score']:.4f}", f"{result['seconds']:.0f} s", flush=True)


def report() -> None:
    rows = [json.loads(p.read_text()) for p in sorted(OUT.glob("*.json"))]
    print("| set | metric | defaults | differences off | folds | defaults took the differences |")
    print("|---|---|---|---|---|---|")
    for name in SYNTHETIC + UNIVARIATE:
        got = {v: [r for r in rows if r["set"] == name and r["variant"] == v] for v in VARIANTS}
        folds = sorted({r["fold"] for r in got["defaults"]} & {r["fold"] for r in got["differences_off"]})
        if not folds:
            continue
        mean = {v: np.mean([r["score"] for r in got[v] if r["fold"] in folds]) for v in VARIANTS}
        took = sum(r["differences"] for r in got["defaults"] if r["fold"] in folds)
        metric = got["defaults"][0]["metric"]
        print(f"| {name} | {metric} | {mean['defaults']:.4f} | {mean['differences_off']:.4f} | {len(folds)} | "
              f"{took} / {len(folds)} |")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("action", choices=["run", "report"])
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    run(args.worker, args.workers) if args.action == "run" else report()
    sys.exit(0)
