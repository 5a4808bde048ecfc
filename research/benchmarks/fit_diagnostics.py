"""Does a default fit underfit or overfit? Training and hold-out score of a few parameter sets on one dataset.

The TRAIN file only, split as the screen splits it (``screen_defaults.inner_split``: a third held out); each
parameter set (a Python dict literal on top of the estimator's defaults) is fitted on the rest. One line per
set: fit time, score on the series it trained on, score on the hold-out, fine-tuning epochs run and the best
(or last) one, and the median seconds per pretraining and per fine-tuning epoch (what a setting costs, apart
from how many epochs it runs). A training score close to the hold-out score, with the best epoch at the end of
the run, says the model underfits.

    python benchmarks/fit_diagnostics.py Tecator "{}" "dict(dropout=0.0)" --data-dir ../shared/datasets/TSER
"""

from __future__ import annotations

import argparse
import ast
import time

import numpy as np
import torch
from screen_defaults import DEFAULT_DIRS, _load_train, inner_split

from eadct import EADCTClassifier, EADCTRegressor
from eadct.tables import score, subset


def _params(text: str) -> dict:
    tree = ast.parse(text, mode="eval").body
    if isinstance(tree, ast.Call) and getattr(tree.func, "id", None) == "dict" and not tree.args:
        return {k.arg: ast.literal_eval(k.value) for k in tree.keywords}
    return dict(ast.literal_eval(text))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dataset")
    parser.add_argument("params", nargs="+", help='parameter sets: "{}" (the defaults), "dict(dropout=0.0)", ...')
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", action="append", default=None)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    data = _load_train(args.dataset, args.data_dir or DEFAULT_DIRS)
    if data is None:
        raise SystemExit(f"{args.dataset}: not found in {args.data_dir or DEFAULT_DIRS}")
    X, y = data
    y = np.asarray(y)
    classification = not np.issubdtype(y.dtype, np.floating)
    task = "classification" if classification else "regression"
    fit_idx, held_idx = inner_split(y, 1 / 3, args.seed, classification)
    cls = EADCTClassifier if classification else EADCTRegressor
    print(
        f"{args.dataset}: {len(fit_idx)} series fit, {len(held_idx)} held out, seed {args.seed}, "
        f"{args.threads} thread(s)"
    )
    print(
        "| params | fit s | train score | hold-out score | fine-tuning epochs | best epoch "
        "| s per epoch (pretraining / fine-tuning) |\n|---|---|---|---|---|---|---|"
    )
    for text in args.params:
        params = _params(text)
        est = cls(random_state=args.seed, missing_values="interpolate", **params)
        tic = time.perf_counter()
        est.fit(subset(X, fit_idx), y[fit_idx])
        fit_s = time.perf_counter() - tic
        train = score(task, y[fit_idx], est.predict(subset(X, fit_idx)))
        held = score(task, y[held_idx], est.predict(subset(X, held_idx)))
        tuned = [r for r in est.history_ if r["stage"] == "finetune"]
        best = [r["epoch"] for r in tuned if r.get("best")]
        print(
            f"| {params} | {fit_s:.0f} | {train:.4g} | {held:.4g} | {len(tuned)} | {best[-1] if best else '-'} | "
            f"{_epoch_seconds(est.history_, 'pretrain')} / {_epoch_seconds(est.history_, 'finetune')} |",
            flush=True,
        )


def _epoch_seconds(history: list[dict], stage: str) -> str:
    """The median seconds of the stage's epochs in a fit's ``history_``, or "-" when it ran none."""
    times = [r["time_s"] for r in history if r["stage"] == stage and "time_s" in r]
    return f"{np.median(times):.2f}" if times else "-"


if __name__ == "__main__":
    main()
