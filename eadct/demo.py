"""The main job: fit and score on a dataset that ships with the install (sktime's bundled copies).

Run ``python -m eadct.demo`` (JapaneseVowels, classification) or
``python -m eadct.demo --dataset Covid3Month`` (regression).
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np
import torch

from . import EADCTClassifier, EADCTRegressor
from .datasets import load_dataset

#: The main job's ``n_jobs``: every core this process may use, fixed for the whole fit. The estimators' default
#: (None) follows the machine's load epoch by epoch, and a different thread count rounds differently, so the same
#: seed could score differently from run to run (docs/benchmarks.md); a benchmark should not.
MAIN_JOB_N_JOBS = -1


def run(dataset: str = "JapaneseVowels", data_dir=None, random_state: int = 0, verbose: bool = False, **params) -> dict:
    """Fit on the TRAIN split with default settings (plus ``params``; ``n_jobs`` ``MAIN_JOB_N_JOBS`` unless
    given), score on TEST."""
    params.setdefault("n_jobs", MAIN_JOB_N_JOBS)
    X_train, y_train = load_dataset(dataset, "train", data_dir)
    X_test, y_test = load_dataset(dataset, "test", data_dir)
    regression = np.issubdtype(np.asarray(y_train).dtype, np.floating)
    Estimator = EADCTRegressor if regression else EADCTClassifier
    model = Estimator(random_state=random_state, verbose=verbose, **params)
    tic = time.perf_counter()
    model.fit(X_train, y_train)
    fit_s = time.perf_counter() - tic
    tic = time.perf_counter()
    pred = model.predict(X_test)
    predict_s = time.perf_counter() - tic
    result = {
        "dataset": dataset,
        "estimator": type(model).__name__,
        "n_train": len(y_train),
        "n_test": len(y_test),
        "fit_s": round(fit_s, 2),
        "predict_s": round(predict_s, 3),
        "epochs": {s: sum(r["stage"] == s for r in model.history_) for s in ("pretrain", "finetune")},
        "device": model.device_,
        # the torch threads the fit's epochs ran with: fewer than the cores while other processes were running
        # (n_jobs=None), which changes the last float digits and so can change a prediction (docs/threads.md)
        "fit_threads": sorted({r["threads"] for r in model.history_ if "threads" in r}) or [torch.get_num_threads()],
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "params": {k: v for k, v in params.items()},
    }
    if regression:
        result["test_rmse"] = float(np.sqrt(np.mean((pred - y_test) ** 2)))
    else:
        result["test_accuracy"] = float(np.mean(pred == y_test))
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="JapaneseVowels")
    parser.add_argument("--data-dir", default=None, help="folder with <Name>/<Name>_TRAIN.ts (default: bundled)")
    parser.add_argument("--random-state", type=int, default=0)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument("--n-jobs", type=int, default=MAIN_JOB_N_JOBS, help="torch threads (joblib's meaning; -1 all)")
    args = parser.parse_args(argv)
    result = run(args.dataset, args.data_dir, args.random_state, args.verbose, n_jobs=args.n_jobs)
    if args.json:
        print(json.dumps(result))
        return
    score = (
        f"test RMSE {result['test_rmse']:.4f}"
        if "test_rmse" in result
        else f"test accuracy {result['test_accuracy']:.4f}"
    )
    print(
        f"{result['estimator']} on {result['dataset']} ({result['n_train']} train / {result['n_test']} test): "
        f"{score}; fit {result['fit_s']:.1f} s ({result['epochs']['pretrain']} pretrain + "
        f"{result['epochs']['finetune']} fine-tune epochs), predict {result['predict_s']:.2f} s; "
        f"device {result['device']} ({_threads_text(result['fit_threads'])})"
    )


def _threads_text(used: list[int]) -> str:
    if len(used) == 1:
        return f"{used[0]} thread{'s' if used[0] > 1 else ''}"
    return f"{used[0]}-{used[-1]} threads: fewer while other processes were running, so the score may differ"


if __name__ == "__main__":
    main()
