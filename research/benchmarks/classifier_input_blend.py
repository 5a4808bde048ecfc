"""Would the classifier gain from a linear model of the input's coarse shape beside it? The screen's TRAIN hold-outs.

For each UEA set and seed, the TRAIN file only, split as the screen splits it (``screen_defaults.inner_split``: a
stratified third held out): ``EADCTClassifier`` with the screen's candidate parameters (``--candidate``; default:
the classifier's defaults, ``short-segments-all-swa20-b8-seg8-wide100-udiff-e40``) is fitted on the fitted part,
and beside it a multinomial logistic regression on the input's own part means (the means of ``--parts``
consecutive parts of each channel, of each series' own length, by the rule of ``eadct.networks.part_means``, and
each channel's mean over the whole series; each column standardised on the fitted part; its strength chosen by
stratified cross-validation within the fitted part). The hold-out is then scored by the network alone, the linear
model alone, and the mean of their class probabilities ``(1 - w) p_network + w p_linear`` for each ``--weights``
value. Every value comes from TRAIN; nothing here opens a TEST file.

Why (docs/accuracy.md, "Diagnostic: a linear model of the input's part means beside the classifier"): on ERing a
ridge classifier on the input's part means matched or beat the network on the screen's hold-outs, and the network's
misses move from seed to seed, so the two models' errors may differ where the network is least sure.

The network's column repeats the screen's rows of ``--candidate`` (the same fit). One JSON line per (set, seed) is
appended to ``--out`` at once (the hold-out's probabilities of both models included, so other blends can be read
off without refitting), and a rerun skips what is there.

    python benchmarks/classifier_input_blend.py --data-dir ../shared/datasets/UEA --seeds 0 2 4 6 --threads 1 \\
        --out results/screen/blend_a.jsonl
    python benchmarks/classifier_input_blend.py --report results/screen/blend_*.jsonl
    python benchmarks/classifier_input_blend.py --screen-rows results/screen/defaults_intel.jsonl \\
        --report results/screen/blend_*.jsonl

``--screen-rows OUT`` writes the network column as rows of ``benchmarks/screen_defaults.py`` (its hold-out accuracy,
and the log-loss of the stored probabilities, which are rounded to 6 decimals), so that a later screen on the same
machine type compares its candidates against these fits without fitting the defaults again.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from classifier_head_holdout import SCREEN_SETS
from screen_defaults import _load_train, fit_candidate, log_loss_of, read_results, sign_flip_p

DEFAULTS = "short-segments-all-swa20-b8-seg8-wide100-udiff-e40"
#: The blend weights scored; the rule reads 0.25, fixed before any row ran (docs/accuracy.md).
WEIGHTS = (0.1, 0.25, 0.5)


def part_features(X, n_parts: int) -> np.ndarray:
    """``(n_series, C * (n_parts + 1))``: each channel's mean over the series, then its means over ``n_parts``
    consecutive parts (step ``t`` of a series of ``L`` valid steps in part ``t * n_parts // L``; a part with no
    step, of a series shorter than ``n_parts``, is NaN). NaN steps (missing values) are left out of the means."""
    rows = []
    for x in X:
        x = np.asarray(x, dtype=float).reshape(-1, np.shape(x)[-1])
        length = x.shape[1]
        part = np.arange(length) * n_parts // length
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            means = [np.nanmean(x, axis=1)] + [np.nanmean(x[:, part == k], axis=1) for k in range(n_parts)]
        rows.append(np.stack(means, axis=1).ravel())
    return np.array(rows)


def linear_probabilities(F_fit: np.ndarray, y_fit: np.ndarray, F_held: np.ndarray, classes, seed: int):
    """Hold-out class probabilities (columns in ``classes``' order) of a multinomial logistic regression on the
    standardised features, its inverse strength ``C`` chosen by stratified k-fold accuracy within the fitted
    part (k = min(5, the smallest class's count), at least 2); and that ``C``."""
    from regression_holdout import _standardised
    from sklearn.linear_model import LogisticRegression, LogisticRegressionCV
    from sklearn.model_selection import StratifiedKFold

    F_fit, F_held = _standardised(F_fit, F_held)
    smallest = np.unique(y_fit, return_counts=True)[1].min()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if smallest >= 2:
            folds = StratifiedKFold(n_splits=min(5, int(smallest)), shuffle=True, random_state=seed)
            model = LogisticRegressionCV(Cs=np.logspace(-3, 2, 11), cv=folds, max_iter=2000).fit(F_fit, y_fit)
            C = float(model.C_[0])
        else:
            C = 1.0
            model = LogisticRegression(C=C, max_iter=2000).fit(F_fit, y_fit)
    proba = np.zeros((len(F_held), len(classes)))
    proba[:, np.searchsorted(classes, model.classes_)] = model.predict_proba(F_held)
    return proba, C


def report(paths) -> str:
    """Per (set, seed) the hold-out accuracy of each reading, then each blend against the network alone over the
    pairs: mean difference, wins / ties / losses, sign-flip p."""
    rows = [row for p in paths for row in read_results(p)]
    rows.sort(key=lambda r: (r["dataset"], r["seed"]))
    keys = ["network", "linear"] + [f"blend_{w:g}" for w in rows[0]["weights"]] if rows else []
    out = ["| dataset | seed | held out | " + " | ".join(keys) + " | C | fit s |", "|---" * (len(keys) + 5) + "|"]
    for r in rows:
        cells = [f"{r[k]:.3f}" for k in keys]
        out.append(f"| {r['dataset']} | {r['seed']} | {r['n_holdout']} | " + " | ".join(cells)
                   + f" | {r['C']:.3g} | {r['fit_s']:.0f} |")  # fmt: skip
    out += ["", f"Against the network alone over {len(rows)} (set, seed) pairs:", "",
            "| reading | mean difference | W / T / L | sign-flip p |", "|---|---|---|---|"]  # fmt: skip
    for k in keys[1:]:
        d = np.array([r[k] - r["network"] for r in rows])
        w, t, l_ = int((d > 1e-12).sum()), int((np.abs(d) <= 1e-12).sum()), int((d < -1e-12).sum())
        out.append(f"| {k} | {d.mean():+.4f} | {w} / {t} / {l_} | {sign_flip_p(d):.3g} |")
    return "\n".join(out)


def screen_rows(rows: list[dict]) -> list[dict]:
    """The network column of ``rows`` as the screen's rows (``screen_defaults._run_one``'s keys that the report
    reads): the same fits, so the screen's report compares a candidate against them pair by pair."""
    return [dict(candidate=r["candidate"], dataset=r["dataset"], seed=r["seed"], task="classification",
                 score=r["network"], log_loss=log_loss_of(r["p_network"], r["truth"]), fit_s=r["fit_s"],
                 n_holdout=r["n_holdout"], threads=r["threads"], source="classifier_input_blend")
            for r in rows]  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=SCREEN_SETS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--data-dir", action="append", default=None)
    parser.add_argument("--candidate", default=DEFAULTS)
    parser.add_argument("--parts", type=int, default=8, help="parts of each channel the linear model reads")
    parser.add_argument("--weights", nargs="+", type=float, default=list(WEIGHTS))
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--out", default="results/screen/blend.jsonl")
    parser.add_argument("--report", nargs="+", default=None, help="print the table of these JSON-lines files")
    parser.add_argument("--screen-rows", default=None, help="with --report: write the network column as screen rows")
    args = parser.parse_args(argv)
    if args.report and args.screen_rows:
        from eadct.tables import append_jsonl

        have = {(r["candidate"], r["dataset"], r["seed"]) for r in read_results(args.screen_rows)}
        rows = [row for p in args.report for row in read_results(p)]
        new = [r for r in screen_rows(rows) if (r["candidate"], r["dataset"], r["seed"]) not in have]
        for r in new:
            append_jsonl(Path(args.screen_rows), r)
        print(f"{len(new)} screen row(s) written to {args.screen_rows}")
        return
    if args.report:
        print(report(args.report))
        return
    import torch

    from eadct.tables import append_jsonl, subset

    if args.threads:
        torch.set_num_threads(args.threads)
    done = {(r["dataset"], r["seed"], r["candidate"], r["parts"]) for r in read_results(args.out)}
    for name in args.datasets:
        loaded = _load_train(name, args.data_dir or ["../shared/datasets/UEA"])
        if loaded is None:
            print(f"{name}: not found")
            continue
        X, y = loaded[0], np.asarray(loaded[1])
        F = part_features(X, args.parts)
        for seed in args.seeds:
            if (name, seed, args.candidate, args.parts) in done:
                continue
            est, fit, held, fit_s = fit_candidate(name, args.candidate, X, y, seed)
            p_net = est.predict_proba(subset(X, held))
            p_lin, C = linear_probabilities(F[fit], y[fit], F[held], est.classes_, seed)
            truth = np.searchsorted(est.classes_, y[held])

            def accuracy(p, truth=truth):
                return float(np.mean(np.argmax(p, axis=1) == truth))

            row = dict(dataset=name, seed=seed, candidate=args.candidate, parts=args.parts, n_holdout=len(held),
                       network=accuracy(p_net), linear=accuracy(p_lin), C=C, fit_s=fit_s, weights=args.weights,
                       **{f"blend_{w:g}": accuracy((1 - w) * p_net + w * p_lin) for w in args.weights},
                       truth=truth.tolist(), p_network=np.round(p_net, 6).tolist(),
                       p_linear=np.round(p_lin, 6).tolist(), threads=torch.get_num_threads())  # fmt: skip
            append_jsonl(Path(args.out), row)
            print(f"{name} seed {seed}: network {row['network']:.3f}, linear {row['linear']:.3f}, "
                  + ", ".join(f"w={w:g} {row[f'blend_{w:g}']:.3f}" for w in args.weights)
                  + f" (fit {fit_s:.0f} s)", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
