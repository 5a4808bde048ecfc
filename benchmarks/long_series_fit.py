"""Fit EADCTClassifier on StandWalkJump (12 train / 15 test series, 4 channels, length 2500).

    python benchmarks/long_series_fit.py --data-dir ../shared/datasets/UEA
    python benchmarks/long_series_fit.py --data-dir ../shared/datasets/UEA --param attention_downsample=4

Prints the memory plan the estimator chose (``memory_guard="auto"`` unless ``--param memory_guard=...``),
the fit and predict times, the process' peak memory (peak RSS, CPU) or peak CUDA memory, and the test
accuracy. Uses only the public API.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import time
import warnings

import numpy as np
import torch

from eadct import EADCTClassifier
from eadct.datasets import load_dataset
from eadct.estimators import nest


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="StandWalkJump")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    params = {"memory_guard": "auto", "max_epochs": 30, "pretrain_epochs": 10, "random_state": 0}
    params.update({k: json.loads(v) for k, v in (p.split("=", 1) for p in args.param)})
    params = nest(EADCTClassifier, params)  # --param takes a field of options by its name too

    X, y = load_dataset(args.dataset, "train", args.data_dir)
    Xt, yt = load_dataset(args.dataset, "test", args.data_dir)
    clf = EADCTClassifier(**params)
    tic = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X, y)
    fit_s = time.perf_counter() - tic
    tic = time.perf_counter()
    accuracy = float(np.mean(clf.predict(Xt) == yt))
    predict_s = time.perf_counter() - tic
    if clf.device_.startswith("cuda"):
        peak = f"{torch.cuda.max_memory_allocated() / 2**30:.2f} GB (CUDA max allocated)"
    else:
        peak = f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GB (peak RSS of the process)"
    print(f"{args.dataset}: X {np.shape(X)}, params {params}")
    for w in caught:
        if "memory_plan_" in str(w.message):
            print(f"memory guard: {w.message}")
    print(f"memory_plan_ = {clf.memory_plan_}")
    print(
        f"fit {fit_s:.1f} s ({sum(r['stage'] == 'pretrain' for r in clf.history_)} pretrain + "
        f"{sum(r['stage'] == 'finetune' for r in clf.history_)} fine-tune epochs), predict {predict_s:.1f} s"
    )
    print(
        f"peak memory {peak}; test accuracy {accuracy:.3f}; device {clf.device_}, "
        f"{torch.get_num_threads()} threads, {platform.machine()}"
    )


if __name__ == "__main__":
    main()
