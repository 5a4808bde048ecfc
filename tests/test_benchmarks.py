"""The user-facing benchmarks of benchmarks/ run on tiny inputs (the screens and diagnostics of research/ are not
tested: research/README.md)."""

from __future__ import annotations

import importlib.util
import json
import os
import tarfile
from pathlib import Path

import numpy as np
import pytest
import torch

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPT = BENCHMARKS / "attention_speed_memory.py"


def _script(path: Path):
    """Import a benchmark script as a module; restore torch's thread count after (main() sets its own)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    threads = torch.get_num_threads()
    yield module
    torch.set_num_threads(threads)


@pytest.fixture
def bench():
    yield from _script(SCRIPT)


@pytest.fixture
def sibling_script(monkeypatch):
    """Import a benchmark script that imports its siblings (``benchmarks/`` on the path): ``sibling_script(name)``;
    torch's thread count is restored after the test."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    threads = torch.get_num_threads()
    yield lambda name: next(_script(BENCHMARKS / name))
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
    assert {c[0] for c in calls[:4]} == {10} and all(c[3] == {"options": {"average_epochs": 1}} for c in calls[:4])


def test_the_synthetic_scale_sets_span_four_decades_and_the_default_classifier_learns_one(sibling_script):
    """benchmarks/scale_synthetic.py: each set's amplitudes span orders of magnitude within a channel, with negative
    values, balanced classes; the default classifier (``wide_scales`` acting) learns a small one well above the
    largest class's share, without a LearnedNothingWarning."""
    import warnings

    from eadct import EADCTClassifier, LearnedNothingWarning

    scale = sibling_script("scale_synthetic.py")
    for kind in scale.KINDS:
        X, y = scale.make_scale_set(kind, n=40, seed=1)
        spread = X.std(axis=2)[:, 0]
        assert X.shape == (40, 3, 64) and (X < 0).any() and np.bincount(y).tolist() == [10] * 4
        assert spread.max() / spread.min() > 100, kind
    X, y = scale.make_scale_set("shape", n=40, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LearnedNothingWarning)
        clf = EADCTClassifier(random_state=0, n_jobs=1, max_epochs=20, pretrain_epochs=2).fit(X, y)
    assert clf.wide_scale_channels_.any()
    assert np.mean(clf.predict(X) == y) > 0.5  # the largest class holds 0.25
    with pytest.raises(ValueError, match="kind must be one of"):
        scale.make_scale_set("light")
