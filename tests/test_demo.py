"""The main job (eadct.demo) on tiny settings."""

from __future__ import annotations

import numpy as np

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
    assert _threads_text([1, 2]).startswith("1-2 threads: fewer while other processes were running")
