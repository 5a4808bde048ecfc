"""Dataset loading from bundled copies / a folder, and the main job on tiny settings."""

from __future__ import annotations

import numpy as np
import pytest

from eadct.datasets import DATA_DIR_ENV, find_ts_file, load_dataset
from eadct.demo import main, run

TS_CLASSIFICATION = """# a comment
@problemName Tiny
@timeStamps false
@missing true
@univariate false
@dimensions 2
@equalLength false
@classLabel true a b
@data
1,2,3:4,5,6:a
1,?,3,4:5,6,7,8:b
"""


def test_bundled_unequal_length_dataset():
    X, y = load_dataset("JapaneseVowels", "train")
    assert isinstance(X, list) and len(X) == 270
    assert {x.shape[0] for x in X} == {12}
    assert sorted(set(y)) == [str(i) for i in range(1, 10)]


def test_bundled_regression_dataset():
    X, y = load_dataset("Covid3Month", "test")
    assert X.shape == (61, 1, 84) and y.dtype == float


def test_folder_layouts_and_env(tmp_path, monkeypatch):
    (tmp_path / "Tiny").mkdir()
    (tmp_path / "Tiny" / "Tiny_TRAIN.ts").write_text(TS_CLASSIFICATION)
    (tmp_path / "Tiny_TEST.ts").write_text(TS_CLASSIFICATION)
    X, y = load_dataset("Tiny", "train", data_dir=tmp_path)
    assert [x.shape for x in X] == [(2, 3), (2, 4)]
    assert np.isnan(X[1][0, 1]) and list(y) == ["a", "b"]
    assert find_ts_file("Tiny", "test", tmp_path) == tmp_path / "Tiny_TEST.ts"
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path))
    assert find_ts_file("Tiny", "train") == tmp_path / "Tiny" / "Tiny_TRAIN.ts"


def test_missing_dataset_says_where_it_looked(tmp_path):
    with pytest.raises(FileNotFoundError, match="Nope_TRAIN.ts") as err:
        load_dataset("Nope", "train", data_dir=tmp_path)
    assert str(tmp_path) in str(err.value) and "data_dir" in str(err.value)


def test_demo_run_tiny():
    tiny = dict(d_model=16, n_heads=2, n_blocks=1, max_epochs=1, pretrain_epochs=1, device="cpu")
    result = run("BasicMotions", **tiny)
    assert result["n_train"] == 40 and 0.0 <= result["test_accuracy"] <= 1.0
    assert result["epochs"] == {"pretrain": 1, "finetune": 1}
    result = run("Covid3Month", **tiny)
    assert np.isfinite(result["test_rmse"])


def test_demo_cli_prints_score(capsys, monkeypatch):
    import eadct.demo as demo

    real_run = demo.run
    monkeypatch.setattr(
        demo,
        "run",
        lambda *a, **k: real_run(*a, **k, d_model=16, n_heads=2, n_blocks=1, max_epochs=1, pretrain_epochs=0),
    )
    main(["--dataset", "BasicMotions"])
    out = capsys.readouterr().out
    assert "test accuracy" in out and "fit" in out and "device cpu" in out
