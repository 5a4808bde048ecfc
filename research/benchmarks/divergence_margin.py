"""How far a working fit's epoch losses stay below the divergence rule (``eadct.training.divergence.DIVERGED_FACTOR``).

    python benchmarks/divergence_margin.py                         # the defaults, lr 1e-3 and 1e-2
    python benchmarks/divergence_margin.py --sets BasicMotions --lr 1e-3

For every fit (the estimators' defaults, ``n_jobs=1``, ``random_state=0``, bundled sets) and stage, the rule's
reference (the stage's first batch's loss, at least 1) and the largest epoch loss over it: a stage diverges when
that ratio passes ``DIVERGED_FACTOR``. The last column says whether any stage of the fit diverged (it should not).
"""

from __future__ import annotations

import argparse
import time
import warnings

SETS = {
    "BasicMotions": "classifier",
    "JapaneseVowels": "classifier",
    "ArrowHead": "classifier",
    "GunPoint": "classifier",
    "Covid3Month": "regressor",
}


def margins(name: str, kind: str, lr: float) -> tuple[dict, bool, float]:
    """Per stage, the largest ``epoch loss / reference`` of one default fit; whether it diverged; its seconds."""
    import eadct.training.loop as loop
    from eadct import EADCTClassifier, EADCTRegressor
    from eadct.datasets import load_dataset

    X, y = load_dataset(name, "train")
    worst: dict[str, float] = {}
    rule = loop.diverged_record

    def watched(stage, epoch, loss, start_loss, finite_weights):
        reference = max(1.0, start_loss)
        worst[stage] = max(worst.get(stage, 0.0), loss / reference)
        return rule(stage, epoch, loss, start_loss, finite_weights)

    loop.diverged_record = watched
    try:
        cls = EADCTClassifier if kind == "classifier" else EADCTRegressor
        tic = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls(lr=lr, n_jobs=1, random_state=0).fit(X, y)
        seconds = time.perf_counter() - tic
    finally:
        loop.diverged_record = rule
    return worst, any(r.get("diverged") for r in model.history_), seconds


def main(argv=None) -> None:
    from eadct.training.divergence import DIVERGED_FACTOR

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--lr", nargs="+", type=float, default=[1e-3, 1e-2])
    args = parser.parse_args(argv)
    print(f"DIVERGED_FACTOR = {DIVERGED_FACTOR:g}; defaults, n_jobs=1, random_state=0\n")
    print("| set | estimator | lr | pretrain: max loss / reference | finetune: max loss / reference | diverged | s |")
    print("|---|---|---|---|---|---|---|")
    for name in args.sets:
        for lr in args.lr:
            worst, diverged, seconds = margins(name, SETS[name], lr)
            cells = [f"{worst[s]:.3g}" if s in worst else "-" for s in ("pretrain", "finetune")]
            row = [name, SETS[name], f"{lr:g}", *cells, str(diverged), f"{seconds:.0f}"]
            print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
