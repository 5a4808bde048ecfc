"""Where the regressor's hold-out errors come from: series whose representation lies outside TRAIN's.

For each (set, seed) the screen's split of TRAIN (``screen_defaults.inner_split``, a third held out) is fitted
with a screen candidate (``screen_defaults.fit_candidate``: the same fit as the screen's row). Then, on the
hold-out: the RMSE; the RMSE with each feature of the pooled representation clipped to the range the fitted
series gave (``clip_representation``'s clip, applied to the fitted network); how many held-out series have a
feature outside that range; and how far out the furthest feature lies, in standard deviations of the fitted
series' features, for the held-out and for the fitted series (the largest and the median over series). Only
TRAIN files are read. One JSON line per pair, then a Markdown table.

    python benchmarks/representation_range.py --datasets Covid3Month --seeds 1 --threads 1 \\
        --candidates short-segments-ridge-swa20-attn
    python benchmarks/representation_range.py --seeds 0 2 --threads 1 --out results/screen/range.jsonl

The second form, on the defaults' candidate (the default), gives in one fit per pair both the screen's row of
``short-segments-ridge-swa20`` ("RMSE") and that of ``short-segments-ridge-swa20-cliprep`` ("clipped"):
``clip_representation`` changes no fitted weight, only what the fitted network does outside TRAIN's range.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import screen_defaults as screen  # noqa: E402


def furthest(features: np.ndarray, mean: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Per series, the largest |z| of its features in the fitted series' standardisation."""
    return np.abs((features - mean) / np.where(scale > 1e-12, scale, 1.0)).max(axis=1)


def outside(name: str, candidate: str, seed: int, data_dir: str) -> dict:
    from eadct.datasets import load_dataset
    from eadct.tables import subset

    X, y = load_dataset(name, "train", data_dir, download=False, progress=False)
    y = np.asarray(y, dtype=np.float64)
    est, fit_idx, held_idx, fit_s = screen.fit_candidate(name, candidate, X, y, seed)
    if est.clip_representation:
        raise ValueError(f"{candidate} clips its representation already: pass a candidate without the clip")
    X_fit, X_held, truth = subset(X, fit_idx), subset(X, held_idx), y[held_idx]
    fitted, held = est.transform(X_fit), est.transform(X_held)
    pred = est.predict(X_held)
    low, high = fitted.min(axis=0), fitted.max(axis=0)
    for net in est.networks_:  # the option's clip, on the fitted networks (each member its own range)
        net.fit_representation_range(est._forward(X_fit, "represent", [net]))
    clipped = est.predict(X_held)
    mean, scale = fitted.mean(axis=0), fitted.std(axis=0)
    z_held, z_fit = furthest(held, mean, scale), furthest(fitted, mean, scale)

    def rmse(p):
        return float(np.sqrt(np.mean((truth - p) ** 2)))

    errors = (truth - pred) ** 2
    worst = np.argsort(-errors)[:4]  # the four largest errors: their share of the squared error, how far out

    return dict(dataset=name, seed=seed, candidate=candidate, rmse=rmse(pred), clipped=rmse(clipped),
                n_outside=int(np.sum(((held < low) | (held > high)).any(axis=1))), n_holdout=len(held_idx),
                held_z_max=float(z_held.max()), held_z_median=float(np.median(z_held)),
                fit_z_max=float(z_fit.max()), fit_z_median=float(np.median(z_fit)),
                worst_share=float(errors[worst].sum() / errors.sum()), worst_z=[float(z_held[i]) for i in worst],
                worst_pred=[float(pred[i]) for i in worst], worst_truth=[float(truth[i]) for i in worst],
                fit_s=fit_s)  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=screen.TSER)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--candidates", nargs="+", default=["short-segments-ridge-swa20"])
    parser.add_argument("--data-dir", default="../shared/datasets/TSER")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", default=None, help="JSON lines: every finished pair appended, skipped when rerun")
    args = parser.parse_args(argv)
    import torch

    from eadct.tables import append_jsonl, read_jsonl

    if args.threads:
        torch.set_num_threads(args.threads)
    done = {(r["dataset"], r["seed"], r["candidate"]): r for r in read_jsonl(Path(args.out))} if args.out else {}
    rows = []
    for name in args.datasets:
        for seed in args.seeds:
            for candidate in args.candidates:
                if (name, seed, candidate) in done:
                    rows.append(done[(name, seed, candidate)])
                    continue
                rows.append(outside(name, candidate, seed, args.data_dir))
                if args.out:
                    append_jsonl(Path(args.out), rows[-1])
                print(json.dumps(rows[-1]), flush=True)
    print("\n| dataset | seed | candidate | RMSE | clipped | held-out series outside | furthest z: held-out "
          "(median) | fitted (median) | 4 largest errors: share, furthest z |\n" + "|---" * 9 + "|")  # fmt: skip
    for r in rows:
        print(f"| {r['dataset']} | {r['seed']} | {r['candidate']} | {r['rmse']:.4g} | {r['clipped']:.4g} | "
              f"{r['n_outside']} of {r['n_holdout']} | {r['held_z_max']:.3g} ({r['held_z_median']:.2g}) | "
              f"{r['fit_z_max']:.3g} ({r['fit_z_median']:.2g}) | "
              f"{r['worst_share']:.0%}, {', '.join(f'{z:.3g}' for z in r['worst_z'])} |")  # fmt: skip


if __name__ == "__main__":
    main()
