"""Would short fits (a third of the epochs) choose the regressor's input treatment as the full-length fits do?

Step 1 of the rule in docs/accuracy.md ("Candidate default: the treatment chosen by short fits"). For each (set,
seed) row that benchmarks/treatment_selection.py stored (``--stored``: its inner RMSEs of the full-length fits
without and with the input's differences, and the screen hold-out's RMSEs of both), it splits the screen's fitted
part the same way again and fits the two short candidates on the inner two thirds, scoring them on the inner third.
Both choices use the margin of ``eadct.estimators.TREATMENT_MARGIN``. TRAIN only; each finished (set, seed) is
appended to ``--out`` at once and a rerun skips it. The table printed: per (set, seed) both inner ratios (with to
without), both choices, and the hold-out ratio to the defaults that the short choice would give; then the count of
agreements, on Tecator and elsewhere, and the geometric mean of the short choice's hold-out ratios.

    python benchmarks/treatment_short_choice.py --stored results/treatment_lane02.jsonl \\
        results/treatment_lane13.jsonl results/treatment_margin_lane4.jsonl results/treatment_margin_lane5.jsonl \\
        --threads 1 --data-dir ../shared/datasets/TSER --out results/treatment_short.jsonl [--datasets Tecator]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
from screen_defaults import _load_train, read_results
from treatment_selection import DEFAULTS, DIFFERENCES, inner_results

from eadct.estimators import TREATMENT_MARGIN as MARGIN
from eadct.tables import append_jsonl

SHORT, SHORT_DIFFERENCES = "short-segments-ridge-swa20-third", "short-segments-ridge-swa20-third-diff"


def measure(stored: dict, X, y) -> dict:
    """The short fits' inner RMSEs on the inner split of ``stored``'s (set, seed), beside the stored row."""
    name, seed = stored["dataset"], stored["seed"]
    row = dict(dataset=name, seed=seed, **{k: v for k, v in stored.items() if k.startswith(("inner ", "outer "))})
    for candidate, result in inner_results(name, X, y, seed, (SHORT, SHORT_DIFFERENCES)).items():
        row[f"inner {candidate}"], row[f"fit_s {candidate}"] = result["score"], result["fit_s"]
    return row


def choices(row: dict) -> tuple[bool, bool]:
    """(full-length, short) choices of the differences, each with the margin."""
    full = row[f"inner {DIFFERENCES}"] < MARGIN * row[f"inner {DEFAULTS}"]
    return full, row[f"inner {SHORT_DIFFERENCES}"] < MARGIN * row[f"inner {SHORT}"]


def table(rows: list[dict]) -> str:
    lines = ["| dataset | seed | inner ratio: full / short | chosen: full / short | hold-out ratio, short choice |",
             "|---|---|---|---|---|"]  # fmt: skip
    agree = {"Tecator": [0, 0], "other": [0, 0]}
    logs = []
    for r in rows:
        full, short = choices(r)
        ratio = r[f"outer {DIFFERENCES}"] / r[f"outer {DEFAULTS}"] if short else 1.0
        logs.append(math.log(ratio))
        group = agree["Tecator" if r["dataset"] == "Tecator" else "other"]
        group[0] += full == short
        group[1] += 1
        name = lambda c: "differences" if c else "defaults"  # noqa: E731
        lines.append(f"| {r['dataset']} | {r['seed']} | {r[f'inner {DIFFERENCES}'] / r[f'inner {DEFAULTS}']:.3f} / "
                     f"{r[f'inner {SHORT_DIFFERENCES}'] / r[f'inner {SHORT}']:.3f} | {name(full)} / {name(short)} | "
                     f"{ratio:.3f} |")  # fmt: skip
    if logs:
        (tec, n_tec), (other, n_other) = agree["Tecator"], agree["other"]
        lines.append(f"\nThe short choice equals the full-length one on {tec} of {n_tec} Tecator pairs and {other} of "
                     f"{n_other} others; its hold-out RMSE against the defaults: geometric-mean ratio "
                     f"{math.exp(np.mean(logs)):.3f} over {len(logs)} pairs.")  # fmt: skip
    return "\n".join(lines)


def main(argv=None) -> None:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stored", nargs="+", required=True, help="rows of benchmarks/treatment_selection.py")
    parser.add_argument("--datasets", nargs="*", help="only these sets")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data-dir", action="append", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    stored = [r for f in args.stored for r in read_results(f) if not args.datasets or r["dataset"] in args.datasets]
    done = {(r["dataset"], r["seed"]) for r in read_results(args.out)} if args.out.exists() else set()
    loaded = {}
    for row in stored:
        if (row["dataset"], row["seed"]) in done:
            continue
        if row["dataset"] not in loaded:
            loaded[row["dataset"]] = _load_train(row["dataset"], args.data_dir)
        append_jsonl(args.out, measure(row, *loaded[row["dataset"]]))
    print(table(read_results(args.out)))


if __name__ == "__main__":
    main()
