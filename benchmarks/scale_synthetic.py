"""Synthetic sets whose series' amplitudes span four decades within each channel, with negative values: the
property that made the defaults learn nothing on a light-curve set (issue 86). Classes depend on the shape, on the
scale, or on both.

    python benchmarks/scale_synthetic.py            # the table: each model's training and TRAIN-CV accuracy

Each set has ``n`` series of 3 channels and 64 steps. A series is ``A * (shape + noise) + A * offset``: ``A`` drawn
log-uniformly over [1, 10^4] per series, ``offset`` uniform in [-2, 2] per series and channel, so that levels are
negative and positive and each channel's per-series standard deviations span four decades. Shapes: a sine of 1, 2 or
3 periods or a square wave, in channel 0 (channels 1 and 2 are noise at the same scale). "shape": the class is the
shape (4 classes), the scale is noise; "scale": the class is the decade of ``A`` (4 classes), the shape is noise;
"both": the class is (sine of one period or square) x (``A`` below or above 100), 4 classes. "tails": the class is
the shape, ``log10 A`` normal around 2 (standard deviation 0.6, clipped to [0, 4]): most series within about a decade
and a half, the tails over four, so that the 90th and 10th percentiles of the standard deviations differ less than
100 times (the classifier's ``wide_scales`` threshold) while the extremes differ a thousandfold, as on the light
curves where the defaults learned nothing.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

KINDS = ("shape", "scale", "both", "tails")


def _shape(kind: int, t: np.ndarray) -> np.ndarray:
    return np.sign(np.sin(2 * np.pi * t)) if kind == 3 else np.sin(2 * np.pi * (kind + 1) * t)


def make_scale_set(kind: str, n: int = 200, seed: int = 0, length: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)``: ``X`` of shape (n, 3, length), classes 0-3 balanced, as the module docstring says."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 1, length)
    y = np.arange(n) % 4
    rng.shuffle(y)
    log_a = rng.uniform(0, 4, size=n)
    shapes = rng.integers(0, 4, size=n)
    if kind in ("shape", "tails"):
        shapes = y.copy()
        if kind == "tails":
            log_a = np.clip(rng.normal(2, 0.6, size=n), 0, 4)
    elif kind == "scale":
        log_a = y + rng.uniform(0, 1, size=n)
    else:  # both: the shape's group (sine of one period / square) and the amplitude's half
        shapes = np.where(y % 2 == 0, 0, 3)
        log_a = np.where(y // 2 == 0, rng.uniform(0, 2, size=n), rng.uniform(2, 4, size=n))
    amplitude = 10.0**log_a
    X = 0.3 * rng.normal(size=(n, 3, length))
    X[:, 0] += np.stack([_shape(int(k), t) for k in shapes])
    X += rng.uniform(-2, 2, size=(n, 3, 1))
    return X * amplitude[:, None, None], y


MODELS = ("defaults", "series_normalization", "no_wide_scales", "MiniRocket", "QUANT")


def make_model(name: str, seed: int):
    """One of ``MODELS``: eadct's defaults, the defaults with each series' own standardisation (with its level and
    log-scale as inputs), the defaults without the ``wide_scales`` rule, or aeon's MiniRocket and QUANT at their
    defaults."""
    if name == "MiniRocket":
        from aeon.classification.convolution_based import MiniRocketClassifier

        return MiniRocketClassifier(random_state=seed)
    if name == "QUANT":
        from aeon.classification.interval_based import QUANTClassifier

        return QUANTClassifier(random_state=seed)
    from eadct import EADCTClassifier

    options = {"series_normalization": {"series_normalization": True}, "no_wide_scales": {"wide_scales": False}}
    return EADCTClassifier(random_state=seed, options=options.get(name), n_jobs=1)


def score_unit(kind: str, model: str, fold, n_folds: int = 3, seed: int = 0) -> dict:
    """A model's accuracy on a set: ``fold="all"`` fits all of it and scores it (training accuracy); fold ``k``
    fits the other folds of a stratified ``n_folds``-fold split and scores fold k (TRAIN-CV)."""
    from sklearn.model_selection import StratifiedKFold

    X, y = make_scale_set(kind, seed=seed)
    if fold == "all":
        fit_idx = test_idx = np.arange(len(y))
    else:
        fit_idx, test_idx = list(StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(X, y))[int(fold)]
    start = time.perf_counter()
    est = make_model(model, seed).fit(X[fit_idx], y[fit_idx])
    fit_s = time.perf_counter() - start
    accuracy = float(np.mean(est.predict(X[test_idx]) == y[test_idx]))
    return {"set": f"scale-{kind}", "model": model, "fold": fold, "accuracy": accuracy, "fit_s": round(fit_s, 1)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    print("| set | model | training accuracy | TRAIN-CV accuracy | largest class | fit (s) |")
    print("|---|---|---|---|---|---|")
    for kind in KINDS:
        for model in args.models:
            full = score_unit(kind, model, "all")
            cv = [score_unit(kind, model, k, args.folds)["accuracy"] for k in range(args.folds)]
            _, y = make_scale_set(kind)
            print(
                f"| scale-{kind} | {model} | {full['accuracy']:.3f} | {np.mean(cv):.3f} | "
                f"{np.bincount(y).max() / len(y):.3f} | {full['fit_s']} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
