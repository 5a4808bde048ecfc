"""How much is there to learn in each regression set? The screen's TRAIN hold-outs, scored by two baselines.

For each TSER set and seed, the TRAIN file only, split as the screen splits it (``screen_defaults.inner_split``:
a third held out): the hold-out RMSE of predicting the fitted part's mean target, of MiniRocket with ridge
(the tables' MiniRocket row, fitted on the fitted part), and of a screen candidate whose rows are already in
the screen's results (``--candidate``; the regressor's defaults are ``short-segments-ridge``, before their
ridge refit ``short-segments``). The last column says whether the candidate is at or below MiniRocket on that
hold-out. Nothing here opens a TEST file.

    python benchmarks/regression_holdout.py --data-dir ../shared/datasets/TSER --seeds 0 1
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from screen_defaults import TSER, _load_train, inner_split, read_results


def _rmse(y, pred) -> float:
    return float(np.sqrt(np.mean((np.asarray(y) - pred) ** 2)))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=TSER)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--data-dir", action="append", default=None)
    parser.add_argument("--candidate", default="short-segments-ridge")
    parser.add_argument("--results", default="results/screen/screen.jsonl")
    args = parser.parse_args(argv)
    from eadct.tables import fit_minirocket, subset

    path = Path(args.results)
    rows = read_results(path) if path.exists() else []
    screened = {(r["dataset"], r["seed"]): r["score"] for r in rows if r["candidate"] == args.candidate}
    print(f"| dataset | seed | hold-out | TRAIN mean | MiniRocket | {args.candidate} | at or below MiniRocket |")
    print("|---|---|---|---|---|---|---|")
    at_or_below = compared = 0
    for name in args.datasets:
        loaded = _load_train(name, args.data_dir or ["../shared/datasets/TSER"])
        if loaded is None:
            print(f"| {name} | not found | | | | | |")
            continue
        X, y = loaded[0], np.asarray(loaded[1], dtype=float)
        for seed in args.seeds:
            fit, held = inner_split(y, 1 / 3, seed, classification=False)
            data = SimpleNamespace(X_train=subset(X, fit), X_test=subset(X, held), y_train=y[fit], task="regression")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                minirocket = _rmse(y[held], fit_minirocket(data, seed)[0])
            ours = screened.get((name, seed))
            verdict = ""
            if ours is not None:
                compared += 1
                at_or_below += ours <= minirocket
                verdict = "yes" if ours <= minirocket else "no"
            cells = [f"{_rmse(y[held], y[fit].mean()):.4g}", f"{minirocket:.4g}", "" if ours is None else f"{ours:.4g}"]
            print(f"| {name} | {seed} | {len(held)} | " + " | ".join(cells) + f" | {verdict} |")
    if compared:
        print(f"\n{args.candidate} at or below MiniRocket on {at_or_below} of {compared} (set, seed) hold-outs.")


if __name__ == "__main__":
    main()
