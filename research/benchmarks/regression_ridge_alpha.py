"""Does leave-one-out on TRAIN choose the regressor's ridge strength too weak? The screen's TRAIN hold-outs.

The regressor's ridge refit (``head_refit="ridge"``) chooses its strength by leave-one-out over every TRAIN
series' representation. The network was fine-tuned on 90% of those series, whose representations it has fitted:
their leave-one-out error may look better than a new series' error will be, and favour a weak strength. The
series of the fit's own validation split (the 10% that chose the epoch) never trained the network.

For each TSER set and seed, the TRAIN file only, split as the screen splits it (``screen_defaults.inner_split``:
a third held out): ``EADCTRegressor`` with the screen's candidate parameters (``--candidate``; the regressor's
defaults are ``short-segments-ridge``) is fitted on the fitted part, then the hold-out RMSE is printed for

- "leave-one-out": the fitted regressor's own predictions (its strength by leave-one-out on all the series it
  was fitted on; the screen's row of the candidate);
- "validation": the same ridge on the same standardised representation, but its strength chosen by the error on
  the fit's validation split of a ridge fitted on the fit's training split, then fitted on all the series with
  that strength ("-" where the fit has no validation split, as under weight averaging);
- "one standard error": the same ridge, its strength the largest whose leave-one-out error is within one standard
  error of the lowest (the rule of Hastie, Tibshirani and Friedman, *The Elements of Statistical Learning*, 7.10):
  the strongest shrinkage the leave-one-out errors cannot tell from the best.

Each with the strength it chose (in the units of ``RIDGE_ALPHAS`` on standardised columns). Nothing here opens a
TEST file.

    python benchmarks/regression_ridge_alpha.py --data-dir ../shared/datasets/TSER --seeds 0 --threads 1
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from screen_defaults import TSER, _load_train, fit_candidate


def _rmse(y, pred) -> float:
    return float(np.sqrt(np.mean((np.asarray(y) - pred) ** 2)))


def fit_split(est, n: int):
    """(train, valid) indices of the fit's own validation split, drawn as ``EADCTBase._fit_network`` draws it."""
    from sklearn.utils import check_random_state

    from eadct.estimators import validation_split

    seed = int(check_random_state(est.random_state).randint(2**31 - 1))
    return validation_split(n, est.validation_fraction, np.random.RandomState(seed))


def validation_ridge(features, targets, train, valid):
    """(coef, intercept, alpha): ridge on ``features`` standardised over all rows, the strength with the lowest
    squared error on ``valid`` when fitted on ``train``, then fitted on all rows."""
    from sklearn.linear_model import Ridge

    from eadct.estimators import RIDGE_ALPHAS

    standardise = _standardiser(features)
    z = standardise(features)
    errors = [np.mean((Ridge(alpha=a).fit(z[train], targets[train]).predict(z[valid]) - targets[valid]) ** 2)
              for a in RIDGE_ALPHAS]  # fmt: skip
    alpha = float(RIDGE_ALPHAS[int(np.argmin(errors))])
    ridge = Ridge(alpha=alpha).fit(z, targets)
    return (lambda f: ridge.predict(standardise(f))), alpha


def _standardiser(features):
    """The map that standardises each column by ``features``' mean and standard deviation (1 where constant)."""
    mean, scale = features.mean(axis=0), features.std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    return lambda f: (f - mean) / scale


def one_se_ridge(features, targets):
    """(predict, alpha, loo_alpha): ridge on standardised ``features``, its strength the largest among
    ``RIDGE_ALPHAS`` whose mean leave-one-out squared error is within one standard error of the lowest; and the
    strength with the lowest (the estimator's own choice, recomputed as a check)."""
    from sklearn.linear_model import Ridge, RidgeCV

    from eadct.estimators import RIDGE_ALPHAS, one_standard_error

    standardise = _standardiser(features)
    z = standardise(features)
    errors = RidgeCV(alphas=RIDGE_ALPHAS, store_cv_results=True).fit(z, targets).cv_results_
    errors = errors.reshape(len(targets), len(RIDGE_ALPHAS))  # squared leave-one-out error per series and strength
    best, chosen = int(np.argmin(errors.mean(axis=0))), one_standard_error(errors)
    ridge = Ridge(alpha=float(RIDGE_ALPHAS[chosen])).fit(z, targets)
    return (lambda f: ridge.predict(standardise(f))), float(RIDGE_ALPHAS[chosen]), float(RIDGE_ALPHAS[best])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=TSER)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--data-dir", action="append", default=None)
    parser.add_argument("--candidate", default="short-segments-ridge")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", default=None, help="append one JSON line per (set, seed) to this file")
    args = parser.parse_args(argv)
    import torch

    from eadct.tables import subset

    if args.threads:
        torch.set_num_threads(args.threads)
    print("| dataset | seed | hold-out | leave-one-out | strength | validation | strength | validation series |"
          " one standard error | strength | ratio | fit s |")  # fmt: skip
    print("|---" * 12 + "|")
    for name in args.datasets:
        loaded = _load_train(name, args.data_dir or ["../shared/datasets/TSER"])
        if loaded is None:
            print(f"| {name} | not found |" + " |" * 10)
            continue
        X, y = loaded[0], np.asarray(loaded[1], dtype=float)
        for seed in args.seeds:
            est, fit, held, fit_s = fit_candidate(name, args.candidate, X, y, seed)
            loo = _rmse(y[held], est.predict(subset(X, held)))
            targets = (y[fit] - est.target_mean_[0]) / est.target_scale_[0]
            fit_features, held_features = est.transform(subset(X, fit)), est.transform(subset(X, held))
            row = dict(dataset=name, seed=seed, n_holdout=len(held), loo=loo,
                       loo_alpha=float(est.head_alpha_.ravel()[0]), fit_s=fit_s)  # fmt: skip
            train, valid = fit_split(est, len(fit))
            if len(valid):
                predict, alpha = validation_ridge(fit_features, targets, train, valid)
                pred = predict(held_features) * est.target_scale_[0] + est.target_mean_[0]
                row.update(validation=_rmse(y[held], pred), validation_alpha=alpha, n_valid=len(valid))
            predict, alpha, loo_check = one_se_ridge(fit_features, targets)
            pred = predict(held_features) * est.target_scale_[0] + est.target_mean_[0]
            row.update(one_se=_rmse(y[held], pred), one_se_alpha=alpha, loo_alpha_check=loo_check)
            validation = [f"{row['validation']:.4g}", f"{row['validation_alpha']:.3g}"] if len(valid) else ["-", "-"]
            cells = [f"{loo:.4g}", f"{row['loo_alpha']:.3g}", *validation, str(len(valid)), f"{row['one_se']:.4g}",
                     f"{alpha:.3g}", f"{row['one_se'] / loo:.3f}", f"{fit_s:.0f}"]  # fmt: skip
            print(f"| {name} | {seed} | {len(held)} | " + " | ".join(cells) + " |", flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
