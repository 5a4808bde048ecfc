"""The main job: fit and score on a dataset that ships with the install (sktime's bundled copies).

Run ``python -m eadct.demo`` (JapaneseVowels, classification) or
``python -m eadct.demo --dataset Covid3Month`` (regression).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

from . import EADCTClassifier, EADCTRegressor
from .datasets import DATA_DIR_ENV, DatasetNotFoundError, get_info, load_dataset

#: The main job's ``n_jobs``: every core this process may use, fixed for the whole fit. The estimators' default
#: (None) takes the limit in force, which an environment (``OMP_NUM_THREADS``, a container) can set differently, and
#: a different thread count rounds differently (docs/threads.md); a benchmark should name its threads.
MAIN_JOB_N_JOBS = -1


def run(dataset: str = "JapaneseVowels", data_dir=None, random_state: int = 0, verbose: bool = False, **params) -> dict:
    """Fit on the TRAIN split with default settings (plus ``params``; ``n_jobs`` ``MAIN_JOB_N_JOBS`` unless
    given), score on TEST. A dataset of the registry (``eadct-datasets list``) that is on no disk is downloaded;
    another name is only looked for on disk (a ``DatasetNotFoundError`` where it is not there). A ``data_dir``
    that is not a folder is a ValueError."""
    if data_dir is not None and not Path(data_dir).is_dir():
        raise ValueError(
            f"data_dir {str(data_dir)!r} is not a folder; pass the folder that holds <Name>/<Name>_TRAIN.ts."
        )
    params.setdefault("n_jobs", MAIN_JOB_N_JOBS)
    download = get_info(dataset) is not None  # never a download for a name that is not a registered dataset
    X_train, y_train = load_dataset(dataset, "train", data_dir, download=download)
    X_test, y_test = load_dataset(dataset, "test", data_dir, download=download)
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
        # the torch threads the fit's epochs ran with (one count, set when the fit starts); another count changes
        # the last float digits and so can change a prediction (docs/threads.md)
        "fit_threads": sorted({r["threads"] for r in model.history_ if "threads" in r}) or [torch.get_num_threads()],
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "params": {k: v for k, v in params.items()},
    }
    if regression:
        result["test_rmse"] = float(np.sqrt(np.mean((pred - y_test) ** 2)))
    else:
        result["test_accuracy"] = float(np.mean(pred == y_test))
    return result


def _n_jobs(text: str) -> int:
    """``--n-jobs``: joblib's meaning, so any int but 0."""
    value = _int(text)
    if value == 0:
        raise argparse.ArgumentTypeError(
            "0 threads cannot fit; give k > 0 threads, or -1 for all cores (-2: all but one)"
        )
    return value


def _seed(text: str) -> int:
    """``--random-state``: a seed numpy accepts."""
    value = _int(text)
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"a seed is an int in [0, 2**32), not {value}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an int") from None


def _fail(message: str, status: int) -> int:
    """Print ``message`` as one line on stderr; the exit status."""
    print(f"eadct-demo: error: {message}", file=sys.stderr)
    return status


def _not_found(dataset: str, err: DatasetNotFoundError) -> str:
    """One line for a dataset on no disk: unknown to the registry, or a registered one that could not be had."""
    if get_info(dataset) is None:
        return (
            f"unknown dataset {dataset!r}: not in the registry (eadct-datasets list shows it), and no "
            f"{dataset}_TRAIN.ts in --data-dir, ${DATA_DIR_ENV}, sktime's bundled copies or the cache"
        )
    lines = str(err).splitlines()
    failure = next((line.strip() for line in lines if line.strip().startswith("download")), "")
    return f"dataset {dataset!r} is on no disk ({failure}); pass --data-dir <dir> holding {dataset}/{dataset}_TRAIN.ts"


def main(argv=None) -> int:
    """The command line; returns the exit status: 0, or 2 for a usage mistake (an unknown dataset, a --data-dir
    that is not a folder, a bad option value), said in one line on stderr."""
    parser = argparse.ArgumentParser(prog="eadct-demo", description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="JapaneseVowels")
    parser.add_argument("--data-dir", default=None, help="folder with <Name>/<Name>_TRAIN.ts (default: bundled)")
    parser.add_argument("--random-state", type=_seed, default=0)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--json", action="store_true", help="print one JSON line")
    parser.add_argument(
        "--n-jobs", type=_n_jobs, default=MAIN_JOB_N_JOBS, help="torch threads (joblib's meaning; -1 all; not 0)"
    )
    args = parser.parse_args(argv)
    if args.data_dir is not None and not Path(args.data_dir).is_dir():
        return _fail(f"--data-dir {args.data_dir} is not a folder", 2)
    try:
        result = run(args.dataset, args.data_dir, args.random_state, args.verbose, n_jobs=args.n_jobs)
    except DatasetNotFoundError as err:
        return _fail(_not_found(args.dataset, err), 2)
    if args.json:
        print(json.dumps(result))
        return 0
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
    return 0


def _threads_text(used: list[int]) -> str:
    """The threads of the fit: one count per call since n_jobs stopped following the load (several only if the
    count was changed from outside between the fit's stages)."""
    counts = "-".join(str(n) for n in (used[0], used[-1])[: len(set(used))])
    return f"{counts} thread{'s' if used[-1] > 1 else ''}"


if __name__ == "__main__":
    sys.exit(main())
