"""Would a kernel ridge proxy choose the regressor's input treatment as the full-length fits do? Step 1 of a rule.

The rule and the proxy are in docs/accuracy.md ("Candidate default: the treatment chosen by a kernel ridge proxy");
the proxy now lives in the package, where ``input_differences="auto"`` consults it before its network fits.
For each (set, seed) row that benchmarks/treatment_selection.py stored (``--stored``: the inner RMSEs of the
full-length fits without and with the input's differences, and the screen hold-out's RMSEs of both), the proxy
chooses on the screen's fitted part of TRAIN (``inner_split``, a third held out), where the full-length fits chose on
an inner split of that part. ``--extra-datasets`` adds sets with no stored row (the proxy's choice only, on the
fitted parts of ``--seeds``): seeds 0-5 of the large sets, where the full-length fits were not run, and fresh
splits (seeds above 5), compared with the choice the full-length fits made on every split so far
(``EXPECTED_DIFFERENCES``). ``--margin`` sets the proxy's margin (default the network's). TRAIN only; nothing is
trained, so nothing is stored: the whole table takes seconds.

    python benchmarks/treatment_proxy_choice.py --stored results/treatment_lane02.jsonl \\
        results/treatment_lane13.jsonl results/treatment_margin_lane4.jsonl results/treatment_margin_lane5.jsonl \\
        --extra-datasets FloodModeling1 ChilledWaterPredictor --seeds 0 1 2 3 4 5 --data-dir ../shared/datasets/TSER
    python benchmarks/treatment_proxy_choice.py --margin 0.8 --extra-datasets Tecator Covid3Month \\
        BitcoinSentiment CardanoSentiment FloodModeling1 ChilledWaterPredictor --seeds 6 7 ... 25 --data-dir ...
    python benchmarks/treatment_proxy_choice.py --all-train --margin 0.8 --extra-datasets Tecator ... --data-dir ...
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from screen_defaults import _load_train, inner_split, read_results
from treatment_selection import DEFAULTS, DIFFERENCES

from eadct.estimators import TREATMENT_MARGIN as MARGIN
from eadct.estimators import treatment_proxy_scores
from eadct.tables import subset

#: The sets on which the full-length fits chose the differences on every split where they ran (docs/accuracy.md:
#: Tecator 9 of 9; every other shared TSER set kept the defaults' treatment on every split, 29 of 29).
EXPECTED_DIFFERENCES = {"Tecator"}


def proxy_choice(X, y, margin: float = MARGIN) -> dict:
    """The proxy's scores without and with the differences (``eadct.estimators.treatment_proxy_scores``, the one
    that ``input_differences="auto"`` consults), and its choice with ``margin``."""
    tic = time.perf_counter()
    scores = treatment_proxy_scores(X, y)
    if scores is None:
        return dict(chosen=False, without=None, with_=None, seconds=time.perf_counter() - tic)
    without, with_ = scores
    return dict(chosen=with_ < margin * without, without=without, with_=with_, seconds=time.perf_counter() - tic)


def all_train(names, data_dirs, margin: float) -> None:
    """The proxy's choice on all of TRAIN of each set: the one ``input_differences="auto"`` makes before any network
    fit, whatever the seed."""
    print("| dataset | series | proxy LOO RMSE: without / with (ratio) | chosen | seconds |\n|---|---|---|---|---|")
    for name in names:
        X, y = _load_train(name, data_dirs)
        p = proxy_choice(X, np.asarray(y), margin)
        ratio = p["with_"] / p["without"] if p["without"] else math.nan
        print(f"| {name} | {len(y)} | {p['without']:.4f} / {p['with_']:.4f} ({ratio:.3f}) | "
              f"{'differences' if p['chosen'] else 'defaults'} | {p['seconds']:.2f} |")  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stored", nargs="*", default=[], help="rows of benchmarks/treatment_selection.py")
    parser.add_argument("--extra-datasets", nargs="*", default=[], help="sets with no stored row")
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2, 3, 4, 5], help="for --extra-datasets")
    parser.add_argument("--data-dir", action="append", required=True)
    parser.add_argument("--margin", type=float, default=MARGIN, help="the proxy's margin")
    parser.add_argument("--all-train", action="store_true", help="score all of TRAIN of --extra-datasets, no seeds")
    args = parser.parse_args(argv)
    if args.all_train:
        return all_train(args.extra_datasets, args.data_dir, args.margin)
    stored = [r for f in args.stored for r in read_results(f)]
    names = sorted({r["dataset"] for r in stored}) + list(args.extra_datasets)
    loaded = {name: _load_train(name, args.data_dir) for name in names}
    pairs = [(r["dataset"], r["seed"], r) for r in stored] + [
        (n, s, None) for n in args.extra_datasets for s in args.seeds
    ]
    print("| dataset | seed | series | proxy LOO RMSE: without / with (ratio) | chosen: proxy / full-length | "
          "hold-out ratio, proxy choice | seconds |\n|---|---|---|---|---|---|---|")  # fmt: skip
    agree = {"Tecator": [0, 0], "other small": [0, 0], "large (defaults kept)": [0, 0], "fresh, Tecator": [0, 0],
             "fresh, other sets": [0, 0]}  # fmt: skip
    logs = []
    name_of = lambda c: "differences" if c else "defaults"  # noqa: E731
    for name, seed, row in sorted(pairs, key=lambda p: (p[0], p[1])):
        X, y = loaded[name]
        fit_idx, _ = inner_split(np.asarray(y), 1 / 3, seed, False)
        p = proxy_choice(subset(X, fit_idx), np.asarray(y)[fit_idx], args.margin)
        ratio = p["with_"] / p["without"] if p["without"] else math.nan
        if row is None and seed > 5:  # a fresh split: the choice the full-length fits made on every split
            full, outer = name in EXPECTED_DIFFERENCES, "-"
            group = agree["fresh, Tecator" if name == "Tecator" else "fresh, other sets"]
            group[0] += full == p["chosen"]
        elif row is None:
            full, outer = None, "-"
            group = agree["large (defaults kept)"]
            group[0] += not p["chosen"]
        else:
            full = row[f"inner {DIFFERENCES}"] < MARGIN * row[f"inner {DEFAULTS}"]
            r = row[f"outer {DIFFERENCES}"] / row[f"outer {DEFAULTS}"] if p["chosen"] else 1.0
            logs.append(math.log(r))
            outer = f"{r:.3f}"
            group = agree["Tecator" if name == "Tecator" else "other small"]
            group[0] += full == p["chosen"]
        group[1] += 1
        full_txt = "-" if full is None else name_of(full) + (" (expected)" if row is None else "")
        print(f"| {name} | {seed} | {len(fit_idx)} | {p['without']:.4f} / {p['with_']:.4f} ({ratio:.3f}) | "
              f"{name_of(p['chosen'])} / {full_txt} | {outer} | {p['seconds']:.2f} |")  # fmt: skip
    print()
    for group, (hit, n) in agree.items():
        what = "keeps the defaults' treatment" if group.startswith("large") else "equals the full-length choice"
        if n:
            print(f"- {group}: the proxy (margin {args.margin}) {what} on {hit} of {n} pairs")
    if logs:
        print(f"- the proxy's choice against the defaults on the screen's hold-outs: geometric-mean RMSE ratio "
              f"{math.exp(np.mean(logs)):.3f} over {len(logs)} pairs")  # fmt: skip


if __name__ == "__main__":
    main()
