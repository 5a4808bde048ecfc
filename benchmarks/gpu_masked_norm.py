"""What the BatchNorm over valid steps costs a CUDA fit of short, unequal series: indexed by the mask or by sums.

``MaskedBatchNorm`` normalises only the steps that are not padding. Indexed by the mask (``x[valid]``, then
``out[valid] = ...``), each call makes the host wait for the GPU to count the valid steps, twice per layer and step.
On CUDA it computes the same statistics as sums over the mask instead (``_normalize_weighted``), which never waits.
This script fits ``EADCTClassifier`` on JapaneseVowels (bundled with sktime; 270 series of 7-26 steps, so every
batch has padding) on CUDA with a shortened schedule, both forms alternating, and prints the fit times, their ratio
and the test accuracy of each. The indexed form is put back for its fits by replacing the method in this process.

    python benchmarks/gpu_masked_norm.py [--repeats 3] [--epochs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from eadct import EADCTClassifier
from eadct.datasets import load_dataset
from eadct.networks import MaskedBatchNorm

BY_SUMS = MaskedBatchNorm._normalize_weighted


def _indexed(self, x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """The indexed form (the CPU's): statistics of ``x[valid]``."""
    out = torch.zeros_like(x)
    out[valid] = self._normalize(x[valid])
    return out


def timed_fit(form, X, y, X_test, y_test, epochs: int) -> tuple[float, float]:
    MaskedBatchNorm._normalize_weighted = form
    try:
        clf = EADCTClassifier(random_state=0, max_epochs=epochs, pretrain_epochs=1, device="cuda")
        torch.cuda.synchronize()
        tic = time.perf_counter()
        clf.fit(X, y)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - tic
        return seconds, clf.score(X_test, y_test)
    finally:
        MaskedBatchNorm._normalize_weighted = BY_SUMS


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=5, help="fine-tuning epochs per fit (1 of pretraining)")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("needs CUDA: the form by sums is what CUDA fits use")
    X, y = load_dataset("JapaneseVowels", "train")
    X_test, y_test = load_dataset("JapaneseVowels", "test")
    forms = {"indexed by the mask": _indexed, "sums over the mask": BY_SUMS}
    timed_fit(BY_SUMS, X, y, X_test, y_test, 1)  # untimed: CUDA context, kernels, caches
    results = {name: [] for name in forms}
    for _ in range(args.repeats):
        for name, form in forms.items():
            results[name].append(timed_fit(form, X, y, X_test, y_test, args.epochs))
    print(f"EADCTClassifier on JapaneseVowels, 1 + {args.epochs} epochs, CUDA ({torch.cuda.get_device_name(0)}), "
          f"torch {torch.__version__}, {args.repeats} alternating repeats\n")  # fmt: skip
    print("| BatchNorm over valid steps | fit (s), each repeat | median (s) | x indexed | test accuracy |")
    print("|---|---|---|---|---|")
    base = statistics.median(s for s, _ in results["indexed by the mask"])
    for name, runs in results.items():
        med = statistics.median(s for s, _ in runs)
        times = ", ".join(f"{s:.1f}" for s, _ in runs)
        scores = ", ".join(f"{a:.4f}" for _, a in runs)
        print(f"| {name} | {times} | {med:.1f} | {med / base:.2f} | {scores} |")


if __name__ == "__main__":
    main()
