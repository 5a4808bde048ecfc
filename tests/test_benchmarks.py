"""benchmarks/attention_speed_memory.py: a sweep with ``--resume`` goes on where it stopped."""

from __future__ import annotations

import importlib.util
import json
import os
import tarfile
from pathlib import Path

import pytest
import torch

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "attention_speed_memory.py"


def _script(path: Path):
    """Import a benchmark script as a module; restore torch's thread count after (main() sets its own)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    threads = torch.get_num_threads()
    yield module
    torch.set_num_threads(threads)


def _serve_as_every_split(monkeypatch, X, y) -> list:
    """Make ``eadct.datasets.load_dataset`` return (X, y) for any set; the list it returns records the splits
    asked for (a TRAIN-only benchmark asks for "train" alone)."""
    import eadct.datasets as datasets

    asked = []

    def fake_load(name, split, data_dir=None, **kw):
        asked.append(split)
        return X, y

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    return asked


@pytest.fixture
def bench():
    yield from _script(SCRIPT)


@pytest.fixture
def sibling_script(monkeypatch):
    """Import a benchmark script that imports its siblings (``benchmarks/`` on the path): ``sibling_script(name)``;
    torch's thread count is restored after the test."""
    monkeypatch.syspath_prepend(str(SCREEN.parent))
    threads = torch.get_num_threads()
    yield lambda name: next(_script(SCREEN.parent / name))
    torch.set_num_threads(threads)


def test_resume_reuses_measured_rows(bench, tmp_path, monkeypatch, capsys):
    measured = []
    crash = {"torch-fused": True}
    seconds = {"plain": 1.0, "evolving": 2.0, "torch-fused": 0.5}

    def fake_row(args, variant, length, limit):  # stands in for the subprocess that measures a row
        measured.append((variant, length))
        if crash.get(variant):
            raise RuntimeError("crash")  # the sweep dies here
        return {"train_s": seconds[variant], "infer_s": 0.5, "peak_gb": 0.1}

    monkeypatch.setattr(bench, "_run_row", fake_row)
    resume = tmp_path / "sweep.jsonl"
    argv = ["--lengths", "8", "--batch", "2", "--d-model", "8", "--heads", "2", "--layers", "1"]
    argv += ["--repeats", "1", "--device", "cpu", "--resume", str(resume)]
    with pytest.raises(RuntimeError, match="crash"):
        bench.main(argv + ["--variants", "plain", "evolving", "torch-fused"])
    assert measured == [("plain", 8), ("evolving", 8), ("torch-fused", 8)]
    assert len(resume.read_text().splitlines()) == 2  # the rows measured before the crash are on disk

    measured.clear()
    crash.clear()
    bench.main(argv + ["--variants", "plain", "evolving", "torch-fused"])
    assert measured == [("torch-fused", 8)]  # only the row that was not finished is measured again
    table = capsys.readouterr().out
    assert "| 8 | evolving | 2.000 | 2.00 |" in table
    assert [json.loads(line)["row"]["train_s"] for line in resume.read_text().splitlines()] == [1.0, 2.0, 0.5]


@pytest.mark.parametrize(
    "variant", ["plain", "evolving", "evolving+recompute", "evolving+ds4", "plain+recompute", "torch-fused", "map-conv"]
)
def test_every_variant_measures_a_step_at_a_small_size(bench, variant):
    assert variant in bench.VARIANTS
    row = bench.measure(variant, 12, 2, 8, 2, 3, 1, torch.device("cpu"))
    assert row["train_s"] > 0 and row["infer_s"] > 0 and "peak_gb" in row  # in-process peak RSS: not measured here
    assert bench.estimate_gb(variant, 12, 2, 8, 2, 3) >= 0


SCREEN = Path(__file__).resolve().parents[1] / "benchmarks" / "screen_defaults.py"


@pytest.fixture
def screen():
    yield from _script(SCREEN)


def test_screen_reads_only_train_and_resumes(screen, tmp_path, monkeypatch, capsys):
    """The defaults' screen selects on a hold-out of TRAIN: it never asks for TEST, the hold-out lies inside
    TRAIN, and a rerun skips what finished."""
    import numpy as np

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(24, 2, 12)), np.repeat(np.arange(3), 8)
    asked = _serve_as_every_split(monkeypatch, X, y)
    tiny = dict(d_model=8, n_heads=2, n_blocks=1, d_ff=8, max_epochs=1, pretrain_epochs=0, validation_fraction=0.0)
    monkeypatch.setitem(screen.CANDIDATES, "tiny", tiny)
    fit, held = screen.inner_split(y, 1 / 3, 0, True)
    assert set(fit).isdisjoint(held) and sorted(np.concatenate([fit, held])) == list(range(24))
    assert all(np.sum(y[held] == c) == 3 for c in range(3))  # stratified
    out = tmp_path / "screen.jsonl"
    argv = ["--candidates", "tiny", "--datasets", "Toy", "--out", str(out), "--data-dir", "anywhere"]
    screen.main(argv)
    assert asked == ["train"] and len(screen.read_results(out)) == 1
    screen.main(argv)  # finished: nothing fitted again
    assert len(screen.read_results(out)) == 1
    assert "| Toy |" in capsys.readouterr().out
    row = screen.read_results(out)[0]
    assert 0 < row["log_loss"] < 10 and np.isfinite(row["log_loss"])  # the hold-out's log-loss, recorded


def test_screen_compares_log_loss_by_a_paired_sign_flip_test(screen):
    """The screen's log-loss lines: lower is a win, the p-value is the exact sign-flip test's for few pairs."""
    import numpy as np

    assert screen.sign_flip_p(np.array([1.0, 2.0, 3.0, 4.0, 5.0])) == 2 / 32  # all of one sign: 2 of 2**5
    assert screen.sign_flip_p(np.array([1.0, -1.0])) == 1.0
    losses = {("base", "A"): {0: 0.5, 1: 0.4}, ("cand", "A"): {0: 0.3, 1: 0.5}, ("cand", "B"): {0: 0.1}}
    (line,) = screen.log_loss_lines(losses, ["cand"], "base")
    assert "over 2 (set, seed) pairs" in line and "-0.0500" in line and "1 / 0 / 1" in line
    scores = {"base": (0.5, 0.75), "cand": (0.625, 0.75)}
    rows = [dict(candidate=c, dataset="A", seed=s, task="classification", score=v, log_loss=losses[(c, "A")][s])
            for c in scores for s, v in enumerate(scores[c])]  # fmt: skip
    table = screen.pair_table(rows, "cand", "base")
    assert "| A | 0.500 -> 0.625 (0.500 -> 0.300) | 0.750 -> 0.750 (0.400 -> 0.500) |" in table


def test_screen_candidates_sit_on_a_fixed_reference_not_on_the_defaults_of_the_day(screen):
    """A candidate's name means one fit whenever it runs: the defaults' candidates resolve to today's defaults,
    and an older base keeps the values it ran with after the defaults moved on."""
    from eadct import EADCTClassifier, EADCTRegressor
    from eadct.tables import REFERENCE_DEFAULTS

    def decides(est_params):
        return {k: v for k, v in est_params.items() if k in REFERENCE_DEFAULTS}

    today = screen.resolve("short-segments-all-swa20-b8-seg8-wide100-udiff-e40", EADCTClassifier)
    assert today == decides(EADCTClassifier().get_params())
    before_e40 = screen.resolve("short-segments-all-swa20-b8-seg8-wide100-udiff", EADCTClassifier)
    assert {**before_e40, "max_epochs": 40} == today and before_e40["max_epochs"] == 60
    classifier = screen.resolve("short-segments-all-swa20-b8-seg8-wide-udiff", EADCTClassifier)
    assert {**classifier, "wide_scales": 100.0} == before_e40 and classifier["wide_scales"] == "auto"
    wide = screen.resolve("short-segments-all-swa20-b8-seg8-wide", EADCTClassifier)
    assert {**wide, "input_differences": "auto"} == classifier and wide["input_differences"] is False
    before_wide = screen.resolve("short-segments-all-swa20-b8-seg8", EADCTClassifier)
    assert {**before_wide, "wide_scales": "auto"} == wide and before_wide["wide_scales"] is False
    regressor_today = screen.resolve("short-segments-ridge-swa20-cap900-auto-dil", EADCTRegressor)
    assert regressor_today == decides(EADCTRegressor().get_params())
    # before the dilation per layer
    regressor = screen.resolve("short-segments-ridge-swa20-cap900-auto", EADCTRegressor)
    assert {**regressor, "dilation_per_layer": True} == regressor_today and regressor["dilation_per_layer"] is False
    # before "auto", and before the cap of 900, which on the screen's splits binds on FloodModeling1 only
    before_auto = screen.resolve("short-segments-ridge-swa20-cap900", EADCTRegressor)
    assert {**before_auto, "input_differences": "auto"} == regressor and before_auto["input_differences"] is False
    assert {**screen.resolve("short-segments-ridge-swa20", EADCTRegressor), "max_steps": 900} == before_auto
    before_8_segments = screen.resolve("short-segments-all-swa20-b8", EADCTClassifier)
    assert before_8_segments["n_segments"] == 4 != EADCTClassifier().n_segments
    short = screen.resolve("short-segments", EADCTRegressor)
    assert short["head_refit"] is None and short["validation_fraction"] == 0.1 and short["average_epochs"] is None


def test_fit_diagnostics_reads_only_train(tmp_path, monkeypatch, capsys, sibling_script):
    """benchmarks/fit_diagnostics.py scores training and hold-out parts of TRAIN, never TEST, one row per set."""
    import numpy as np

    diagnostics = sibling_script("fit_diagnostics.py")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 2, 12))
    y = X.mean(axis=(1, 2))
    asked = _serve_as_every_split(monkeypatch, X, y)
    tiny = "dict(d_model=8, n_heads=2, n_blocks=1, d_ff=8, max_epochs=2, pretrain_epochs=0)"
    diagnostics.main(["Toy", tiny, "{'d_model': 8, 'n_heads': 2, 'n_blocks': 1, 'max_epochs': 1}", "--data-dir", "x"])
    out = capsys.readouterr().out
    assert asked == ["train"]
    assert "16 series fit, 8 held out" in out
    rows = [line for line in out.splitlines() if line.startswith("| {")]
    assert len(rows) == 2 and "'max_epochs': 2" in rows[0]
    pretrain, finetune = (cell.strip() for cell in rows[0].split("|")[-2].split("/"))
    assert pretrain == "-" and float(finetune) > 0  # no pretraining epoch ran; the fine-tuning ones are timed


def test_step_dropout_cost_swaps_every_step_dropout_and_back(capsys, sibling_script):
    """benchmarks/step_dropout_cost.py times both variants and leaves the network's dropouts as it found them."""
    import torch
    from torch import nn

    bench = sibling_script("step_dropout_cost.py")
    network = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.1), nn.Sequential(nn.Dropout(0.2)))
    bench._swap(network, True)
    assert not any(type(m) is nn.Dropout for m in network.modules())
    x = torch.ones(64, 3)
    network.eval()
    torch.testing.assert_close(network(x), network[0](x))  # no dropout in eval mode
    network.train()
    kept = (network[1](x) != 0).float().mean()
    assert 0.8 < kept < 1.0  # about 1 - p kept
    bench._swap(network, False)
    assert [m.p for m in network.modules() if type(m) is nn.Dropout] == [0.1, 0.2]
    bench.main(["--length", "12", "--batch", "4", "--steps", "1", "--repeats", "1", "--threads", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("| nn.", "| map"))]
    assert len(rows) == 2 and rows[0].endswith("| 1.00 |") and float(rows[1].split("|")[2]) > 0


def test_step_profile_times_each_precision_and_profiles_the_default_network(capsys, sibling_script):
    """benchmarks/step_profile.py builds the estimator's default network, times every precision, ranks operators."""
    import numpy as np

    from eadct import EADCTClassifier, EADCTRegressor

    bench = sibling_script("step_profile.py")
    X = np.random.default_rng(0).normal(size=(8, 2, 12))
    for task, cls in (("classification", EADCTClassifier), ("regression", EADCTRegressor)):
        network, batch = bench.default_network(task, X, 1)
        assert batch == cls().batch_size
        assert network.task_head is not None
        bench.main(["--task", task, "--length", "12", "--channels", "2", "--steps", "1", "--repeats", "1",
                    "--threads", "1", "--top", "3"])  # fmt: skip
        out = capsys.readouterr().out
        rows = [line.split("|") for line in out.splitlines() if line.startswith(("| float32", "| bfloat16"))]
        assert [r[1].strip() for r in rows] == ["float32", "bfloat16"] and rows[0][3].strip() == "1.00"
        assert float(rows[1][2]) > 0
        ops = [line.split("|") for line in out.splitlines() if line.startswith("| ") and line.endswith("% |")]
        assert len(ops) == 3
        shares = [float(r[4].strip().rstrip("%")) for r in ops]
        assert shares == sorted(shares, reverse=True) and 0 < sum(shares) <= 100.0


def test_regression_holdout_reads_only_train_and_counts_the_verdicts(tmp_path, monkeypatch, capsys, sibling_script):
    """benchmarks/regression_holdout.py scores baselines on the screen's hold-outs of TRAIN, never TEST."""
    import json

    import numpy as np

    import eadct.tables as tables

    holdout = sibling_script("regression_holdout.py")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 1, 10)), rng.normal(size=30)
    asked, fitted = _serve_as_every_split(monkeypatch, X, y), []

    def fake_minirocket(data, seed):
        fitted.append(len(data.y_train))
        return np.full(len(data.X_test), 100.0), 0.0, 0.0, 0, {}, "cpu"  # far off: worse than any candidate

    monkeypatch.setattr(tables, "fit_minirocket", fake_minirocket)
    results = tmp_path / "screen.jsonl"
    results.write_text(json.dumps(dict(candidate="c", dataset="Toy", seed=0, score=1.0)) + "\n")
    holdout.main(["--datasets", "Toy", "--seeds", "0", "1", "--candidate", "c", "--results", str(results),
                  "--data-dir", "x"])  # fmt: skip
    out = capsys.readouterr().out
    assert asked == ["train"] and fitted == [20, 20]
    assert "| Toy | 0 | 10 |" in out and "| yes |" in out
    assert "c at or below MiniRocket on 1 of 1 (set, seed) hold-outs." in out


def test_regression_holdout_ridge_on_the_input_learns_a_linear_target(monkeypatch, capsys, sibling_script):
    """The "ridge on the input" column recovers a target linear in the input's part means (the features of
    ``EADCTRegressor(head_input_parts=...)``), from the fitted part of TRAIN."""
    import numpy as np

    import eadct.tables as tables

    holdout = sibling_script("regression_holdout.py")
    rng = np.random.default_rng(0)
    parts = holdout.input_parts(rng.normal(size=(3, 2, 64)))
    assert parts.shape == (3, 2 * holdout.INPUT_PARTS)
    X = rng.normal(size=(90, 1, 64))
    parts = holdout.input_parts(X)
    np.testing.assert_allclose(parts[:, 1], X[:, 0, 2:4].mean(axis=1))  # part 1: steps 2 and 3 (t * 32 // 64)
    y = parts[:, 3] - 2.0 * parts[:, 20]
    asked = _serve_as_every_split(monkeypatch, X, y)
    monkeypatch.setattr(tables, "fit_minirocket", lambda data, seed: (np.zeros(len(data.X_test)),))
    holdout.main(["--datasets", "Toy", "--seeds", "0", "--results", "none.jsonl", "--data-dir", "x"])
    out = capsys.readouterr().out
    assert asked == ["train"]
    header, rule = out.splitlines()[:2]
    assert header.count("|") == rule.count("|") == 9
    row = next(line for line in out.splitlines() if line.startswith("| Toy | 0 | 30 |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert float(cells[5]) < 0.1 * float(cells[3])  # ridge on the input against the TRAIN mean


def test_screen_attention_tokens_is_auto_with_another_cap(screen):
    """A candidate's ``attention_tokens`` (a screen-only key until it became an estimator parameter) gives the
    network the attention_downsample that "auto" gives with that cap: ceil(longest / cap)."""
    import numpy as np

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 2, 12)), np.repeat(np.arange(2), 6)
    tiny = dict(d_model=8, n_heads=2, n_blocks=1, d_ff=8, max_epochs=1, pretrain_epochs=0)
    for tokens, factor in ((5, 3), (128, 1)):
        screen.CANDIDATES["tiny-tokens"] = dict(tiny, attention_tokens=tokens)
        try:
            est, *_ = screen.fit_candidate("Toy", "tiny-tokens", X, y, 0)
        finally:
            del screen.CANDIDATES["tiny-tokens"]
        assert est.attention_tokens == tokens and est.network_.encoder.config.attention_downsample == factor


def test_main_job_names_a_parameter_value_that_is_not_json(capsys, sibling_script):
    """benchmarks/main_job.py --param takes JSON values; a Python literal gets an error naming the fix."""
    main_job = sibling_script("main_job.py")
    with pytest.raises(SystemExit):
        main_job.main(["--param", "input_differences=True", "--seeds", "0"])
    assert "--param input_differences=true" in capsys.readouterr().err


def test_prediction_fingerprint_option_rows_run(sibling_script):
    """Every option row of benchmarks/prediction_fingerprint.py still fits at today's defaults (the regressor's
    hidden-head row failed unnoticed once the ridge refit, which needs a linear head, became a default)."""
    import numpy as np

    bench = sibling_script("prediction_fingerprint.py")
    rows = [(key, run) for key, run in bench._rows() if "/option-" in key]
    assert len(rows) == 2 * len(bench.OPTIONS)
    for key, run in rows:
        assert np.isfinite(run()).all(), key


def test_constant_baseline_scores_the_train_constant_on_test(tmp_path, capsys, sibling_script):
    """benchmarks/constant_baseline.py: the TEST score of TRAIN's most frequent class, mean and median target,
    checked by hand on sets written as .ts files (TRAIN: rows i % 4 < 2, TEST: the rest)."""
    import numpy as np
    from test_tables import _write_ts

    baseline = sibling_script("constant_baseline.py")
    X = np.zeros((8, 1, 4))
    _write_ts(tmp_path, "ToyC", X, np.array(["a", "a", "b", "b", "a", "b", "b", "b"]), regression=False)
    _write_ts(tmp_path, "ToyR", X, np.array([0.0, 1.0, 5.0, 5.0, 2.0, 9.0, 5.0, 5.0]), regression=True)
    rows = {name: (task, n_train, n_test, scores) for name, task, n_train, n_test, scores in
            baseline.baseline_rows(tmp_path)}  # fmt: skip
    # classification: TRAIN a, a, a, b -> "a"; TEST b, b, b, b -> accuracy 0
    assert rows["ToyC"] == ("classification", 4, 4, {"most_frequent": 0.0})
    # regression: TRAIN 0, 1, 2, 9 -> mean 3, median 1.5; TEST all 5
    task, n_train, n_test, scores = rows["ToyR"]
    assert (task, n_train, n_test) == ("regression", 4, 4)
    assert scores == pytest.approx({"mean": 2.0, "median": 3.5})
    baseline.main(["--data-dir", str(tmp_path)])
    assert "| ToyR | regression | 4 / 4 | RMSE: mean 2, median 3.5 |" in capsys.readouterr().out


def test_regression_spread_reads_train_only_and_its_clip_never_hurts_inside_the_range(
    monkeypatch, capsys, sibling_script
):
    """benchmarks/regression_spread.py: the screen's split of TRAIN, its candidate's fit, and on the hold-out the
    RMSE, the clipped RMSE and the fitted part's mean target's; with every held-out target inside the fitted range
    the clip can only bring predictions nearer."""
    import numpy as np

    spread = sibling_script("regression_spread.py")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 1, 12))
    y = 3.0 * X[:, 0].mean(axis=1)
    fit, held = spread.screen.inner_split(y, 1 / 3, 0, False)
    y[fit[:2]] = [-10.0, 10.0]  # the fitted part spans every held-out target
    asked = _serve_as_every_split(monkeypatch, X, y)
    tiny = dict(d_model=8, n_heads=2, n_blocks=1, d_ff=8, max_epochs=2, pretrain_epochs=0, head_refit="ridge")
    monkeypatch.setitem(spread.screen.CANDIDATES, "tiny", tiny)
    spread.main(["--datasets", "Toy", "--seeds", "0", "--candidate", "tiny", "--data-dir", "x"])
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert asked == ["train"] and row["dataset"] == "Toy" and row["seed"] == 0
    assert row["mean_target"] == pytest.approx(np.sqrt(np.mean((y[held] - y[fit].mean()) ** 2)))
    assert row["clipped"] <= row["rmse"] and 0.0 <= row["outside"] <= 1.0 and row["spread"] >= 0.0


def _toy_treatment_candidates(monkeypatch, without: str, with_differences: str) -> list:
    """A toy TRAIN served for every split, and the screen candidates ``without`` and ``with_differences`` (the input's
    differences) as tiny networks; returns the splits asked for."""
    import sys

    import numpy as np

    rng = np.random.default_rng(0)
    asked = _serve_as_every_split(monkeypatch, rng.normal(size=(30, 1, 10)), rng.normal(size=30))
    tiny = dict(d_model=8, n_heads=2, n_blocks=1, d_ff=8, max_epochs=1, pretrain_epochs=0, validation_fraction=0.0)
    candidates = sys.modules["screen_defaults"].CANDIDATES
    monkeypatch.setitem(candidates, without, tiny)
    monkeypatch.setitem(candidates, with_differences, dict(tiny, input_differences=True))
    return asked


def test_treatment_selection_reads_only_train_chooses_on_the_inner_split_and_resumes(
    tmp_path, monkeypatch, capsys, sibling_script
):
    """benchmarks/treatment_selection.py chooses between the two input treatments on a split inside the screen's
    fitted part, reuses stored outer rows, never asks for TEST, and skips what finished."""
    import numpy as np

    treat = sibling_script("treatment_selection.py")
    asked = _toy_treatment_candidates(monkeypatch, treat.DEFAULTS, treat.DIFFERENCES)
    stored = tmp_path / "screen.jsonl"
    stored.write_text(json.dumps(dict(candidate=treat.DEFAULTS, dataset="Toy", seed=0, score=123.0)) + "\n")
    out = tmp_path / "treatment.jsonl"
    argv = ["--datasets", "Toy", "--seeds", "0", "--data-dir", "x", "--results", str(stored), "--out", str(out)]
    treat.main(argv)
    (row,) = treat.read_results(out)
    assert asked == ["train"] and row["outer " + treat.DEFAULTS] == 123.0  # the stored row, not a new fit
    assert row["chosen"] == min(treat.DEFAULTS, treat.DIFFERENCES, key=lambda c: row["inner " + c])
    assert np.isfinite(row["inner " + treat.DEFAULTS]) and np.isfinite(row["outer " + treat.DIFFERENCES])
    treat.main(argv)  # finished: nothing fitted again
    assert len(treat.read_results(out)) == 1
    printed = capsys.readouterr().out
    assert "| Toy | 0 |" in printed and "over 1 (set, seed) pairs" in printed
    assert treat.choice(row, margin=0.0) == treat.DEFAULTS  # no inner RMSE is below 0: the defaults stay
    assert "| defaults | 1.000 |" in treat.table([row], margin=0.0)


@pytest.mark.parametrize("margin, chosen", [(0.0, False), (1e9, True)])
def test_treatment_auto_scores_test_and_fits_the_defaults_only_where_the_choice_differs(
    tmp_path, monkeypatch, capsys, sibling_script, margin, chosen
):
    """benchmarks/treatment_auto.py: "auto" on TRAIN scored on TEST; the row without the differences is "auto"'s own
    refit where it kept that treatment, a separate fit of input_differences=False where it took the differences (not
    the default, "auto" since 2026-11-27); a rerun skips what finished."""
    import numpy as np

    from eadct.estimators import _treatment

    auto = sibling_script("treatment_auto.py")
    rng = np.random.default_rng(0)
    data = {"train": (rng.normal(size=(24, 1, 10)), rng.normal(size=24)), "test": (rng.normal(size=(6, 1, 10)),
                                                                                  rng.normal(size=6))}  # fmt: skip
    monkeypatch.setattr(auto, "_load", lambda name, dirs, split: data[split])
    monkeypatch.setattr(_treatment, "MARGIN", margin)
    monkeypatch.setattr(_treatment, "NETWORK_BELOW", float("inf"))  # the network chooses on these random series
    fits, plain_fit = [], auto._fit
    tiny = dict(d_model=8, n_heads=2, n_blocks=1, d_ff=8, max_epochs=1, pretrain_epochs=0)

    def tiny_fit(*args, **params):
        fits.append(params.get("input_differences"))
        return plain_fit(*args, **params, **tiny)

    monkeypatch.setattr(auto, "_fit", tiny_fit)
    out = tmp_path / "auto.jsonl"
    argv = ["--datasets", "Toy", "--seeds", "0", "--data-dir", "x", "--out", str(out)]
    auto.main(argv)
    auto.main(argv)  # finished: nothing fitted again
    (row,) = auto.read_jsonl(out)
    assert fits == (["auto", False] if chosen else ["auto"]) and row["chosen"] is chosen
    if not chosen:
        assert row["defaults_rmse"] == row["auto_rmse"] and row["defaults_fit_s"] < row["auto_fit_s"]
    assert "| Toy | 1 |" in capsys.readouterr().out


def test_treatment_short_choice_refits_only_the_short_candidates_on_the_stored_inner_split(
    tmp_path, monkeypatch, capsys, sibling_script
):
    """benchmarks/treatment_short_choice.py: for each stored row, the two short candidates on the same inner split of
    TRAIN, both choices with the margin, the hold-out ratio the short choice gives; TRAIN only, resumable."""

    short = sibling_script("treatment_short_choice.py")
    asked = _toy_treatment_candidates(monkeypatch, short.SHORT, short.SHORT_DIFFERENCES)
    d, f = short.DEFAULTS, short.DIFFERENCES
    stored = tmp_path / "treatment.jsonl"
    stored.write_text(json.dumps({"dataset": "Toy", "seed": 0, f"inner {d}": 1.0, f"inner {f}": 0.4,
                                  f"outer {d}": 2.0, f"outer {f}": 1.0}) + "\n")  # fmt: skip
    out = tmp_path / "short.jsonl"
    argv = ["--stored", str(stored), "--data-dir", "x", "--out", str(out)]
    short.main(argv)
    short.main(argv)  # finished: nothing fitted again
    (row,) = short.read_results(out)
    assert asked == ["train"] and row[f"outer {d}"] == 2.0
    full, chosen = short.choices(row)
    assert full is True and chosen == (row[f"inner {short.SHORT_DIFFERENCES}"] < 0.5 * row[f"inner {short.SHORT}"])
    printed = capsys.readouterr().out
    assert f"| {0.5 if chosen else 1.0:.3f} |" in printed and "on 0 of 0 Tecator pairs" in printed


def test_treatment_proxy_choice_chooses_by_its_margin_and_reads_only_train(monkeypatch, capsys, sibling_script):
    """benchmarks/treatment_proxy_choice.py (the package's proxy with a margin; the proxy's own tests are in
    tests/test_treatment.py): the differences where the target is a series' slope hidden under a level that varies far
    more, the values where the target is the level; only TRAIN is read, by seeds or all of it."""
    import numpy as np

    proxy = sibling_script("treatment_proxy_choice.py")
    rng, n, t = np.random.default_rng(0), 100, np.linspace(0, 1, 32)
    level, slope = rng.normal(0, 5, n), rng.normal(0, 1, n)
    X = (level[:, None] + slope[:, None] * t + 0.01 * rng.normal(size=(n, 32)))[:, None, :]
    assert proxy.proxy_choice(X, slope**2, margin=0.8)["chosen"]
    assert not proxy.proxy_choice(X, level**2, margin=0.8)["chosen"]
    assert not proxy.proxy_choice(X[:11], slope[:11] ** 2)["chosen"]  # too few series: no choice
    asked = _serve_as_every_split(monkeypatch, X, slope**2)
    proxy.main(["--extra-datasets", "Toy", "--seeds", "6", "--margin", "0.8", "--data-dir", "x"])
    assert asked == ["train"] and "fresh, other sets: the proxy (margin 0.8) equals" in capsys.readouterr().out
    proxy.main(["--all-train", "--extra-datasets", "Toy", "--margin", "0.8", "--data-dir", "x"])
    assert asked == ["train", "train"] and "| Toy | 100 |" in capsys.readouterr().out.split("differences |")[0]


def test_default_fit_times_runs_the_reference_first_and_last_and_resumes(tmp_path, monkeypatch, capsys, sibling_script):
    """benchmarks/default_fit_times.py: the main job's fit before and after the sets, each fit as a ratio to their
    mean, a set not on disk skipped by name, and a rerun fits nothing again."""
    times = sibling_script("default_fit_times.py")
    fitted = []

    def fake_run(name, folder, random_state=0):
        fitted.append(name)
        return dict(dataset=name, n_train=10, fit_s=100.0 if name == times.REFERENCE else 400.0, test_rmse=1.0)

    monkeypatch.setattr(times, "run", fake_run)
    monkeypatch.setattr(times, "_folder", lambda name, dirs: None if name == "Missing" else "dir")
    out = tmp_path / "times.jsonl"
    argv = ["--datasets", "Tecator", "Missing", "--out", str(out)]
    times.main(argv)
    times.main(argv)  # finished: nothing fitted again
    assert fitted == [times.REFERENCE, "Tecator", times.REFERENCE]
    printed = capsys.readouterr().out
    assert "Missing: not under" in printed and "| Tecator | 10 | 400.0 | 4.00 | RMSE 1 | **no** |" in printed
    assert "0 of 1 target fits within 300 s" in printed


def test_pack_results_keeps_every_record_and_the_furthest_fits_within_the_limit(
    tmp_path, monkeypatch, capsys, sibling_script
):
    pack = sibling_script("pack_results.py")
    monkeypatch.chdir(tmp_path)
    unit = Path("res") / "tables" / "Set" / "model"
    (unit / "ckpt").mkdir(parents=True)
    (unit / "seed0.json").write_text('{"accuracy": 0.5}')
    (unit / "search_trials.jsonl").write_text("{}\n" * 10)
    weights = torch.zeros(200_000)  # about 0.8 MB per checkpoint
    states = {"pre": ("pretrain", 300), "early": ("finetune", 5), "late": ("finetune", 80)}
    for name, (stage, epoch) in states.items():
        state = {"stage": stage, "stage_done": False, "epoch": epoch, "network": weights}
        torch.save(state, unit / "ckpt" / f"{name}.pt")
    (unit / "ckpt" / "cut.pt").write_bytes(b"cut short")  # a writer stopped mid-file
    (unit / "ckpt" / "late.ptabc.tmp").write_bytes(b"x" * 1000)  # the checkpointer's temporary, left by a kill

    names = pack.pack(Path("res"), str(tmp_path / "out" / "g.tar"), part_mb=0.5, total_mb=1.8)

    assert names == [str(tmp_path / "out" / f"g.tar.{i:02d}") for i in range(len(names))] and len(names) == 4
    assert all(Path(n).stat().st_size <= 0.5 * pack.MB for n in names)
    joined = tmp_path / "joined.tar"
    joined.write_bytes(b"".join(Path(n).read_bytes() for n in names))
    with tarfile.open(joined) as tar:
        packed = set(tar.getnames())
    kept = {"seed0.json", "search_trials.jsonl", "ckpt/late.pt", "ckpt/early.pt"}
    assert packed == {str(unit / k) for k in kept}  # fine-tuning first; the rest did not fit
    out = capsys.readouterr().out
    assert "left out" in out and "pre.pt" in out and "cut.pt" in out and "late.ptabc.tmp" in out
    with pytest.raises(SystemExit):
        pack.main(["nowhere", "x"])


def test_gpu_sharing_times_fits_that_start_together_and_names_bad_arguments(capsys, sibling_script):
    sharing = sibling_script("gpu_sharing.py")
    sharing.main(["--device", "cpu", "--processes", "1", "2", "--epochs", "2", "--modes", "plain"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| plain")]
    assert [row.split("|")[2].strip() for row in rows] == ["1", "2"]
    assert rows[0].split("|")[5].strip() == "1.00x" and float(rows[1].split("|")[3]) > 0
    with pytest.raises(SystemExit):
        sharing.main(["--epochs", "1"])
    with pytest.raises(RuntimeError, match="exited with"):  # the fit fails: the row names it, nothing hangs
        sharing.run_row(1, 2, "nodevice", dict(os.environ))


def test_difference_channels_appends_the_differences_reads_only_train_and_resumes(
    tmp_path, monkeypatch, capsys, sibling_script
):
    """benchmarks/difference_channels.py fits each variant on the screen's split of TRAIN with its difference
    channels appended, never asks for TEST, and skips what finished."""
    import numpy as np

    dc = sibling_script("difference_channels.py")
    X = np.array([[[1.0, 2.0, 4.0, 7.0]], [[0.0, 0.0, 3.0, 3.0]]])
    np.testing.assert_array_equal(dc.channels(X, "stem"), X)
    np.testing.assert_array_equal(dc.channels(X, "x_d2")[:, 1], [[0.0, 1.0, 1.0, 1.0], [0.0, 0.0, 3.0, -3.0]])
    assert dc.channels(X, "x_dx_d2").shape == (2, 3, 4)
    asked = _toy_treatment_candidates(monkeypatch, dc.BASE, "unused")
    out = tmp_path / "channels.jsonl"
    argv = ["--dataset", "Toy", "--variants", "stem", "x_d2", "--seeds", "0", "--data-dir", "x", "--out", str(out)]
    dc.main(argv)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert asked == ["train"] and [r["variant"] for r in rows] == ["stem", "x_d2"]
    assert all(np.isfinite(r["rmse"]) and r["n_holdout"] == 10 for r in rows)
    dc.main(argv)  # finished: nothing fitted again
    assert len(out.read_text().splitlines()) == 2
    assert "| x_d2 |" in capsys.readouterr().out


def test_map_dropout_cost_times_both_masks_and_finds_them_bit_identical(capsys, sibling_script):
    """benchmarks/map_dropout_cost.py: the mask applied by a product (the package) and by torch.where (the candidate)
    give the same outputs and gradients from one seed, and both are timed; the package's class is restored."""
    from eadct.networks import maps

    before = maps._MapDropout
    cost = sibling_script("map_dropout_cost.py")
    cost.main(["--length", "20", "--channels", "2", "--steps", "1", "--repeats", "1", "--threads", "1"])
    printed = capsys.readouterr().out
    assert "bit-identical between the two: True" in printed
    assert "| torch.where (candidate) |" in printed and "| product with the bool mask (the package) |" in printed
    assert maps._MapDropout is before


def test_treatment_proxy_cost_times_each_shape_and_subsets_large_sets(capsys, monkeypatch, sibling_script):
    """benchmarks/treatment_proxy_cost.py: one row per shape; above MAX_SERIES the proxy reads a subset of that size."""
    from eadct.estimators import _proxy

    seen = []
    features = _proxy.features
    monkeypatch.setattr(_proxy, "features", lambda series: seen.append(len(series)) or features(series))
    monkeypatch.setattr(_proxy, "MAX_SERIES", 30)
    cost = sibling_script("treatment_proxy_cost.py")
    cost.main(["--shapes", "20x2x16", "50x1x8", "--threads", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 20 |") or "| 50 |" in line]
    assert len(rows) == 2 and seen == [20, 30]


def test_error_overlap_counts_the_misses_each_model_alone_makes_and_resumes(
    tmp_path, monkeypatch, capsys, sibling_script
):
    """benchmarks/error_overlap.py: both / only ours / only MiniRocket misses per seed, our confusions beside
    MiniRocket's, and a finished seed not fitted again."""
    from types import SimpleNamespace

    import numpy as np

    overlap = sibling_script("error_overlap.py")
    y_test = np.array([0, 0, 1, 1, 2])
    data = SimpleNamespace(task="classification", y_test=y_test)
    monkeypatch.setattr(overlap, "load_data", lambda name, dirs: data)
    fitted = []

    def fake_fit(data_, seed, n_jobs):
        fitted.append(seed)
        return {"seed": seed, "ours": ["0", "1", "1", "0", "2"], "minirocket": ["0", "1", "1", "1", "1"]}

    monkeypatch.setattr(overlap, "fit_seed", fake_fit)
    argv = ["--dataset", "Toy", "--seeds", "0", "1", "--data-dir", "x", "--out", str(tmp_path / "o.jsonl")]
    overlap.main(argv)
    overlap.main(argv)
    assert fitted == [0, 1]
    printed = capsys.readouterr().out
    # ours misses series 1 and 3, MiniRocket 1 and 4: both 1, only ours 1, only MiniRocket 1
    assert "| 0 | 0.6000 | 0.6000 | 1 | 1 | 1 |" in printed
    assert "| 0 -> 1 | 2 | 2 |" in printed and "| 1 -> 0 | 2 | 0 |" in printed


def test_scale_spread_reads_train_only_and_marks_the_sets_wide_scales_acts_on(capsys, monkeypatch, sibling_script):
    """benchmarks/scale_spread.py: TRAIN only, the widest channel's spread, and "yes" only past each threshold (the
    classifier's default 10^2, then "auto"'s SCALE_SPREAD)."""
    import numpy as np

    spread = sibling_script("scale_spread.py")
    rng = np.random.default_rng(0)
    data = {
        "Quiet": rng.normal(size=(20, 2, 16)),
        "Loud": rng.normal(size=(20, 2, 16)) * np.r_[[1e-3] * 10, [1e3] * 10][:, None, None],
        "Counts": rng.normal(size=(20, 2, 16)) * np.r_[[1.0] * 10, [10**2.5] * 10][:, None, None],
    }
    asked = []

    def fake_load(name, split, data_dir, **kwargs):
        asked.append(split)
        if name not in data:
            raise spread.DatasetNotFoundError(name)
        return data[name], np.zeros(20)

    monkeypatch.setattr(spread, "load_dataset", fake_load)
    spread.main(["--datasets", "Quiet", "Loud", "Counts", "Missing"])
    out = capsys.readouterr().out
    assert set(asked) == {"train"} and "Missing: not found" in out
    rows = {line.split(" | ")[0][2:]: line for line in out.splitlines() if line.startswith("| ")}
    assert rows["Quiet"].startswith("| Quiet | 2 | 20 |") and rows["Quiet"].endswith("| no | no |")
    assert rows["Loud"].startswith("| Loud | 2 | 20 |") and rows["Loud"].endswith("| **yes** | **yes** |")
    assert rows["Counts"].endswith("| **yes** | no |")  # 10^2.5: the classifier's default acts, "auto" does not
    assert 'EADCTClassifier() (10^2.00), "auto" (10^3.00)' in out


def test_fit_time_by_shape_separates_the_epochs_costs_and_scales_them_to_the_series(
    capsys, monkeypatch, sibling_script
):
    """benchmarks/fit_time_by_shape.py: from fits whose time is linear in the epochs, the estimate is exact."""
    shape = sibling_script("fit_time_by_shape.py")
    calls = []

    pre, fine = shape.DEFAULTS.pretrain_epochs, shape.DEFAULTS.max_epochs  # the classifier's defaults' epochs

    def fake_fit(X, y, threads, pretrain_epochs=pre, max_epochs=fine, **params):
        calls.append((len(X), pretrain_epochs, max_epochs, params))
        per_series = len(X) / 10  # seconds per epoch grow with the series; 3 s of fixed cost
        return 3.0 + per_series * (2.0 * pretrain_epochs + 1.0 * max_epochs)

    monkeypatch.setattr(shape, "timed_fit", fake_fit)
    monkeypatch.setattr(shape, "main_job", lambda n_jobs: {"fit_s": 60.0})
    shape.main(["--shapes", "big=40x2x8", "small=5x1x4", "--sample", "10", "--check", "30x1x4", "--threads", "1"])
    out = capsys.readouterr().out
    # on 40 series from a sample of 10: 3 + 4 * (pre * 2 + fine * 1) s (403 s at 20 + 60), against the main job's 60 s
    big = 3 + 4 * (2 * pre + fine)
    assert f"| big (40 x 2 x 8) | 40 | 5 | 4.00 | 8.00 | {big / 60:.1f} | {big / 60:.0f} |" in out
    # fewer series than the sample: all of them, 3 + pre * 1 + fine * 0.5 s
    small = 3 + pre + 0.5 * fine
    assert f"| small (5 x 1 x 4) | 5 | 1 | 0.50 | 1.00 | {small / 60:.1f} | {small / 60:.0f} |" in out
    assert "ratio 1.00" in out and calls[-1][1:] == (pre, fine, {})  # the check fits the defaults whole
    assert {c[0] for c in calls[:4]} == {10} and all(c[3] == {"average_epochs": 1} for c in calls[:4])


def test_classifier_input_blend_reads_only_train_blends_probabilities_and_resumes(
    tmp_path, monkeypatch, capsys, sibling_script
):
    """benchmarks/classifier_input_blend.py: TRAIN only, the screen's split, the part means by the library's rule,
    blends that run from the network's probabilities (w=0) to the linear model's (w=1), and a rerun that skips
    what is done."""
    import numpy as np

    from eadct.networks import part_means

    blend = sibling_script("classifier_input_blend.py")
    split = sibling_script("screen_defaults.py").inner_split
    rng = np.random.default_rng(0)
    y = np.repeat(np.array(["a", "b"]), 15)
    X = rng.normal(size=(30, 2, 24))
    X[y == "b", 1, :6] += 3.0  # the classes differ in the first part's level: the linear model reads it
    asked, fits = _serve_as_every_split(monkeypatch, X, y), []
    F = blend.part_features(X, 4)
    library = part_means(torch.as_tensor(X.transpose(0, 2, 1)), None, 4).numpy()  # (B, parts * C), part by part
    per_part = F.reshape(30, 2, 5)[:, :, 1:].transpose(0, 2, 1).reshape(30, -1)
    assert np.allclose(per_part, library) and np.allclose(F.reshape(30, 2, 5)[:, :, 0], X.mean(axis=2))

    class Uninformed:  # a network that knows nothing: every class equally likely
        classes_ = np.array(["a", "b"])

        def predict_proba(self, Xh):
            return np.full((len(Xh), 2), 0.5)

    def fake_fit(name, candidate, X_, y_, seed, holdout=1 / 3):
        fit, held = split(np.asarray(y_), holdout, seed, True)
        fits.append((seed, len(fit)))
        return Uninformed(), fit, held, 0.0

    monkeypatch.setattr(blend, "fit_candidate", fake_fit)
    out = tmp_path / "blend.jsonl"
    args = ["--datasets", "Toy", "--seeds", "0", "1", "--parts", "4", "--weights", "0", "1", "--out", str(out),
            "--data-dir", "x"]  # fmt: skip
    blend.main(args)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert asked == ["train"] and [s for s, _ in fits] == [0, 1]
    for row in rows:
        assert row["blend_0"] == row["network"] and row["blend_1"] == row["linear"] == 1.0
    blend.main(args)  # resumes: nothing fitted again
    assert len(fits) == 2 and len(out.read_text().splitlines()) == 2
    blend.main(["--report", str(out)])
    assert "| blend_1 | +0.5" in capsys.readouterr().out
    # the network column as the screen's rows: its accuracy, the log-loss of its probabilities (log 2 for 0.5 each)
    screen = sibling_script("screen_defaults.py")
    rows_out = tmp_path / "screen.jsonl"
    for _ in range(2):  # written once
        blend.main(["--report", str(out), "--screen-rows", str(rows_out)])
    converted = screen.read_results(rows_out)
    expected = [("Toy", r["seed"], r["network"]) for r in rows]
    assert [(r["dataset"], r["seed"], r["score"]) for r in converted] == expected
    assert all(abs(r["log_loss"] - np.log(2)) < 1e-12 and r["task"] == "classification" for r in converted)
    assert "Toy" in screen.report(converted, [rows[0]["candidate"]])
