"""The regressor's ridge head on TEST, its strength by leave-one-out (the default) and by the one-standard-error rule.

One fit of ``EADCTRegressor(random_state=seed)`` (the defaults; ``--param`` adds parameters) per set and seed on
TRAIN; then the TEST RMSE of its own predictions (the ridge strength with the lowest leave-one-out error) and of the
same ridge on the same standardised TRAIN representation with the strength of the one-standard-error rule
(``regression_ridge_alpha.one_se_ridge``, which ``EADCTRegressor(head_refit="ridge-1se")`` equals on the same
network: ``tests/test_ridge_head.py``). Both heads read one network, so each pair is exactly paired.

Where ``input_differences="auto"`` lets the network choose the treatment (an inner split fitted both ways, the
differences taken only where their inner RMSE is below half the values'), ``head_refit="ridge-1se"`` scores those
inner fits with its own head and could choose otherwise; the table shows the defaults' inner ratio (with / without)
so the reader can see how far each choice was from the margin. Where the kernel ridge proxy decides, or the step
cap binds, no network chooses and the pair is that of ``head_refit="ridge-1se"`` itself.

    python benchmarks/regression_ridge_rule_test.py --data-dir ../shared/datasets/TSER --datasets Tecator --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from regression_ridge_alpha import one_se_ridge

from eadct import EADCTRegressor
from eadct.datasets import load_dataset


def _rmse(y, pred) -> float:
    return float(np.sqrt(np.mean((np.asarray(y) - pred) ** 2)))


def one_pair(name: str, data_dir: str, seed: int, threads: int, params: dict) -> dict:
    X, y = load_dataset(name, "train", data_dir)
    X_test, y_test = load_dataset(name, "test", data_dir)
    y = np.asarray(y, dtype=float)
    est = EADCTRegressor(random_state=seed, n_jobs=threads, **params)
    tic = time.perf_counter()
    est.fit(X, y)
    fit_s = time.perf_counter() - tic
    targets = (y - est.target_mean_[0]) / est.target_scale_[0]
    predict, alpha, loo_check = one_se_ridge(est.transform(X), targets)
    pred = predict(est.transform(X_test)) * est.target_scale_[0] + est.target_mean_[0]
    choice = getattr(est, "treatment_choice_", {})
    inner = choice.get("rmse_with"), choice.get("rmse_without")
    return dict(dataset=name, seed=seed, loo=_rmse(y_test, est.predict(X_test)),
                loo_alpha=float(est.head_alpha_.ravel()[0]), loo_alpha_check=loo_check, one_se=_rmse(y_test, pred),
                one_se_alpha=alpha, differences=bool(est.input_differences_),
                decided_by=choice.get("decided_by") or choice.get("skipped"),
                inner_ratio=inner[0] / inner[1] if None not in inner else None, fit_s=fit_s,
                threads=threads, params=params)  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", required=True)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--data-dir", default="../shared/datasets/TSER")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="a JSON value")
    parser.add_argument("--out", default="results/ridge_rule_test.jsonl", help="one JSON line per pair; resumes")
    args = parser.parse_args(argv)
    params = {k: json.loads(v) for k, _, v in (p.partition("=") for p in args.param)}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    print("| dataset | seed | treatment (decided by, inner ratio) | leave-one-out | strength | one standard error |"
          " strength | ratio | fit s |")  # fmt: skip
    print("|---" * 9 + "|")
    for name in args.datasets:
        for seed in args.seeds:
            key = dict(dataset=name, seed=seed, threads=args.threads, params=params)
            row = next((r for r in done if all(r.get(k) == v for k, v in key.items())), None)
            if row is None:
                row = one_pair(name, args.data_dir, seed, args.threads, params)
                with out.open("a") as f:
                    f.write(json.dumps(row) + "\n")
            inner = "" if row["inner_ratio"] is None else f", {row['inner_ratio']:.3f}"
            treatment = f"{'differences' if row['differences'] else 'values'} ({row['decided_by']}{inner})"
            ratio = row["one_se"] / row["loo"]
            cells = [treatment, f"{row['loo']:.4g}", f"{row['loo_alpha']:.3g}", f"{row['one_se']:.4g}",
                     f"{row['one_se_alpha']:.3g}", f"{ratio:.3f}", f"{row['fit_s']:.0f}"]  # fmt: skip
            print(f"| {name} | {seed} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
