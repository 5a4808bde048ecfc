"""Issue 86, item 3: the regressor's input_differences="auto" as one principled proxy rule (TRAIN only).

The kernel ridge proxy (eadct/estimators/_proxy.py) scores each series' leave-one-out error without and with the
first differences. The candidate rule takes the differences when the one-standard-error rule (Hastie, Tibshirani,
Friedman, ESL 7.10) prefers them: their leave-one-out MSE plus one standard error of the paired per-series
difference is below the MSE without them. No threshold is read off a dataset.

This script draws, for each set, 20 random two-thirds subsets of TRAIN (seeds 0-19) and prints how often the
current rule (the proxy's margin 0.8) and the candidate take the differences, on the six shared TSER sets and on
two synthetic sets built for the property: spectra whose target is a small peak's height under large random
baselines and tilts (the slopes carry the target), and a control whose target is the baseline itself (the level
carries it). Nothing reads TEST. Run from the repository root:

    python research/benchmarks/treatment_one_se.py --data-dir ../shared/datasets/TSER --out research/reports/treatment_one_se.json
"""

import argparse
import json
import math
from pathlib import Path

import numpy as np

from eadct.estimators._proxy import ALPHAS, features
from eadct.tables._data import load_data

SETS = ["BitcoinSentiment", "CardanoSentiment", "ChilledWaterPredictor", "Covid3Month", "FloodModeling1", "Tecator"]


def loo_errors(F, y):
    """Per-series squared leave-one-out errors at the ridge strength with the lowest mean (as loo_rmse picks)."""
    std = F.std(axis=0)
    F = np.where(std > 0, (F - F.mean(axis=0)) / np.where(std > 0, std, 1.0), 0.0)
    y = y.reshape(len(y), -1)
    y = (y - y.mean(axis=0)) / np.where(y.std(axis=0) > 0, y.std(axis=0), 1.0)
    sq = (F**2).sum(axis=1)
    K = np.exp(-np.maximum(sq[:, None] + sq[None, :] - 2 * F @ F.T, 0.0) / F.shape[1])
    lam, Q = np.linalg.eigh(K)
    lam = np.clip(lam, 0.0, None)
    Qty = Q.T @ y
    best, errors = math.inf, None
    for alpha in ALPHAS:
        shrink = lam / (lam + alpha)
        resid = (y - Q @ (shrink[:, None] * Qty)) / (1.0 - (Q**2) @ shrink)[:, None]
        e = np.mean(resid**2, axis=1)
        if e.mean() < best:
            best, errors = e.mean(), e
    return errors


def choices(series, y):
    values, diffs = features(series)
    e0 = loo_errors(values, y)
    e1 = loo_errors(np.concatenate([values, diffs], axis=1), y)
    d = e0 - e1
    se = d.std(ddof=1) / math.sqrt(len(d))
    ratio = math.sqrt(e1.mean()) / math.sqrt(e0.mean())
    return {"ratio": ratio, "margin_0.8": bool(ratio < 0.8), "one_se": bool(d.mean() > se), "z": float(d.mean() / se)}


def synthetic(kind, n=150, length=100, seed=0):
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, length)
    base, tilt, height = rng.normal(0, 3, n), rng.normal(0, 3, n), rng.uniform(0, 1, n)
    X = base[:, None] + tilt[:, None] * t + height[:, None] * np.exp(-(((t - 0.5) / 0.05) ** 2))
    X += rng.normal(0, 0.01, X.shape)
    y = height if kind == "slopes" else base
    return [x[None, :] for x in X], y


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    sets = {name: load_data(name, [args.data_dir]) for name in SETS}
    data = {n: (list(d.X_train), np.asarray(d.y_train, dtype=float)) for n, d in sets.items()}
    data["synthetic: peak under baselines"] = synthetic("slopes")
    data["synthetic: target is the level"] = synthetic("level")
    rows = {}
    print("| set | TRAIN series | ratio (median) | margin 0.8 takes | one-SE takes |")
    print("|---|---|---|---|---|")
    for name, (series, y) in data.items():
        runs = []
        for seed in range(20):
            idx = np.sort(np.random.default_rng(seed).choice(len(y), (2 * len(y)) // 3, replace=False))
            runs.append(choices([series[i] for i in idx], y[idx]))
        rows[name] = runs
        ratio = np.median([r["ratio"] for r in runs])
        m08, ose = sum(r["margin_0.8"] for r in runs), sum(r["one_se"] for r in runs)
        print(f"| {name} | {len(y)} | {ratio:.3f} | {m08} / 20 | {ose} / 20 |")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
