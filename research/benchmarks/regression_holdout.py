"""How much is there to learn in each regression set? The screen's TRAIN hold-outs, scored by two baselines.

For each TSER set and seed, the TRAIN file only, split as the screen splits it (``screen_defaults.inner_split``:
a third held out): the hold-out RMSE of predicting the fitted part's mean target, of MiniRocket with ridge
(the tables' MiniRocket row, fitted on the fitted part), and of a screen candidate whose rows are already in
the screen's results (``--candidate``; the regressor's defaults are ``short-segments-ridge``, before their
ridge refit ``short-segments``). The last column says whether the candidate is at or below MiniRocket on that
hold-out. Nothing here opens a TEST file.

One more column asks how much a linear model reads from the input itself (docs/accuracy.md, "Regression and
Tecator"): "ridge on the input", ridge regression (leave-one-out strength among the regressor's ``RIDGE_ALPHAS``)
on the input's means over ``INPUT_PARTS`` consecutive parts of each channel, the features that
``EADCTRegressor(head_input_parts=32)`` adds to its ridge head.

    python benchmarks/regression_holdout.py --data-dir ../shared/datasets/TSER --seeds 0 1

``--series-standardised`` adds MiniRocket on the same series each standardised by its own mean and standard
deviation per channel (docs/accuracy.md, "Candidate: each series' shape apart from its level").
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from screen_defaults import TSER, _load_train, inner_split, read_results

#: The input as the linear columns read it: the mean of each of this many consecutive parts of each channel.
INPUT_PARTS = 32


def _rmse(y, pred) -> float:
    return float(np.sqrt(np.mean((np.asarray(y) - pred) ** 2)))


def input_parts(X, parts: int = INPUT_PARTS) -> np.ndarray:
    """(n, channels * parts): each channel's means over ``parts`` consecutive parts of its (own) length: step t
    of a series of length L falls in part ``t * parts // L``, as in ``EADCTRegressor(head_input_parts=parts)``."""
    rows = []
    for series in X:
        series = np.asarray(series, dtype=float)
        series = series[None] if series.ndim == 1 else series
        part = np.arange(series.shape[1]) * parts // series.shape[1]  # the rule of the regressor's head_input_parts
        cuts = [np.flatnonzero(part == k) for k in range(parts)]
        with warnings.catch_warnings():  # a part that is all missing (or empty) reads 0, the channel mean after
            warnings.simplefilter("ignore")  # standardisation
            rows.append([np.nanmean(channel[c]) if len(c) else np.nan for channel in series for c in cuts])
    return np.asarray(rows)


def series_standardised(X) -> list[np.ndarray]:
    """Each series' channels minus their own mean, over their own standard deviation (a flat channel: 0)."""
    out = []
    for series in X:
        series = np.asarray(series, dtype=float)
        series = series[None] if series.ndim == 1 else series
        mean, std = np.nanmean(series, axis=1, keepdims=True), np.nanstd(series, axis=1, keepdims=True)
        out.append((series - mean) / np.where(std > 1e-12, std, 1.0))
    return out


def _standardised(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    with warnings.catch_warnings():  # a column with no value (parts beyond a short series) stands at 0
        warnings.simplefilter("ignore")
        mean, scale = np.nanmean(train, axis=0), np.nanstd(train, axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    return np.nan_to_num((train - mean) / scale), np.nan_to_num((test - mean) / scale)


def ridge(train: np.ndarray, y_train, test: np.ndarray) -> np.ndarray:
    """Test predictions of a ridge regression on standardised features, its strength chosen by leave-one-out
    among the regressor's ``RIDGE_ALPHAS``."""
    from sklearn.linear_model import RidgeCV

    from eadct.estimators import RIDGE_ALPHAS

    train, test = _standardised(train, test)
    return RidgeCV(alphas=RIDGE_ALPHAS).fit(train, y_train).predict(test)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=TSER)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--data-dir", action="append", default=None)
    parser.add_argument("--candidate", default="short-segments-ridge")
    parser.add_argument("--results", default="results/screen/screen.jsonl")
    parser.add_argument("--series-standardised", action="store_true", help="add MiniRocket on standardised series")
    args = parser.parse_args(argv)
    from eadct.tables import fit_minirocket, subset

    path = Path(args.results)
    rows = read_results(path) if path.exists() else []
    screened = {(r["dataset"], r["seed"]): r["score"] for r in rows if r["candidate"] == args.candidate}
    extra = " MiniRocket, series standardised |" if args.series_standardised else ""
    print(f"| dataset | seed | hold-out | TRAIN mean | MiniRocket | ridge on the input | {args.candidate} |"
          " at or below MiniRocket |" + extra)  # fmt: skip
    print("|---" * (9 if args.series_standardised else 8) + "|")
    at_or_below = compared = 0
    for name in args.datasets:
        loaded = _load_train(name, args.data_dir or ["../shared/datasets/TSER"])
        if loaded is None:
            print(f"| {name} | not found | | | | | | |")
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
            on_input = _rmse(y[held], ridge(input_parts(data.X_train), y[fit], input_parts(data.X_test)))
            cells = [f"{_rmse(y[held], y[fit].mean()):.4g}", f"{minirocket:.4g}", f"{on_input:.4g}",
                     "" if ours is None else f"{ours:.4g}", verdict]  # fmt: skip
            if args.series_standardised:
                data.X_train, data.X_test = series_standardised(data.X_train), series_standardised(data.X_test)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cells.append(f"{_rmse(y[held], fit_minirocket(data, seed)[0]):.4g}")
            print(f"| {name} | {seed} | {len(held)} | " + " | ".join(cells) + " |", flush=True)
    if compared:
        print(f"\n{args.candidate} at or below MiniRocket on {at_or_below} of {compared} (set, seed) hold-outs.")


if __name__ == "__main__":
    main()
