"""Issue 86's TRAIN-only evidence on input scale: the defaults against the defaults with each series' own
standardisation (``options={"series_normalization": True}``: the shape apart from the level, the level and log-scale
given as inputs), by cross-validation inside each shared set's TRAIN split, plus the synthetic scale sets of
benchmarks/scale_synthetic.py (training accuracy and TRAIN-CV, MiniRocket and QUANT beside). No TEST file is read.

    python research/benchmarks/scale_train_cv.py run --worker 0 --workers 2 &   # resumable: one JSON per unit
    python research/benchmarks/scale_train_cv.py run --worker 1 --workers 2 &
    python research/benchmarks/scale_train_cv.py report                         # the table, from the JSON files

A unit is (set, model, fold); its file in research/reports/scale_train_cv/ is written atomically when it finishes,
and a unit with a file is not run again. Shared sets: 2 folds (stratified for classification), seeded by the fold.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from scale_synthetic import KINDS, make_scale_set, score_unit  # noqa: E402

OUT = ROOT / "research" / "reports" / "scale_train_cv"
DATA = Path(os.environ.get("EADCT_SHARED", ROOT.parent / "shared" / "datasets"))
UEA = ["ERing", "BasicMotions", "AtrialFibrillation", "StandWalkJump", "Libras", "Handwriting", "UWaveGestureLibrary",
       "Epilepsy", "JapaneseVowels", "ArticularyWordRecognition", "FingerMovements"]  # fmt: skip
TSER = ["CardanoSentiment", "BitcoinSentiment", "Covid3Month", "Tecator", "ChilledWaterPredictor", "FloodModeling1"]
CANDIDATES = {"defaults": None, "series_normalization": {"series_normalization": True}}
FOLDS = 2


def units() -> list[tuple]:
    """Every unit, the synthetic sets first (quick), then the shared sets from the smallest."""
    out = [(f"scale-{k}", m, f) for k in KINDS for m in ("defaults", "series_normalization", "MiniRocket", "QUANT")
           for f in ("all", 0, 1, 2)]  # fmt: skip
    out += [(name, c, f) for name in UEA + TSER for c in CANDIDATES for f in range(FOLDS)]
    # added after the first run started (appended, so that its workers' shares stay as they were): the classifier's
    # wide_scales rule switched off, on the sets built for the property it targets
    out += [(f"scale-{k}", "no_wide_scales", f) for k in KINDS for f in ("all", 0, 1, 2)]
    return out


def _path(unit) -> Path:
    return OUT / f"{unit[0]}__{unit[1]}__{unit[2]}.json"


def _train(name: str):
    from eadct.datasets import load_dataset

    folder = DATA / ("UEA" if name in UEA else "TSER") / name
    return load_dataset(name, "train", folder.parent, download=False, progress=False)  # TRAIN only


def run_shared(name: str, candidate: str, fold: int) -> dict:
    from sklearn.model_selection import KFold, StratifiedKFold

    from eadct import EADCTClassifier, EADCTRegressor

    X, y = _train(name)
    y = np.asarray(y)
    task = "classification" if name in UEA else "regression"
    split = StratifiedKFold(FOLDS, shuffle=True, random_state=0) if task == "classification" else KFold(
        FOLDS, shuffle=True, random_state=0)  # fmt: skip
    fit_idx, test_idx = list(split.split(np.zeros(len(y)), y))[fold]
    take = lambda idx: X[idx] if isinstance(X, np.ndarray) else [X[i] for i in idx]  # noqa: E731
    cls = EADCTClassifier if task == "classification" else EADCTRegressor
    start = time.perf_counter()
    est = cls(random_state=fold, n_jobs=1, options=CANDIDATES[candidate]).fit(take(fit_idx), y[fit_idx])
    fit_s = time.perf_counter() - start
    pred = est.predict(take(test_idx))
    if task == "classification":
        score = {"accuracy": float(np.mean(pred == y[test_idx]))}
    else:
        rmse = float(np.sqrt(np.mean((pred - y[test_idx].astype(float)) ** 2)))
        score = {"rmse": rmse, "rmse_over_std": rmse / float(np.std(y[test_idx].astype(float)))}
    return {"set": name, "model": candidate, "fold": fold, **score, "fit_s": round(fit_s, 1)}


def run(worker: int, workers: int) -> None:
    import torch

    torch.set_num_threads(1)
    OUT.mkdir(parents=True, exist_ok=True)
    for i, unit in enumerate(units()):
        if i % workers != worker or _path(unit).exists():
            continue
        name, model, fold = unit
        if name.startswith("scale-"):
            result = score_unit(name.removeprefix("scale-"), model, fold)
        else:
            result = run_shared(name, model, fold)
        tmp = _path(unit).with_suffix(".tmp")
        tmp.write_text(json.dumps(result) + "\n")
        tmp.replace(_path(unit))
        print(json.dumps(result), flush=True)


def report() -> None:
    rows = [json.loads(p.read_text()) for p in sorted(OUT.glob("*.json"))]
    print("## Synthetic scale sets (200 series, 3 channels, 64 steps; benchmarks/scale_synthetic.py)\n")
    print("| set | model | training accuracy | TRAIN-CV accuracy (3 folds) | largest class |")
    print("|---|---|---|---|---|")
    for kind in KINDS:
        _, y = make_scale_set(kind)
        for model in ("defaults", "series_normalization", "no_wide_scales", "MiniRocket", "QUANT"):
            mine = [r for r in rows if r["set"] == f"scale-{kind}" and r["model"] == model]
            full = [r["accuracy"] for r in mine if r["fold"] == "all"]
            cv = [r["accuracy"] for r in mine if r["fold"] != "all"]
            show = lambda v, k: f"{np.mean(v):.3f}" if len(v) == k else f"({len(v)} of {k} done)"  # noqa: E731
            print(f"| scale-{kind} | {model} | {show(full, 1)} | {show(cv, 3)} | {np.bincount(y).max() / len(y):.3f} |")
    print("\n## Shared sets, 2-fold cross-validation inside TRAIN (no TEST read)\n")
    print("| set | metric | defaults | series_normalization | ratio or difference |")
    print("|---|---|---|---|---|")
    for name in UEA + TSER:
        key = "accuracy" if name in UEA else "rmse_over_std"
        got = {c: [r[key] for r in rows if r["set"] == name and r["model"] == c] for c in CANDIDATES}
        if not all(len(v) == FOLDS for v in got.values()):
            print(f"| {name} | {key} | ({len(got['defaults'])} of {FOLDS}) | ({len(got['series_normalization'])} of "
                  f"{FOLDS}) | |")  # fmt: skip
            continue
        a, b = np.mean(got["defaults"]), np.mean(got["series_normalization"])
        change = f"{b - a:+.4f}" if name in UEA else f"x{b / a:.3f}"
        print(f"| {name} | {key} | {a:.4f} | {b:.4f} | {change} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["run", "report"])
    parser.add_argument("--worker", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    run(args.worker, args.workers) if args.action == "run" else report()
