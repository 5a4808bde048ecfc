"""TEST RMSE and fit time of ``EADCTRegressor(input_differences="auto")`` against the regressor without the differences.

The rule it serves is in docs/accuracy.md ("Option: the regressor's input treatment chosen inside fit"). For each
(set, seed) it fits ``EADCTRegressor(input_differences="auto", random_state=seed)`` on TRAIN and scores TEST. Where
"auto" keeps the treatment without the differences, its refit is the fit of ``input_differences=False`` (the same
computation, checked by tests/test_treatment.py; the "defaults" of the table, the regressor's default before
2026-11-27), so that fit's TEST RMSE is the same number and its fit time is the refit's (the fit less
``treatment_choice_["choice_s"]``). Where "auto" takes the differences, ``input_differences=False`` is fitted too, in
the same process. Each finished (set, seed) is appended to ``--out`` at once; a rerun skips it. The table printed: per
(set, seed) the choice, its inner RMSEs, both TEST RMSEs and fit times; then per set the ratio of the 3-seed mean
RMSEs and of the mean fit times, and the geometric mean of the RMSE ratios over the sets.

    python benchmarks/treatment_auto.py --datasets Tecator CardanoSentiment --seeds 0 1 2 --threads 1 \\
        --data-dir ../shared/datasets/TSER --out results/treatment_auto.jsonl
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from screen_defaults import _load_split

from eadct import EADCTRegressor
from eadct.tables import append_jsonl, read_jsonl


def _load(name: str, dirs, split: str):
    loaded = _load_split(name, dirs, split)
    if loaded is None:
        raise SystemExit(f"{name}: no {split.upper()} file under {dirs}")
    return loaded


def _fit(X, y, X_test, y_test, **params) -> tuple[EADCTRegressor, float, float]:
    start = time.perf_counter()
    est = EADCTRegressor(**params).fit(X, y)
    fit_s = time.perf_counter() - start
    rmse = float(np.sqrt(np.mean((est.predict(X_test) - np.asarray(y_test, dtype=float)) ** 2)))
    return est, rmse, fit_s


def measure(name: str, dirs, seed: int, threads: int) -> dict:
    (X, y), (X_test, y_test) = _load(name, dirs, "train"), _load(name, dirs, "test")
    est, rmse, fit_s = _fit(X, y, X_test, y_test, input_differences="auto", random_state=seed, n_jobs=threads)
    choice = est.treatment_choice_
    row = dict(dataset=name, seed=seed, threads=threads, chosen=choice["chosen"], choice=choice)
    row.update(auto_rmse=rmse, auto_fit_s=fit_s)
    if choice["chosen"]:  # "defaults": input_differences=False, the default before "auto" (2026-11-27)
        _, row["defaults_rmse"], row["defaults_fit_s"] = _fit(
            X, y, X_test, y_test, input_differences=False, random_state=seed, n_jobs=threads
        )
    else:  # the refit was the defaults' fit
        row["defaults_rmse"], row["defaults_fit_s"] = rmse, fit_s - choice["choice_s"]
    return row


def table(rows: list[dict]) -> str:
    lines = ["| dataset | seed | chosen | inner RMSE without / with (target SDs) | TEST RMSE: auto / defaults | "
             "fit (s): auto / defaults |", "|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        c = r["choice"]
        inner = "-" if c["rmse_without"] is None else f"{c['rmse_without']:.3f} / {c['rmse_with']:.3f}"
        lines.append(f"| {r['dataset']} | {r['seed']} | {'differences' if r['chosen'] else 'defaults'} | {inner} | "
                     f"{r['auto_rmse']:.4g} / {r['defaults_rmse']:.4g} | "
                     f"{r['auto_fit_s']:.0f} / {r['defaults_fit_s']:.0f} |")  # fmt: skip
    lines += ["", "| dataset | seeds | RMSE ratio (means over seeds) | fit time ratio (means) |", "|---|---|---|---|"]
    logs = []
    for name in dict.fromkeys(r["dataset"] for r in rows):
        mean = {
            k: np.mean([r[k] for r in rows if r["dataset"] == name])
            for k in ("auto_rmse", "defaults_rmse", "auto_fit_s", "defaults_fit_s")
        }
        seeds = sum(r["dataset"] == name for r in rows)
        ratio = mean["auto_rmse"] / mean["defaults_rmse"]
        logs.append(math.log(ratio))
        lines.append(f"| {name} | {seeds} | {ratio:.3f} | {mean['auto_fit_s'] / mean['defaults_fit_s']:.2f} |")
    if logs:
        lines.append(f"\nGeometric mean of the RMSE ratios over {len(logs)} set(s): {math.exp(np.mean(logs)):.3f}.")
    return "\n".join(lines)


def main(argv=None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", required=True)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data-dir", action="append", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    done = {(r["dataset"], r["seed"]) for r in read_jsonl(args.out)} if args.out.exists() else set()
    for name in args.datasets:
        for seed in args.seeds:
            if (name, seed) not in done:
                append_jsonl(args.out, measure(name, args.data_dir, seed, args.threads))
                print(table([r for r in read_jsonl(args.out) if r["dataset"] == name and r["seed"] == seed]))
    print(table(read_jsonl(args.out)))


if __name__ == "__main__":
    main()
