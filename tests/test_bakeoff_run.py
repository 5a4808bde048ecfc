"""eadct-bakeoff's runner and results files: written whole, resumed, read back by aeon's results loader."""

from pathlib import Path

import aeon
import numpy as np
import pytest

from eadct.tables.bakeoff import _methods, collect, read_summary, run_bakeoff
from eadct.tables.bakeoff._results import predictions_path, read_predictions
from eadct.tables.bakeoff._run import StaleUnits
from eadct.tables.bakeoff.cli import _folds, main

AEON_DATA = Path(aeon.__file__).parent / "datasets" / "data"


def _quiet(*_):
    pass


def test_a_run_writes_tsml_eval_files_that_collect_and_aeon_read(tmp_path):
    out, summary = tmp_path / "out", tmp_path / "summary"
    counts = run_bakeoff(["BasicMotions"], ["QUANT"], [0, 1], out, [AEON_DATA], threads=1, log=_quiet)
    assert counts == {"done": 2, "skipped": 0, "failed": 0, "missing": 0}
    path = predictions_path(out, "classification", "QUANT", "BasicMotions", 1)
    lines = path.read_text().splitlines()
    assert lines[0].startswith("BasicMotions,QUANT,TEST,1,MILLISECONDS,PREDICTIONS,")
    assert "Encoder dictionary: {'badminton': 0, 'running': 1, 'standing': 2, 'walking': 3}" in lines[0]
    assert len(lines) == 3 + 40  # three header lines, then BasicMotions' 40 TEST cases
    assert all(len(line.split(",")) == 3 + 4 for line in lines[3:])  # true, predicted, "", four probabilities
    assert float(lines[2].split(",")[0]) == read_predictions(path, "classification")["score"]
    assert lines[1].startswith('{"__class__": "QUANTClassifier"') and "n_jobs" not in lines[1]

    collect(out, summary)
    table = read_summary(summary / "classification" / "accuracy" / "QUANT_accuracy.csv")
    assert list(table.columns) == [0, 1] and list(table.index) == ["BasicMotions"]
    # the published tables' format: the same reader reads ours and tsml-eval's
    np.testing.assert_allclose(
        table.loc["BasicMotions"],
        [
            read_predictions(predictions_path(out, "classification", "QUANT", "BasicMotions", k), "classification")[
                "score"
            ]
            for k in (0, 1)
        ],
    )
    assert (summary / "classification" / "fittime" / "QUANT_fittime.csv").exists()

    again = run_bakeoff(["BasicMotions"], ["QUANT"], [0, 1, 2], out, [AEON_DATA], threads=1, log=_quiet)
    assert again == {"done": 1, "skipped": 2, "failed": 0, "missing": 0}  # the two done are not refitted


def test_a_failed_unit_leaves_no_file_and_is_reported(tmp_path, monkeypatch):
    def broken(task, seed, threads):
        raise RuntimeError("boom")

    monkeypatch.setitem(_methods.METHODS, "Broken", (broken, True))
    logged = []
    counts = run_bakeoff(["Covid3Month"], ["Broken"], [0], tmp_path, [AEON_DATA], threads=1, log=logged.append)
    assert counts["failed"] == 1 and counts["done"] == 0
    assert not predictions_path(tmp_path, "regression", "Broken", "Covid3Month", 0).exists()
    assert "RuntimeError: boom" in logged[0]


def test_a_network_row_takes_unequal_series_and_writes_every_class(tmp_path, monkeypatch):
    tiny = _methods._eadct(d_model=8, n_heads=2, n_blocks=1, d_ff=16, max_epochs=1, pretrain_epochs=0)
    monkeypatch.setitem(_methods.METHODS, "Tiny", (tiny, True))
    counts = run_bakeoff(["JapaneseVowels"], ["Tiny"], [0], tmp_path, [AEON_DATA], threads=1, log=_quiet)
    assert counts["done"] == 1
    lines = predictions_path(tmp_path, "classification", "Tiny", "JapaneseVowels", 0).read_text().splitlines()
    probs = np.array([[float(v) for v in line.split(",")[3:]] for line in lines[3:]])
    assert probs.shape[1] == 9
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    assert '"d_model": 8' in lines[1]


def test_a_missing_dataset_is_counted_not_raised(tmp_path):
    counts = run_bakeoff(["NoSuchSet"], ["QUANT"], [0], tmp_path, [tmp_path], log=_quiet)
    assert counts["missing"] == 1


def test_folds_parse_and_unknown_methods_are_refused():
    assert _folds("0-2,5") == [0, 1, 2, 5]
    with pytest.raises(SystemExit):
        main(["run", "--data-dir", ".", "--methods", "NoSuchMethod"])
    with pytest.raises(ValueError, match="unknown method"):
        run_bakeoff(["BasicMotions"], ["NoSuchMethod"], [0], ".", ["."])


def test_a_unit_written_with_other_settings_is_refused_not_reused(tmp_path):
    run_bakeoff(["Covid3Month"], ["QUANT"], [0], tmp_path, [AEON_DATA], threads=1, log=_quiet)
    path = predictions_path(tmp_path, "regression", "QUANT", "Covid3Month", 0)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[1].replace('"interval_depth": 6', '"interval_depth": 5'), *lines[2:]]))
    with pytest.raises(StaleUnits, match="other settings"):
        run_bakeoff(["Covid3Month"], ["QUANT"], [0], tmp_path, [AEON_DATA], threads=1, log=_quiet)
    assert (
        main(
            [
                "run",
                "--data-dir",
                str(AEON_DATA),
                "--datasets",
                "Covid3Month",
                "--methods",
                "QUANT",
                "--folds",
                "0",
                "--out",
                str(tmp_path),
                "--threads",
                "1",
            ]
        )
        == 2
    )


def test_non_finite_predictions_fail_the_unit(tmp_path, monkeypatch):
    class Diverged:
        def get_params(self, deep=True):
            return {}

        def fit(self, X, y):
            return self

        def predict(self, X):
            return np.full(len(X), np.nan)

    monkeypatch.setitem(_methods.METHODS, "Diverged", (lambda task, seed, threads: Diverged(), True))
    logged = []
    counts = run_bakeoff(["Covid3Month"], ["Diverged"], [0], tmp_path, [AEON_DATA], threads=1, log=logged.append)
    assert counts["failed"] == 1 and "non-finite" in logged[0]


def test_bad_results_files_are_named_value_errors(tmp_path):
    bad = tmp_path / "X_accuracy.csv"
    bad.write_text("folds:,0,1\nA,0.5,0.6\nA,0.5,0.7\n")
    with pytest.raises(ValueError, match="names a dataset or a fold twice"):
        read_summary(bad)
    bad.write_text("folds:,0,zero\nA,0.5,0.6\n")
    with pytest.raises(ValueError, match="is not a results table"):
        read_summary(bad)
    short = tmp_path / "testResample0.csv"
    short.write_text("A,B,TEST,0,MILLISECONDS,\n{}\n")
    with pytest.raises(ValueError, match="not a tsml-eval predictions file"):
        read_predictions(short, "regression")
    with pytest.raises(ValueError, match="threads must be a positive int"):
        run_bakeoff(["BasicMotions"], ["QUANT"], [0], tmp_path, [AEON_DATA], threads=0)


def test_a_peer_takes_unequal_series_padded_and_test_cut_to_train_length():
    from eadct.tables.bakeoff._methods import method_inputs

    X_train = [np.arange(6.0).reshape(1, 6), np.arange(4.0).reshape(1, 4)]
    X_test = [np.arange(8.0).reshape(1, 8), np.arange(3.0).reshape(1, 3)]
    X_tr, X_te = method_inputs("QUANT", X_train, X_test)
    assert X_tr.shape == (2, 1, 6) and X_te.shape == (2, 1, 6)
    np.testing.assert_array_equal(X_tr[1, 0], [0, 1, 2, 3, 3, 3])  # the last value repeated
    np.testing.assert_array_equal(X_te[0, 0], np.arange(6.0))  # cut to TRAIN's length
    np.testing.assert_array_equal(X_te[1, 0], [0, 1, 2, 2, 2, 2])
    assert method_inputs("EA-DC", X_train, X_test) == (X_train, X_test)  # the networks take them as they are
