"""The main job (eadct.demo) on tiny settings."""

from __future__ import annotations

import numpy as np
import pytest

from eadct.demo import main, run


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


def test_demo_reports_the_threads_the_fit_used():
    from eadct.demo import _threads_text

    tiny = dict(d_model=16, n_heads=2, n_blocks=1, max_epochs=1, pretrain_epochs=1, device="cpu", n_jobs=1)
    assert run("BasicMotions", **tiny)["fit_threads"] == [1]
    assert _threads_text([2]) == "2 threads" and _threads_text([1]) == "1 thread"
    assert _threads_text([1, 2]) == "1-2 threads"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--dataset", "NotADataset"], "unknown dataset 'NotADataset': not in the registry"),
        (["--data-dir", "/no/such/folder"], "--data-dir /no/such/folder is not a folder"),
        (["--dataset", "EthanolConcentration"], "dataset 'EthanolConcentration' is on no disk (download failed"),
    ],
)
def test_demo_cli_mistakes_are_one_line_and_exit_2(argv, message, capsys, monkeypatch, tmp_path):
    """No traceback, no fit; a name that is not in the registry is never downloaded (a registered one is tried)."""
    import eadct.datasets._load as load
    import eadct.demo as demo
    from eadct.datasets import DownloadError

    tried = []

    def offline(name, *args, **kwargs):
        tried.append(name)
        raise DownloadError("network is unreachable")

    monkeypatch.setattr(load, "download_dataset", offline)
    monkeypatch.setattr(load, "_sktime_download", lambda *a: pytest.fail("sktime's downloader was called"))
    monkeypatch.setenv("EADCT_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EADCT_DATA_DIR", raising=False)
    monkeypatch.setattr(demo.EADCTClassifier, "fit", lambda *a, **k: pytest.fail("a model was fitted"))
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and captured.err.startswith("eadct-demo: error: ")
    assert message in captured.err, captured.err
    assert tried == (["EthanolConcentration"] if "EthanolConcentration" in argv else [])


@pytest.mark.parametrize("option, value", [("--n-jobs", "0"), ("--n-jobs", "two"), ("--random-state", "-1")])
def test_demo_cli_refuses_impossible_numbers(option, value, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([option, value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}:" in err and "Traceback" not in err


def test_demo_run_refuses_a_missing_data_dir():
    with pytest.raises(ValueError, match="data_dir '/no/such/folder' is not a folder"):
        run("BasicMotions", data_dir="/no/such/folder")
