"""How widely the regressor's predictions spread on TRAIN's hold-outs, and what a clip to the target range does.

For each (set, seed) the screen's split of TRAIN (``screen_defaults.inner_split``, a third held out) is fitted
with a screen candidate (``screen_defaults.fit_candidate``: the same fit as the screen's row); then, on the
hold-out: the RMSE, the RMSE with every prediction clipped to the fitted part's target range, the RMSE of the
fitted part's mean target, the share of predictions outside that range, and the predictions' standard deviation
over the held-out targets'. Only TRAIN files are read. One JSON line per pair, then a Markdown table.

    python benchmarks/regression_spread.py --datasets CardanoSentiment Covid3Month --seeds 0 2 --threads 1
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import screen_defaults as screen  # noqa: E402


def spread(name: str, candidate: str, seed: int, data_dir: str) -> dict:
    from eadct.datasets import load_dataset
    from eadct.tables import subset

    X, y = load_dataset(name, "train", data_dir, download=False, progress=False)
    y = np.asarray(y, dtype=np.float64)
    est, fit_idx, held_idx, fit_s = screen.fit_candidate(name, candidate, X, y, seed)
    pred, truth = est.predict(subset(X, held_idx)), y[held_idx]
    low, high = y[fit_idx].min(), y[fit_idx].max()

    def rmse(p):
        return float(np.sqrt(np.mean((truth - p) ** 2)))

    return dict(dataset=name, seed=seed, candidate=candidate, rmse=rmse(pred), clipped=rmse(np.clip(pred, low, high)),
                mean_target=rmse(y[fit_idx].mean()), outside=float(np.mean((pred < low) | (pred > high))),
                spread=float(pred.std() / truth.std()), fit_s=fit_s)  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["CardanoSentiment", "Covid3Month", "BitcoinSentiment"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    parser.add_argument("--candidate", default="short-segments-ridge-swa20", choices=list(screen.CANDIDATES))
    parser.add_argument("--data-dir", default="../shared/datasets/TSER")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (1 beside another process)")
    args = parser.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    rows = []
    for name in args.datasets:
        for seed in args.seeds:
            rows.append(spread(name, args.candidate, seed, args.data_dir))
            print(json.dumps(rows[-1]), flush=True)
    print("\n| dataset | seed | RMSE | clipped | mean target | outside the range | spread |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['dataset']} | {r['seed']} | {r['rmse']:.4g} | {r['clipped']:.4g} | {r['mean_target']:.4g} | "
              f"{r['outside']:.3f} | {r['spread']:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
