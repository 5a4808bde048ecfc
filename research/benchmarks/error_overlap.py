"""Which TEST series the default classifier misses, beside MiniRocket's misses: a diagnostic of a gap.

For one classification set, each seed fits ``EADCTClassifier()`` (the defaults) and the tables' MiniRocket row on
TRAIN and predicts TEST. Prints, over the seeds: each model's accuracy; the TEST series that both miss, that only
ours misses, that only MiniRocket misses; and the true class -> predicted class pairs of our misses, most frequent
first, beside MiniRocket's count of the same pairs. It chooses nothing (TEST is read to explain a known gap, not to
select); each seed's predictions are one JSON line in ``--out``, so a killed run resumes.

    python benchmarks/error_overlap.py --dataset UWaveGestureLibrary --seeds 0 1 2 --data-dir ../shared/datasets/UEA
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np
import torch

from eadct import EADCTClassifier
from eadct.tables import append_jsonl, fit_minirocket, load_data, read_jsonl


def fit_seed(data, seed: int, n_jobs: int) -> dict:
    """One seed's TEST predictions of both models (labels as strings, for JSON)."""
    ours = EADCTClassifier(random_state=seed, n_jobs=n_jobs).fit(data.X_train, data.y_train).predict(data.X_test)
    mini = fit_minirocket(data, seed)[0]
    return {"seed": seed, "ours": [str(v) for v in ours], "minirocket": [str(v) for v in mini]}


def summarise(rows: list[dict], y_test) -> list[str]:
    """The Markdown lines of the report: accuracies, the overlap of the misses, our most frequent confusions."""
    truth = np.array([str(v) for v in y_test])
    lines = [
        "| seed | ours | MiniRocket | both miss | only ours misses | only MiniRocket misses |",
        "|---|---|---|---|---|---|",
    ]
    ours_pairs, mini_pairs = Counter(), Counter()
    for row in rows:
        ours, mini = np.array(row["ours"]), np.array(row["minirocket"])
        o, m = ours != truth, mini != truth
        lines.append(f"| {row['seed']} | {1 - o.mean():.4f} | {1 - m.mean():.4f} | {int((o & m).sum())} | "
                     f"{int((o & ~m).sum())} | {int((~o & m).sum())} |")  # fmt: skip
        ours_pairs.update(zip(truth[o], ours[o], strict=True))
        mini_pairs.update(zip(truth[m], mini[m], strict=True))
    lines += ["", f"Our misses over {len(rows)} seed(s) by (true class -> predicted class), beside MiniRocket's:", "",
              "| true -> predicted | ours | MiniRocket |", "|---|---|---|"]  # fmt: skip
    for (t, p), count in ours_pairs.most_common(10):
        lines.append(f"| {t} -> {p} | {count} | {mini_pairs[(t, p)]} |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="UWaveGestureLibrary")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--data-dir", action="append", required=True)
    parser.add_argument("--threads", type=int, default=1, help="1: as the benchmark lanes, whose units it repeats")
    parser.add_argument("--out", default=None, help="default results/error_overlap_<dataset>.jsonl")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    data = load_data(args.dataset, args.data_dir)
    if data is None or data.task != "classification":
        raise SystemExit(f"{args.dataset}: not a classification set under {args.data_dir}")
    out = Path(args.out or f"results/error_overlap_{args.dataset}.jsonl")
    done = {r["seed"]: r for r in read_jsonl(out)} if out.exists() else {}
    for seed in args.seeds:
        if seed not in done:
            done[seed] = fit_seed(data, seed, args.threads)
            append_jsonl(out, done[seed])
            print(f"seed {seed} fitted", flush=True)
    print(f"# {args.dataset}: where the default classifier and MiniRocket miss ({len(data.y_test)} TEST series)\n")
    print("\n".join(summarise([done[s] for s in args.seeds], data.y_test)))


if __name__ == "__main__":
    main()
