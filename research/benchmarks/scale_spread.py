"""Which sets does ``wide_scales`` act on? Per set, the widest spread of a channel's series' scales on TRAIN.

For each set only the TRAIN file is read (no fit, no score): per channel, the ratio of the 90th to the 10th
percentile of the series' standard deviations (``eadct.estimators.scale_spread``), and the largest over the
channels. ``wide_scales`` logs a channel and reads each series standardised by its own level and spread where that
ratio passes its threshold (``eadct.estimators.spread_threshold``): ``EADCTClassifier``'s default, 10^2, and
``"auto"``'s, ``eadct.estimators.SCALE_SPREAD`` (the regressor's and the representation's opt-in); elsewhere the fit is
the fit without the option. The shared sets (``--data-dir``) and the classification sets that ship with sktime and
aeon (the ``unseen`` table's; aeon's three with ``--data-dir <site-packages>/aeon/datasets/data``).

    python benchmarks/scale_spread.py --data-dir ../shared/datasets/UEA --data-dir ../shared/datasets/TSER
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from eadct import EADCTClassifier
from eadct.datasets import DatasetNotFoundError, load_dataset
from eadct.estimators import SCALE_SPREAD, scale_spread, spread_threshold, to_panel

SHARED = ["ArticularyWordRecognition", "AtrialFibrillation", "BasicMotions", "ERing", "Epilepsy", "FingerMovements",
          "Handwriting", "JapaneseVowels", "Libras", "StandWalkJump", "UWaveGestureLibrary", "BitcoinSentiment",
          "CardanoSentiment", "ChilledWaterPredictor", "Covid3Month", "FloodModeling1", "Tecator"]  # fmt: skip
#: The classification sets that ship with sktime and aeon and are not shared sets (the ``unseen`` table's).
BUNDLED = ["ACSF1", "ArrowHead", "GunPoint", "ItalyPowerDemand", "OSULeaf", "PLAID", "PickupGestureWiimoteZ",
           "UnitTest", "Covid3Month_disc"]  # fmt: skip
#: The thresholds the table marks: the classifier's default, then "auto"'s.
THRESHOLDS = {"EADCTClassifier()": spread_threshold(EADCTClassifier().wide_scales), '"auto"': SCALE_SPREAD}


def spread_row(name: str, X) -> dict:
    """The table's row of set ``name`` (TRAIN's ``X``): channels, series, the widest channel's spread."""
    spread = scale_spread(to_panel(X, missing_values="interpolate"))
    widest = int(np.argmax(spread))
    return dict(dataset=name, channels=len(spread), series=len(X), widest=widest, spread=float(spread[widest]),
                acts={k: bool((spread > t).any()) for k, t in THRESHOLDS.items()})  # fmt: skip


def table(rows: list[dict]) -> str:
    marks = [f"{k} (10^{math.log10(t):.2f})" for k, t in THRESHOLDS.items()]
    lines = ["`wide_scales` acts where a channel's spread passes its threshold: " + ", ".join(marks) + ".\n",
             "| dataset | channels | TRAIN series | widest channel | its spread (log10) | "
             + " | ".join(f"acts: {m}" for m in marks) + " |",
             "|---|---|---|---|---|" + "---|" * len(marks)]  # fmt: skip
    for r in rows:
        acts = " | ".join("**yes**" if r["acts"][k] else "no" for k in THRESHOLDS)
        lines.append(f"| {r['dataset']} | {r['channels']} | {r['series']} | {r['widest']} | "
                     f"{math.log10(r['spread']):.2f} | {acts} |")  # fmt: skip
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=SHARED + BUNDLED)
    parser.add_argument("--data-dir", action="append", default=[])
    args = parser.parse_args(argv)
    rows = []
    for name in args.datasets:
        for d in [*args.data_dir, None]:  # None: the package's own search (sktime's bundled copies)
            try:
                X, _ = load_dataset(name, "train", d, download=False, progress=False)
                break
            except DatasetNotFoundError:
                continue
        else:
            print(f"{name}: not found, skipped", flush=True)
            continue
        rows.append(spread_row(name, X))
    print(table(rows))


if __name__ == "__main__":
    main()
