"""Would a ridge refit of the classifier's head read its representation better? The screen's TRAIN hold-outs.

For each UEA set and seed, the TRAIN file only, split as the screen splits it (``screen_defaults.inner_split``: a
stratified third held out): ``EADCTClassifier`` with the screen's candidate parameters (``--candidate``; the
defaults are ``short-segments-all-swa20-b8-seg8``) is fitted on the fitted part, then the hold-out is scored
three ways:

- "network": the fitted classifier's own predictions (its hold-out accuracy is the screen's row of the candidate);
- "ridge": a ridge classifier (scikit-learn's ``RidgeClassifierCV``, strength by leave-one-out among the
  regressor's ``RIDGE_ALPHAS``) on the standardised representation that the head's linear layer reads, GELU of
  ``transform``, fitted on the fitted part: the closed-form refit that made the regressor's gain
  (docs/accuracy.md, "Candidate: a ridge refit of the regressor's head");
- "MiniRocket": the tables' MiniRocket row fitted on the fitted part, for scale.

It also prints the network's accuracy on the part it was fitted on (how separable that representation is on
the series it trained on). Nothing here opens a TEST file. One process; two seeds side by side with
``--threads 1`` each.

    python benchmarks/classifier_head_holdout.py --data-dir ../shared/datasets/UEA --seeds 0 --threads 1
"""

from __future__ import annotations

import argparse
import json
import warnings
from types import SimpleNamespace

import numpy as np
from regression_holdout import _standardised
from screen_defaults import _load_train, fit_candidate

#: The screen's five classification sets (docs/accuracy.md, "How the defaults were chosen").
SCREEN_SETS = ["ERing", "JapaneseVowels", "Libras", "Handwriting", "UWaveGestureLibrary"]


def ridge_scores(train: np.ndarray, y_train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, float]:
    """Predicted labels of ``test`` by a ridge classifier on features standardised on ``train``; its strength."""
    from sklearn.linear_model import RidgeClassifierCV

    from eadct.estimators import RIDGE_ALPHAS

    train, test = _standardised(train, test)
    ridge = RidgeClassifierCV(alphas=RIDGE_ALPHAS).fit(train, y_train)
    return ridge.predict(test), float(ridge.alpha_)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=SCREEN_SETS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--data-dir", action="append", default=None)
    parser.add_argument("--candidate", default="short-segments-all-swa20-b8-seg8")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--minirocket", action="store_true", help="also fit MiniRocket on the fitted part")
    parser.add_argument("--json", default=None, help="append one JSON line per (set, seed) to this file")
    args = parser.parse_args(argv)
    import torch

    from eadct.tables import fit_minirocket, subset

    if args.threads:
        torch.set_num_threads(args.threads)
    print("| dataset | seed | hold-out | network (fitted part) | network | ridge | ridge strength | MiniRocket |"
          " fit s |")  # fmt: skip
    print("|---" * 9 + "|")
    for name in args.datasets:
        loaded = _load_train(name, args.data_dir or ["../shared/datasets/UEA"])
        if loaded is None:
            print(f"| {name} | not found | | | | | | | |")
            continue
        X, y = loaded[0], np.asarray(loaded[1])
        for seed in args.seeds:
            est, fit, held, fit_s = fit_candidate(name, args.candidate, X, y, seed)
            gelu = torch.nn.functional.gelu
            z_fit = gelu(torch.as_tensor(est.transform(subset(X, fit)))).numpy()
            z_held = gelu(torch.as_tensor(est.transform(subset(X, held)))).numpy()
            network = float(np.mean(est.predict(subset(X, held)) == y[held]))
            on_fit = float(np.mean(est.predict(subset(X, fit)) == y[fit]))
            pred, alpha = ridge_scores(z_fit, y[fit], z_held)
            row = dict(dataset=name, seed=seed, n_holdout=len(held), network_fit=on_fit, network=network,
                       ridge=float(np.mean(pred == y[held])), ridge_alpha=alpha, fit_s=fit_s)  # fmt: skip
            if args.minirocket:
                data = SimpleNamespace(X_train=subset(X, fit), X_test=subset(X, held), y_train=y[fit],
                                       task="classification")  # fmt: skip
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    row["minirocket"] = float(np.mean(fit_minirocket(data, seed)[0] == y[held]))
                torch.set_num_threads(args.threads or torch.get_num_threads())  # numba may reset torch's threads
            cells = [f"{row['network_fit']:.3f}", f"{network:.3f}", f"{row['ridge']:.3f}", f"{alpha:.3g}",
                     f"{row['minirocket']:.3f}" if "minirocket" in row else "", f"{fit_s:.0f}"]  # fmt: skip
            print(f"| {name} | {seed} | {len(held)} | " + " | ".join(cells) + " |", flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
