"""The input's differences as channels of their own, against the stem's ``input_differences=True``, on TRAIN only.

``input_differences=True`` makes the input stem read each channel's first differences beside its values. This
script asks whether the network does better when the differences are given as input channels instead: computed
on the raw series before the fit, standardised like every channel, masked and reconstructed in pretraining as
channels of their own (the stem's differences are computed from the masked input, where a masked value reads 0).
Variants (``--variants``): ``stem`` (``input_differences=True``), ``x_dx`` (values and first differences as
channels), ``x_d2`` (values and second differences), ``x_dx_d2`` (all three); the channel variants fit with
``input_differences=False``. Everything else is the regressor's defaults at the step cap of 900 without the
treatment's choice (the screen's ``short-segments-ridge-swa20-cap900``), on the screen's splits of TRAIN (a third
held out, ``screen_defaults.inner_split``); no TEST file is opened. Results are appended to ``--out`` as JSON lines
as they finish (a rerun skips the finished ones), then the table is printed (docs/accuracy.md, "Candidate: second
differences in the input").

    python benchmarks/difference_channels.py --dataset Tecator --variants stem x_d2 --seeds 4 5 --threads 1
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from screen_defaults import _load_train, inner_split, resolve

VARIANTS = ("stem", "x_dx", "x_d2", "x_dx_d2")
#: The screen candidate whose settings every variant fits with (the regressor's defaults without the choice).
BASE = "short-segments-ridge-swa20-cap900"


def _differences(X: np.ndarray) -> np.ndarray:
    """First differences along time, 0 at the first step, shape kept (so the second differences of ``channels``
    are 0 at the first step and the first difference at the second)."""
    return np.concatenate([np.zeros_like(X[..., :1]), np.diff(X, axis=-1)], axis=-1)


def channels(X: np.ndarray, variant: str) -> np.ndarray:
    """``X`` ``(n, C, N)`` with the variant's difference channels appended (``stem``: unchanged)."""
    d1 = _differences(X)
    extra = {"stem": [], "x_dx": [d1], "x_d2": [_differences(d1)], "x_dx_d2": [d1, _differences(d1)]}[variant]
    return np.concatenate([X, *extra], axis=1)


def fit_one(X, y, variant: str, seed: int) -> dict:
    from eadct import EADCTRegressor

    fit_idx, held_idx = inner_split(y, 1 / 3, seed, False)
    data = channels(X, variant)
    params = {"missing_values": "interpolate", "memory_guard": "auto", "device": "cpu", "random_state": seed,
              **resolve(BASE, EADCTRegressor), "n_jobs": 1,
              "input_differences": variant == "stem"}  # fmt: skip
    tic = time.perf_counter()
    est = EADCTRegressor(**params).fit(data[fit_idx], y[fit_idx])
    fit_s = time.perf_counter() - tic
    rmse = float(np.sqrt(np.mean((est.predict(data[held_idx]) - y[held_idx]) ** 2)))
    return dict(variant=variant, seed=seed, rmse=rmse, fit_s=fit_s, n_fit=len(fit_idx), n_holdout=len(held_idx))


def table(rows: list[dict], variants: list[str]) -> str:
    seeds = sorted({r["seed"] for r in rows})
    cell = {(r["variant"], r["seed"]): r["rmse"] for r in rows}
    lines = ["| variant | " + " | ".join(f"seed {s}" for s in seeds) + " | ratio to the first (geometric mean) |",
             "|---" * (len(seeds) + 2) + "|"]  # fmt: skip
    for v in variants:
        ratios = [cell[v, s] / cell[variants[0], s] for s in seeds if (v, s) in cell and (variants[0], s) in cell]
        gm = float(np.exp(np.mean(np.log(ratios)))) if ratios else float("nan")
        lines.append(f"| {v} | " + " | ".join(f"{cell[v, s]:.4g}" if (v, s) in cell else "-" for s in seeds)
                     + f" | {gm:.3f} |")  # fmt: skip
    return "\n".join(lines)


def main(argv=None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="Tecator")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=["stem", "x_d2"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data-dir", action="append", default=None)
    parser.add_argument("--out", default="results/difference_channels.jsonl")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    X, y = _load_train(args.dataset, args.data_dir or ["../shared/datasets/TSER"])
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    rows = [r for r in rows if r["dataset"] == args.dataset]
    for seed in args.seeds:
        for variant in args.variants:
            if any(r["variant"] == variant and r["seed"] == seed for r in rows):
                continue
            row = dict(fit_one(X, y, variant, seed), dataset=args.dataset)
            rows.append(row)
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
    wanted = [r for r in rows if r["seed"] in args.seeds and r["variant"] in args.variants]
    print(f"\n{args.dataset}, hold-out RMSE (a third of TRAIN), {args.threads} torch thread(s):\n")
    print(table(wanted, args.variants))


if __name__ == "__main__":
    main()
