"""Would a per-set choice of the regressor's input treatment, made on TRAIN, pick the right one? A diagnostic.

``input_differences=True`` takes Tecator's hold-out RMSE to about a third and loses on most other sets
(docs/accuracy.md, "Candidate: first differences in the input"). A regressor could choose per set by fitting both
on part of TRAIN and keeping the one with the lower error on the rest. This measures that choice on the screen's
splits (benchmarks/screen_defaults.py) without building it: for each (set, seed)

1. the screen's split of TRAIN into a fitted part and a hold-out (``inner_split``, a third held out);
2. the same split again inside the fitted part: both candidates fitted on its two thirds and scored on its third
   (the "inner" RMSE, what a regressor could see when it chooses);
3. both candidates fitted on the whole fitted part and scored on the hold-out (the "outer" RMSE, what the choice
   would give), exactly the screen's rows: stored rows of ``--results`` are reused where they exist.

The TEST file is never opened. Each finished (set, seed) is appended to ``--out`` at once; a rerun of the same
command skips it. The table printed: per (set, seed) both inner and outer RMSEs, the inner choice, and the outer
RMSE ratio of the choice to the defaults; then the geometric mean of that ratio and its wins / ties / losses.
``--margin m`` chooses the differences only where their inner RMSE is below ``m`` times the defaults' (the table
only: every row stores both inner RMSEs).

    python benchmarks/treatment_selection.py --datasets Tecator Covid3Month --seeds 0 --threads 1 \\
        --data-dir ../shared/datasets/TSER --results results/screen/base_lane02.jsonl --out results/treatment.jsonl
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
from screen_defaults import _load_train, _run_one, inner_split, read_results

from eadct.tables import append_jsonl, subset

#: The regressor's defaults on the screen's splits of the small TSER sets (the step cap binds on none of them),
#: and the same with each channel's first differences in the input.
DEFAULTS, DIFFERENCES = "short-segments-ridge-swa20", "short-segments-ridge-swa20-diff"


def inner_results(name: str, X, y, seed: int, candidates) -> dict:
    """Each candidate's screen row on the inner split: fitted on two thirds of the screen's fitted part of TRAIN
    (X, y), scored on its last third (``inner_split`` by ``seed`` twice)."""
    fit_idx, _ = inner_split(np.asarray(y), 1 / 3, seed, False)
    X_fit, y_fit = subset(X, fit_idx), np.asarray(y)[fit_idx]
    return {candidate: _run_one(name, candidate, X_fit, y_fit, seed, 1 / 3) for candidate in candidates}


def measure(name: str, X, y, seed: int, stored: dict) -> dict:
    """Inner and outer hold-out RMSEs of both candidates on dataset ``name``'s TRAIN (X, y), split by ``seed``."""
    row = dict(dataset=name, seed=seed)
    inner = inner_results(name, X, y, seed, (DEFAULTS, DIFFERENCES))
    for candidate in (DEFAULTS, DIFFERENCES):
        row[f"inner {candidate}"] = inner[candidate]["score"]
        outer = stored.get((candidate, name, seed))
        if outer is None:
            outer = _run_one(name, candidate, X, y, seed, 1 / 3)["score"]
        row[f"outer {candidate}"] = outer
    row["chosen"] = choice(row)
    return row


def choice(row: dict, margin: float = 1.0) -> str:
    """The treatment chosen on the inner split: the differences where their inner RMSE is below ``margin`` times
    the defaults' (1: whichever is lower), else the defaults."""
    return DIFFERENCES if row[f"inner {DIFFERENCES}"] < margin * row[f"inner {DEFAULTS}"] else DEFAULTS


def table(rows: list[dict], margin: float = 1.0) -> str:
    """The per-(set, seed) table and the summary line of the choice (``choice`` with ``margin``) against the
    defaults."""
    lines = ["| dataset | seed | inner: defaults / differences | outer: defaults / differences | chosen | "
             "outer ratio to the defaults |", "|---|---|---|---|---|---|"]  # fmt: skip
    logs = []
    for r in rows:
        inner_d, outer_d = (r[f"{k} {DEFAULTS}"] for k in ("inner", "outer"))
        inner_f, outer_f = (r[f"{k} {DIFFERENCES}"] for k in ("inner", "outer"))
        chosen = choice(r, margin)
        ratio = (outer_f if chosen == DIFFERENCES else outer_d) / outer_d
        logs.append(math.log(ratio))
        chosen = "differences" if chosen == DIFFERENCES else "defaults"
        lines.append(f"| {r['dataset']} | {r['seed']} | {inner_d:.4g} / {inner_f:.4g} | {outer_d:.4g} / {outer_f:.4g} "
                     f"| {chosen} | {ratio:.3f} |")  # fmt: skip
    if logs:
        wins, losses = sum(v < -1e-3 for v in logs), sum(v > 1e-3 for v in logs)
        lines.append(f"\nThe choice against the defaults over {len(logs)} (set, seed) pairs: geometric-mean RMSE ratio "
                     f"{math.exp(np.mean(logs)):.3f}, {wins} / {len(logs) - wins - losses} / {losses} "
                     "(wins / ties / losses).")  # fmt: skip
    return "\n".join(lines)


def main(argv=None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", required=True)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data-dir", action="append", required=True)
    parser.add_argument("--results", nargs="*", default=[], help="stored screen rows to reuse (JSON lines)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--margin", type=float, default=1.0, help="differences only below this times the defaults' inner RMSE"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    stored = {(r["candidate"], r["dataset"], r["seed"]): r["score"] for f in args.results for r in read_results(f)}
    done = {(r["dataset"], r["seed"]) for r in read_results(args.out)} if args.out.exists() else set()
    for name in args.datasets:
        loaded = _load_train(name, args.data_dir)
        if loaded is None:
            raise SystemExit(f"{name}: no TRAIN file under {args.data_dir}")
        for seed in args.seeds:
            if (name, seed) not in done:
                append_jsonl(args.out, measure(name, *loaded, seed, stored))
    print(table(read_results(args.out), args.margin))


if __name__ == "__main__":
    main()
