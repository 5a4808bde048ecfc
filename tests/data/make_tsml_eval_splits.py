"""Write tsml_eval_splits.json: the folds tsml-eval itself makes, for tests/test_bakeoff_folds.py.

Run with tsml-eval installed in an environment of its own (it pins older aeon and scikit-learn than eadct):

    python -m venv /tmp/tsmlenv && /tmp/tsmlenv/bin/pip install tsml-eval==0.6.0
    /tmp/tsmlenv/bin/python tests/data/make_tsml_eval_splits.py

The datasets are the copies that aeon ships (BasicMotions, Covid3Month). For each fold, the file keeps the
labels of TRAIN and TEST in order and each case's sum of values: enough to tell any other split apart.
"""

import json
from pathlib import Path

import aeon
import numpy as np
import tsml_eval
from tsml_eval.experiments.experiments import load_experiment_data
from tsml_eval.utils.resampling import resample_data, stratified_resample_data

DATA = Path(aeon.__file__).parent / "datasets" / "data"
CASES = {"BasicMotions": "classification", "Covid3Month": "regression"}


def case_sums(X):
    return [float(np.sum(x)) for x in X]


def main():
    out = {"tsml_eval": tsml_eval.__version__, "aeon": aeon.__version__, "folds": {}}
    for name, task in CASES.items():
        for fold in (0, 1, 2):
            X_tr, y_tr, X_te, y_te, resample = load_experiment_data(str(DATA), name, fold, False)
            if resample:
                split = stratified_resample_data if task == "classification" else resample_data
                X_tr, y_tr, X_te, y_te = split(X_tr, y_tr, X_te, y_te, random_state=fold)
            out["folds"][f"{name}/{fold}"] = {
                "y_train": [str(v) if task == "classification" else float(v) for v in y_tr],
                "y_test": [str(v) if task == "classification" else float(v) for v in y_te],
                "train_sums": case_sums(X_tr),
                "test_sums": case_sums(X_te),
            }
    path = Path(__file__).with_name("tsml_eval_splits.json")
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
