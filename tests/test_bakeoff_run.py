"""eadct-bakeoff's runner and results files: written whole, resumed, read back by aeon's results loader."""

from pathlib import Path

import aeon
import numpy as np
import pytest

from eadct.bakeoff import _methods, collect, read_summary, run_bakeoff
from eadct.bakeoff._results import predictions_path, read_predictions
from eadct.bakeoff.cli import _folds, main

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
    assert float(lines[2].split(",")[0]) == read_predictions(path)["score"]

    collect(out, summary)
    table = read_summary(summary / "classification" / "accuracy" / "QUANT_accuracy.csv")
    assert list(table.columns) == [0, 1] and list(table.index) == ["BasicMotions"]
    from aeon.benchmarking.results_loaders import get_estimator_results

    loaded = get_estimator_results("QUANT", path=str(summary), task="classification", num_resamples=None)
    np.testing.assert_allclose(loaded["QUANT"]["BasicMotions"], table.loc["BasicMotions"].to_numpy())
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
