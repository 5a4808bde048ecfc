"""What ``EADCTClassifier()``'s default fit costs on shapes that the shared sets do not have: many series.

The classifier has no cap on its optimizer steps (``max_steps=None``): its pretraining and fine-tuning epochs
(``pretrain_epochs`` and ``max_epochs``) each take ``ceil(n / batch_size)`` batches, so its fit grows with the number of
series. This script estimates the default fit's time for the shapes of large UEA sets without their data. On random
series of each shape (``n`` at most ``--sample`` of them) it times three short fits of the defaults that differ only in
their epochs, after one untimed fit: A (1 pretraining, 2 fine-tuning epochs), B (1, 4) and C (2, 2), each with
``average_epochs=1``. Per epoch on the sample, fine-tuning costs ``(B - A) / 2`` and pretraining ``C - A``; what is left
of A is the fixed part. The estimate is that fixed part plus ``(n / sample) * (pretrain_epochs * pretraining +
max_epochs * fine-tuning)``. With ``--check`` it also fits the real defaults on one shape small enough to time whole, as
a check of the estimate.

Unequal lengths are taken at their longest, so estimates for such sets are high. Random series train like real
ones per step; early stopping is off at the classifier's defaults (``validation_fraction=0``), so the epochs are
the same. Prints a table (docs/benchmarks.md); time it alone.

    python benchmarks/fit_time_by_shape.py --threads 2 [--shapes PenDigits=7494x2x8 ...] [--check 1024x3x24]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch

from eadct import EADCTClassifier
from eadct.demo import run as main_job

#: name=series x channels x steps (TRAIN, the UEA archive's descriptions; the longest length where they vary).
SHAPES = (
    "PenDigits=7494x2x8",
    "InsectWingbeat=25000x200x22",
    "SpokenArabicDigits=6599x13x93",
    "FaceDetection=5890x144x62",
    "PhonemeSpectra=3315x11x217",
    "LSST=2459x6x36",
    "CharacterTrajectories=1422x3x182",
)
#: The classifier's defaults, whose epochs and batch size the estimate scales (not restated here).
DEFAULTS = EADCTClassifier()


def timed_fit(X: np.ndarray, y: np.ndarray, threads: int, **params) -> float:
    """Seconds of one ``EADCTClassifier`` fit with ``params`` on ``X``, ``y``."""
    clf = EADCTClassifier(random_state=0, n_jobs=threads, **params)
    tic = time.perf_counter()
    clf.fit(X, y)
    return time.perf_counter() - tic


def series(n: int, channels: int, length: int, n_classes: int = 4):
    """``n`` random walks (float32) and balanced labels."""
    rng = np.random.default_rng(0)
    return rng.normal(size=(n, channels, length)).cumsum(axis=2).astype(np.float32), np.arange(n) % n_classes


def estimate(n: int, channels: int, length: int, sample: int, threads: int) -> dict:
    """The default fit's estimated seconds on ``n`` series, from three short fits on ``min(n, sample)``."""
    m = min(n, sample)
    X, y = series(m, channels, length)
    short = dict(options={"average_epochs": 1})
    timed_fit(X, y, threads, pretrain_epochs=1, max_epochs=1, **short)  # warm-up: the first fit's one-off costs
    a = timed_fit(X, y, threads, pretrain_epochs=1, max_epochs=2, **short)
    b = timed_fit(X, y, threads, pretrain_epochs=1, max_epochs=4, **short)
    c = timed_fit(X, y, threads, pretrain_epochs=2, max_epochs=2, **short)
    fine, pre = max(b - a, 0.0) / 2, max(c - a, 0.0)
    fixed = max(a - pre - 2 * fine, 0.0)
    per_epoch = n / m
    total = fixed + per_epoch * (DEFAULTS.pretrain_epochs * pre + DEFAULTS.max_epochs * fine)
    return dict(
        sample=m, fine=fine * per_epoch, pre=pre * per_epoch, total=total, steps=math.ceil(n / DEFAULTS.batch_size)
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), help="name=series x channels x steps")
    parser.add_argument("--sample", type=int, default=256, help="series in the short fits (default 256)")
    parser.add_argument("--check", default=None, help="series x channels x steps: also fit the defaults whole")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-reference", action="store_true", help="skip timing the main job first")
    args = parser.parse_args(argv)
    assert DEFAULTS.get_params()["options__max_steps"] is None, "the estimate assumes every epoch runs in full"
    torch.set_num_threads(args.threads)
    print(f"Default EADCTClassifier fit from short fits on {args.sample} random series, torch threads {args.threads};")
    print(f"torch {torch.__version__}, CPU kernels {torch.backends.cpu.get_cpu_capability()}.")
    reference = None
    if not args.no_reference:  # the main job's fit in the same run: the machine's speed (docs/benchmarks.md)
        reference = main_job(n_jobs=args.threads)["fit_s"]
        print(f"The main job (JapaneseVowels, 270 series) fitted in {reference:.1f} s in this run.")
    print("\n| set (shape of TRAIN) | series | batches per epoch | fine-tuning epoch (s) | pretraining epoch (s) | "
          "estimated fit (min) | x the main job |\n|---|---|---|---|---|---|---|")  # fmt: skip
    shapes = list(args.shapes) + ([f"check={args.check}"] if args.check else [])
    for item in shapes:
        name, shape = item.split("=")
        n, c, length = (int(v) for v in shape.split("x"))
        e = estimate(n, c, length, args.sample, args.threads)
        cells = (f"{name} ({n} x {c} x {length})", n, e["steps"], f"{e['fine']:.2f}", f"{e['pre']:.2f}")
        ratio = f"{e['total'] / reference:.0f}" if reference else "-"
        print("| " + " | ".join(map(str, cells)) + f" | {e['total'] / 60:.1f} | {ratio} |", flush=True)
        if name == "check":
            X, y = series(n, c, length)
            whole = timed_fit(X, y, args.threads)
            print(
                f"\nCheck: the defaults fitted whole on {shape}: {whole / 60:.2f} min; estimated "
                f"{e['total'] / 60:.2f} min (ratio {e['total'] / whole:.2f})."
            )


if __name__ == "__main__":
    main()
