"""How long does a default fit take on each shared set? The issue's 5-minute target, set by set, in one run.

Fits ``EADCTClassifier(random_state=0)`` / ``EADCTRegressor(random_state=0)`` on each set's TRAIN and scores TEST,
one set after another in this process, with every core it may use (``eadct.demo.run``, the main job's settings).
The main job (JapaneseVowels, bundled) runs first and last as the run's reference: this machine's speed drifts by
up to 2x within a day (docs/benchmarks.md), so each fit is also given as a ratio to the mean of those two fits,
measured in the same run. Run it alone: a second CPU-bound process makes every fit slower.

Each finished fit is one JSON line in ``--out``; a rerun with the same settings skips it (a killed run resumes).

    python benchmarks/default_fit_times.py --data-dir ../shared/datasets/UEA --data-dir ../shared/datasets/TSER \\
        --out results/default_fit_times.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from main_job import _settings

from eadct.datasets import DatasetNotFoundError, find_ts_file
from eadct.demo import run

REFERENCE = "JapaneseVowels"
SHARED = ["ArticularyWordRecognition", "AtrialFibrillation", "BasicMotions", "ERing", "Epilepsy", "FingerMovements",
          "Handwriting", "Libras", "UWaveGestureLibrary", "BitcoinSentiment", "CardanoSentiment", "Covid3Month",
          "Tecator", "ChilledWaterPredictor", "FloodModeling1", "StandWalkJump"]  # fmt: skip
#: The issue's target for each default fit (StandWalkJump excepted: the table says what it takes).
TARGET_S = 300.0


def _folder(name: str, dirs: list[str]):
    """The first of ``dirs`` that holds ``name``'s TRAIN file (``find_ts_file``, no data read; a copy found only by
    its fallbacks, sktime's bundled one or the cache, does not count); None: none does."""
    for d in dirs:
        try:
            if Path(find_ts_file(name, "train", d)).resolve().is_relative_to(Path(d).resolve()):
                return d
        except DatasetNotFoundError:
            continue
    return None


def table(rows: list[dict]) -> str:
    refs = [r["fit_s"] for r in rows if r["role"].startswith("reference")]
    ref = sum(refs) / len(refs) if refs else float("nan")
    lines = [f"Reference: the main job's fit ({REFERENCE}), {len(refs)} time(s) in the run: "
             + ", ".join(f"{s:.1f} s" for s in refs) + f" (mean {ref:.1f} s).\n",
             "| dataset | TRAIN series | fit (s) | x reference | score (TEST) | within 5 minutes |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        score = f"accuracy {r['test_accuracy']:.4f}" if "test_accuracy" in r else f"RMSE {r['test_rmse']:.4g}"
        within = (
            "(not a target)" if r["dataset"] == "StandWalkJump" else ("yes" if r["fit_s"] <= TARGET_S else "**no**")
        )
        lines.append(f"| {r['dataset']}{' (reference)' if r['role'].startswith('reference') else ''} | "
                     f"{r['n_train']} | {r['fit_s']:.1f} | {r['fit_s'] / ref:.2f} | {score} | {within} |")  # fmt: skip
    targets = [r for r in rows if r["role"] == "set" and r["dataset"] != "StandWalkJump"]
    if targets:
        slowest = max(targets, key=lambda r: r["fit_s"])
        lines.append(f"\n{sum(r['fit_s'] <= TARGET_S for r in targets)} of {len(targets)} target fits within "
                     f"{TARGET_S:.0f} s; the slowest, {slowest['dataset']}, {slowest['fit_s']:.1f} s "
                     f"({slowest['fit_s'] / ref:.2f} x the reference).")  # fmt: skip
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=SHARED)
    parser.add_argument("--data-dir", action="append", default=[])
    parser.add_argument("--out", type=Path, default=Path("results/default_fit_times.jsonl"))
    args = parser.parse_args(argv)
    settings = _settings({})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(x) for x in args.out.read_text().splitlines() if x.strip()] if args.out.exists() else []
    rows = [r for r in rows if r["settings"] == settings]
    done = {(r["role"], r["dataset"]) for r in rows}
    plan = [("reference-start", REFERENCE)] + [("set", n) for n in args.datasets] + [("reference-end", REFERENCE)]
    for role, name in plan:
        if (role, name) in done:
            continue
        folder = None if name == REFERENCE else _folder(name, args.data_dir)
        if name != REFERENCE and folder is None:
            print(f"{name}: not under {args.data_dir}, skipped", flush=True)
            continue
        rec = run(name, folder, random_state=0)
        rec.update(role=role, settings=settings, finished=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()))
        with args.out.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
        rows.append(rec)
        print(f"{name} ({role}): fit {rec['fit_s']:.1f} s", flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
