"""What does a model that ignores the series score on TEST? scikit-learn's dummy estimators, fitted on TRAIN.

The floor every row of the accuracy table should clear: for a classification set the accuracy of predicting
TRAIN's most frequent class, for a regression set the RMSE of predicting TRAIN's mean target and TRAIN's median
target. Nothing is chosen here, so reading TEST is fine: the numbers explain the table's regression cells
(docs/accuracy.md, "The floor: a prediction that ignores the series"), they select nothing.

    python benchmarks/constant_baseline.py --data-dir ../shared/datasets/TSER --data-dir ../shared/datasets/UEA
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.dummy import DummyClassifier, DummyRegressor

from eadct.tables import load_data, score


def _datasets(data_dir: Path) -> list[str]:
    """Every folder of ``data_dir`` that holds a ``<name>_TRAIN.ts`` file."""
    return sorted(p.name for p in data_dir.iterdir() if (p / f"{p.name}_TRAIN.ts").is_file())


def baseline_rows(data_dir: Path) -> list[tuple[str, str, int, int, dict]]:
    """(dataset, task, TRAIN size, TEST size, {strategy: TEST score}) for every set in ``data_dir``."""
    rows = []
    for name in _datasets(data_dir):
        data = load_data(name, [data_dir])
        y_train, y_test = np.asarray(data.y_train), np.asarray(data.y_test)
        regression = np.issubdtype(y_train.dtype, np.floating)
        task = "regression" if regression else "classification"
        strategies = ("mean", "median") if regression else ("most_frequent",)
        scores = {}
        for strategy in strategies:
            dummy = DummyRegressor(strategy=strategy) if regression else DummyClassifier(strategy=strategy)
            # the dummies read only the targets; a column of zeros stands in for the series
            dummy.fit(np.zeros((len(y_train), 1)), y_train)
            scores[strategy] = score(task, y_test, dummy.predict(np.zeros((len(y_test), 1))))
        rows.append((name, task, len(y_train), len(y_test), scores))
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", action="append", required=True, help="a folder of <name>/<name>_TRAIN.ts sets")
    args = parser.parse_args(argv)
    print("| dataset | task | TRAIN / TEST series | TEST score of the constant prediction |\n|---|---|---|---|")
    for data_dir in args.data_dir:
        for name, task, n_train, n_test, scores in baseline_rows(Path(data_dir)):
            cells = ", ".join(f"{strategy} {value:.4g}" for strategy, value in scores.items())
            measure = "RMSE" if task == "regression" else "accuracy"
            print(f"| {name} | {task} | {n_train} / {n_test} | {measure}: {cells} |")


if __name__ == "__main__":
    main()
