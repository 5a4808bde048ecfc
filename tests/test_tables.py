"""The table runner and report on tiny data: configs, search, resumable units, report, SIGKILL resume."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from eadct.tables import TableConfigError, available_tables, build_report, collect_results, load_table, run_table
from eadct.tables._config import PROFILE_KEYS
from eadct.tables._paired import ranks
from eadct.tables._report import read_published, summary
from eadct.tables._search import candidates, rank_key, rungs, search_split
from eadct.tables._store import result_path

PROFILES = """
[tiny]
description = "test: two candidates halved at 1 -> 2 epochs, 2 seeds of 2+1 epochs"
search = "halving"
n_candidates = 2
eta = 2
search_epochs = [1, 2]
pretrain_share = 0.5
search_validation = 0.3
search_seed = 0
seeds = [0, 1]
max_epochs = 2
pretrain_epochs = 1
n_iter_no_change = 5

[tiny.params]
d_ff = 16
n_heads = 2
batch_size = 16
device = "cpu"

[tinydefaults]
description = "test: the estimators' defaults, no search, one seed of 2+1 epochs"
base = "defaults"
search = "none"
n_candidates = 1
eta = 2
search_epochs = [1]
pretrain_share = 0.25
search_validation = 0.25
search_seed = 0
seeds = [0]
max_epochs = 2
pretrain_epochs = 1
n_iter_no_change = 5

[tinydefaults.params]
d_ff = 16
n_heads = 2
batch_size = 16
device = "cpu"
"""

TABLE = """
[table]
name = "tinytable"
title = "Tiny table"
published = "table2.csv"
datasets = ["TinyTabC", "TinyTabR", "NotOnDisk"]

[space]
d_model = [8, 16]
n_blocks = [1]
alpha = [0.1, 0.9]

[models.Transformer]
architecture = "transformer"
search = ["d_model", "n_blocks"]

[models.EA-DC-Transformer]
architecture = "ea-dc-transformer"
search = ["d_model", "n_blocks", "alpha"]

[models."w/o Convolution"]
inherit = "EA-DC-Transformer"
params = { beta = 0.0 }

[[targets]]
kind = "better_than"
model = "EA-DC-Transformer"
others = ["Transformer"]
"""


def _write_ts(folder: Path, name: str, X: np.ndarray, y, regression: bool) -> None:
    target = folder / name
    target.mkdir(parents=True, exist_ok=True)
    n, c, length = X.shape
    head = [f"@problemName {name}", "@timeStamps false", "@missing false", f"@univariate {str(c == 1).lower()}"]
    if c > 1:
        head.append(f"@dimensions {c}")
    head += ["@equalLength true", f"@seriesLength {length}"]
    head.append("@targetLabel true" if regression else "@classLabel true " + " ".join(sorted(set(map(str, y)))))
    head.append("@data")
    for split, rows in (("TRAIN", [i for i in range(n) if i % 4 < 2]), ("TEST", [i for i in range(n) if i % 4 >= 2])):
        lines = [":".join(",".join(f"{v:.5f}" for v in X[i, ch]) for ch in range(c)) + f":{y[i]}" for i in rows]
        (target / f"{name}_{split}.ts").write_text("\n".join(head + lines) + "\n")


@pytest.fixture(scope="module")
def tiny_setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("tables")
    rng = np.random.default_rng(0)
    n, length = 40, 16
    y = np.arange(n) % 2
    X = 0.3 * rng.normal(size=(n, 2, length))
    X[y == 1, 0] += 1.0
    _write_ts(root / "data", "TinyTabC", X, np.where(y == 1, "b", "a"), regression=False)
    target = X[:, 0].mean(axis=1)
    _write_ts(root / "data", "TinyTabR", X[:, :1], np.round(target, 4), regression=True)
    (root / "cfg").mkdir()
    (root / "cfg" / "profiles.toml").write_text(PROFILES)
    (root / "cfg" / "tiny.toml").write_text(TABLE)
    return root


def test_shipped_configs_load_and_share_units():
    assert set(available_tables()) >= {"table1", "table2", "table3", "table4", "extras"}
    t2, t4 = load_table("table2"), load_table("table4")
    assert list(t2.models) == [
        "LSTM",
        "GRU",
        "ResNet",
        "DilatedConv",
        "Transformer",
        "DC-Transformer",
        "EA-DC-Transformer",
    ]
    for name in available_tables():
        table = load_table(name)
        assert {"quick", "full"} <= set(table.profiles)
        for p in table.profiles.values():
            assert p.seeds and p.search_epochs
    # the ablation bases are the main table's rows: same unit directories, so results are shared
    for d in ("UWaveGestureLibrary", "Handwriting"):
        assert t2.model_key("EA-DC-Transformer", d, "quick") == t4.model_key("EA-DC-Transformer-Base", d, "quick")
        assert t2.model_key("Transformer", d, "quick") == t4.model_key("Transformer-Base", d, "quick")
        assert t4.model_key("w/o Convolution", d, "quick") != t4.model_key("EA-DC-Transformer-Base", d, "quick")
    # the paper's search space (MODEL_SPEC section 2)
    assert t2.space["alpha"] == [0.1, 0.3, 0.5, 0.7, 0.9] and len(t2.space["attention_ratio"]) == 7
    # the evolving table adds only the DC-Transformer row to the accuracy table's units, on the same sets
    acc, evo = load_table("accuracy"), load_table("evolving")
    assert evo.datasets == acc.datasets
    for d in ("JapaneseVowels", "FloodModeling1"):
        for row in ("EA-DC (defaults)", "Transformer (defaults)"):
            assert evo.model_key(row, d, "defaults") == acc.model_key(row, d, "defaults")
        dc = evo.model_key("DC-Transformer (defaults)", d, "defaults")
        assert dc != acc.model_key("EA-DC (defaults)", d, "defaults")
    assert load_table("extras").models["MiniRocket"].kind == "minirocket"
    assert load_table("extras").profile("quick").search == "none"
    published = read_published("table2.csv")
    assert published["UWaveGestureLibrary"]["EA-DC-Transformer"] == pytest.approx(0.873)


def test_bad_configs_name_the_problem(tmp_path):
    with pytest.raises(TableConfigError, match="No table 'table9'"):
        load_table("table9")
    (tmp_path / "profiles.toml").write_text(PROFILES.replace('search = "halving"', 'search = "grid"'))
    (tmp_path / "t.toml").write_text(TABLE)
    with pytest.raises(TableConfigError, match="search='grid'"):
        load_table(tmp_path / "t.toml")
    (tmp_path / "profiles.toml").write_text(PROFILES)
    (tmp_path / "t.toml").write_text(TABLE.replace('search = ["d_model", "n_blocks"]', 'search = ["lr"]'))
    with pytest.raises(TableConfigError, match=r"searches \['lr'\], which \[space\] does not list"):
        load_table(tmp_path / "t.toml")
    (tmp_path / "t.toml").write_text(TABLE.replace('inherit = "EA-DC-Transformer"', 'inherit = "Nope"'))
    with pytest.raises(TableConfigError, match="inherits 'Nope'"):
        load_table(tmp_path / "t.toml")
    assert "dataset_params" in PROFILE_KEYS


def test_candidates_and_rungs():
    t2 = load_table("table2")
    prof = t2.profile("cpu-search")
    cands = candidates(t2, t2.models["EA-DC-Transformer"], prof)
    assert len(cands) == prof.n_candidates and len({json.dumps(c, sort_keys=True) for c in cands}) == len(cands)
    assert cands[0] == {"d_model": 64, "n_blocks": 2, "alpha": 0.5, "beta": 0.3, "attention_ratio": 0.25}  # defaults
    assert candidates(t2, t2.models["ResNet"], prof) == [{}]
    assert candidates(t2, t2.models["EA-DC-Transformer"], t2.profile("quick")) == [cands[0]]  # quick: no search
    assert rungs(prof, 6) == [(6, 15), (3, 45)]
    full = t2.profile("full")
    assert rungs(full, 48) == [(48, 12), (16, 36), (6, 100), (2, 200)]


def test_search_split_is_stratified_and_inside_train(tiny_setup):
    from eadct.tables import load_data

    data = load_data("TinyTabC", [tiny_setup / "data"])
    tr, va = search_split(data, 0.3, 0)
    assert len(set(tr) | set(va)) == len(data.y_train) and not set(tr) & set(va)
    assert set(data.y_train[va]) == {"a", "b"}


def test_rank_key_breaks_score_ties_by_validation_loss_then_by_index():
    def trial(c, score, loss="absent"):
        return {"candidate": c, "score": score, **({} if loss == "absent" else {"valid_loss": loss})}

    accuracy = [trial(0, 0.9, 0.40), trial(1, 0.9, 0.20), trial(2, 0.95, 0.90), trial(3, 0.9, 0.20)]
    assert sorted(range(4), key=rank_key(accuracy, 1.0)) == [2, 1, 3, 0]
    # a rung with a trial recorded before the loss existed (or without one) is ordered by score and index
    for missing in ("absent", None, float("nan")):
        older = [*accuracy[:3], trial(3, 0.9, missing)]
        assert sorted(range(4), key=rank_key(older, 1.0)) == [2, 0, 1, 3]
    rmse = [trial(0, 2.0, 2.0), trial(1, 1.0, 1.0), trial(2, 1.0, 1.0)]
    assert sorted(range(3), key=rank_key(rmse, -1.0)) == [1, 2, 0]
    # the status names a rung whose cut fell inside a tie of score (the tie-breaker chose)
    from eadct.tables._status import _cut_tie

    assert _cut_tie([0.9, 0.9, 0.9, 0.8], 2) == (3, 2)
    assert _cut_tie([1.0, 0.9, 0.9], 2) == (2, 1)
    assert _cut_tie([1.0, 0.9, 0.8], 2) is None and _cut_tie([0.9, 0.9, 0.8], 2) is None


def test_runner_and_report_smoke(tiny_setup, tmp_path):
    table = load_table(tiny_setup / "cfg" / "tiny.toml")
    out = tmp_path / "results"
    logs = []
    counts = run_table(table, "tiny", out, data_dirs=[tiny_setup / "data"], log=logs.append)
    assert counts == {"run": 12, "skipped": 0, "missing_data": 6, "failed": 0}
    res = json.loads(result_path(out, table, "EA-DC-Transformer", "TinyTabC", "tiny", 1).read_text())
    assert res["metric"] == "accuracy" and 0.0 <= res["value"] <= 1.0
    for key in ("hyperparameters", "n_parameters", "versions", "machine", "git", "fit_s", "search"):
        assert key in res
    assert res["n_parameters"] > 0 and res["versions"]["torch"] and res["machine"]["device"] == "cpu"
    reg = json.loads(result_path(out, table, "Transformer", "TinyTabR", "tiny", 0).read_text())
    assert reg["metric"] == "rmse" and reg["value"] > 0
    assert reg["hyperparameters"]["head_refit"] is None  # a paper profile keeps the paper's fine-tuned head
    assert "head_alpha" not in reg["hyperparameters"]
    assert res["log_loss"] > 0 and "log_loss" not in reg  # the TEST probabilities' log-loss, classification only

    # the variant takes the base's chosen hyperparameters and changes only beta
    base = json.loads(result_path(out, table, "EA-DC-Transformer", "TinyTabC", "tiny", 0).read_text())
    variant = json.loads(result_path(out, table, "w/o Convolution", "TinyTabC", "tiny", 0).read_text())
    assert variant["hyperparameters"]["beta"] == 0.0
    for k in ("d_model", "n_blocks", "alpha"):
        assert variant["hyperparameters"][k] == base["hyperparameters"][k]
    # the search kept every trial: two candidates at 1 epoch, the best one at 2
    trials = [
        json.loads(x)
        for x in (result_path(out, table, "EA-DC-Transformer", "TinyTabC", "tiny", 0).parent / "search_trials.jsonl")
        .read_text()
        .splitlines()
    ]
    assert [(t["rung"], t["epochs"]) for t in trials] == [(0, 1), (0, 1), (1, 2)]
    assert all(t["valid_loss"] > 0 for t in trials)  # the log-loss that breaks ties of accuracy
    reg_folder = result_path(out, table, "EA-DC-Transformer", "TinyTabR", "tiny", 0).parent
    reg_trials = [json.loads(x) for x in (reg_folder / "search_trials.jsonl").read_text().splitlines()]
    assert all(t["valid_loss"] == t["score"] for t in reg_trials)  # RMSE: no separate loss
    # a second run does nothing
    again = run_table(table, "tiny", out, data_dirs=[tiny_setup / "data"], log=logs.append)
    assert again == {"run": 0, "skipped": 12, "missing_data": 6, "failed": 0}

    results = collect_results(table, "tiny", out)
    assert len(results) == 6 and all(len(v) == 2 for v in results.values())
    paths = build_report(table, "tiny", out, tmp_path / "reports", note="command: test")
    md = paths[0].read_text()
    assert paths[1].suffix == ".png" and paths[1].stat().st_size > 1000
    assert "| NotOnDisk | missing | missing | missing |" in md
    assert "avg rank" in md and "Eq. 12" in md and "+-" in md
    assert "EA-DC-Transformer better than our Transformer" in md
    loss_rows = [line for line in md.splitlines() if line.startswith("| TinyTabC |")]
    assert "TEST log-loss" in md and len(loss_rows) == 3 and loss_rows[2].count("+-") == 3  # score, size, loss
    # a table that compares a row pairs its log-loss with every other row's (its units are this table's: same keys)
    (tiny_setup / "cfg" / "compare.toml").write_text(
        TABLE.replace('datasets = ["TinyTabC"', 'compare = ["w/o Convolution"]\ndatasets = ["TinyTabC"')
    )
    md = build_report(
        load_table(tiny_setup / "cfg" / "compare.toml"), "tiny", out, tmp_path / "reports_c", figure=False
    )[0].read_text()
    loss_pairs = md.split("Paired comparisons of the TEST log-loss")[1].splitlines()
    assert loss_pairs[4].startswith("| w/o Convolution | Transformer | ")
    assert loss_pairs[5].startswith("| w/o Convolution | EA-DC-Transformer | ")
    assert all("(n=1)" in row and "(n=2)" in row for row in loss_pairs[4:6])  # one set, two seeds
    # a unit of before the log-loss leaves its row's mean out (here the only set: the row leaves the table)
    unit = result_path(out, table, "Transformer", "TinyTabC", "tiny", 1)
    unit.write_text(json.dumps({k: v for k, v in json.loads(unit.read_text()).items() if k != "log_loss"}))
    md = build_report(table, "tiny", out, tmp_path / "reports_old", figure=False)[0].read_text()
    assert [line for line in md.splitlines() if line.startswith("| TinyTabC |")][2].count("+-") == 2
    assert "| dataset | EA-DC-Transformer | w/o Convolution |" in md
    # a row that never ran is left out of the summary instead of emptying it
    import shutil

    for d in ("TinyTabC", "TinyTabR"):
        shutil.rmtree(result_path(out, table, "Transformer", d, "tiny", 0).parent)
    md = build_report(table, "tiny", out, tmp_path / "reports2", figure=False)[0].read_text()
    assert "every model except Transformer (no result at all) has a result: TinyTabC." in md
    assert "| **avg rank** (ours; paper on the same sets) | not run |" in md


def test_test_log_loss_is_sklearns_and_none_without_probabilities_or_with_a_class_train_lacks():
    from sklearn.linear_model import LogisticRegression, RidgeClassifier
    from sklearn.metrics import log_loss

    from eadct.tables._data import test_log_loss

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), np.array(["a", "b", "c"] * 10)
    model = LogisticRegression().fit(X, y)
    assert test_log_loss(model, X[:9], y[:9]) == pytest.approx(log_loss(y[:9], model.predict_proba(X[:9])))
    assert test_log_loss(model, X[:3], np.array(["c", "c", "c"])) > 0  # one TEST class: the labels are TRAIN's
    assert test_log_loss(model, X[:3], np.array(["a", "b", "d"])) is None
    assert test_log_loss(RidgeClassifier().fit(X, y), X, y) is None


def test_search_only_stops_before_the_units_and_the_refits_reuse_its_trials(tiny_setup, tmp_path):
    from eadct.tables.cli import main

    table = load_table(tiny_setup / "cfg" / "tiny.toml")
    out = tmp_path / "results"
    args = ["run", str(tiny_setup / "cfg" / "tiny.toml"), "--profile", "tiny", "--data-dir", str(tiny_setup / "data")]
    args += ["--out", str(out), "--datasets", "TinyTabC", "--threads", "1"]
    args += ["--models", "Transformer", "w/o Convolution"]
    assert main([*args, "--search-only"]) == 0
    assert not list(out.rglob("seed*.json"))  # no unit ran
    folder = result_path(out, table, "EA-DC-Transformer", "TinyTabC", "tiny", 0).parent
    trials = (folder / "search_trials.jsonl").read_text()  # the inherited variant searched its base
    assert len(trials.splitlines()) == 3 and (folder / "search.json").is_file()
    assert result_path(out, table, "Transformer", "TinyTabC", "tiny", 0).parent.joinpath("search.json").is_file()

    assert main([*args, "--seeds", "1"]) == 0  # one process per seed, as benchmarks/gpu_checks.sh runs the refits
    units = [result_path(out, table, m, "TinyTabC", "tiny", 1) for m in ("Transformer", "w/o Convolution")]
    assert sorted(out.rglob("seed*.json")) == sorted(units)
    assert (folder / "search_trials.jsonl").read_text() == trials  # no trial ran again


def test_status_reads_a_search_as_it_goes_and_names_bad_arguments(tiny_setup, tmp_path, capsys):
    from eadct.tables._status import table_status
    from eadct.tables.cli import main

    table = load_table(tiny_setup / "cfg" / "tiny.toml")
    out = tmp_path / "results"
    cfg = str(tiny_setup / "cfg" / "tiny.toml")
    where = ["--profile", "tiny", "--out", str(out), "--datasets", "TinyTabC"]
    (row,) = table_status(table, "tiny", out, ["TinyTabC"], ["EA-DC-Transformer"])
    assert row["done"] == [] and row["seeds"] == [0, 1] and row["search"]["state"] == "not started"
    assert [(x["planned"], x["done"]) for x in row["search"]["rungs"]] == [(2, 0), (1, 0)]
    run = ["run", cfg, "--data-dir", str(tiny_setup / "data"), *where, "--threads", "1", "--seeds", "0"]
    assert main([*run, "--models", "EA-DC-Transformer"]) == 0
    rows = {r["model"]: r for r in table_status(table, "tiny", out, ["TinyTabC"])}
    done = rows["EA-DC-Transformer"]
    assert done["done"] == [0] and done["refits"] == [] and done["search"]["state"] == "done"
    assert [(x["planned"], x["done"]) for x in done["search"]["rungs"]] == [(2, 2), (1, 1)]
    assert done["search"]["left_s"] is None and done["search"]["best"]["d_model"] in (8, 16)
    assert rows["w/o Convolution"]["search"] == {"state": "inherited", "from": "EA-DC-Transformer"}
    assert rows["Transformer"]["search"]["state"] == "not started"

    # a search stopped in its last rung, its running trial's checkpoint kept
    folder = result_path(out, table, "EA-DC-Transformer", "TinyTabC", "tiny", 0).parent
    (folder / "search.json").unlink()
    log = folder / "search_trials.jsonl"
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:2]))
    (folder / "ckpt").mkdir(exist_ok=True)
    (folder / "ckpt" / "search_r1_c1.pt").write_bytes(b"")
    (folder / "ckpt" / "seed1.pt").write_bytes(b"")
    (row,) = table_status(table, "tiny", out, ["TinyTabC"], ["EA-DC-Transformer"])
    search = row["search"]
    assert search["state"] == "running" and search["running"] == [(1, 1)] and row["refits"] == [1]
    assert [(x["planned"], x["done"]) for x in search["rungs"]] == [(2, 2), (1, 0)]
    trials = [json.loads(x) for x in log.read_text().splitlines()]
    assert search["rungs"][0]["best"] == max(t["score"] for t in trials)
    per_epoch = sum(t["time_s"] for t in trials) / sum(t["epochs"] + t["pretrain_epochs"] for t in trials)
    assert search["left_s"] == round(per_epoch * (2 + 1))  # one trial left: 2 fine-tuning + 1 pretraining epochs

    capsys.readouterr()
    assert main(["status", cfg, *where]) == 0
    text = capsys.readouterr().out
    assert "running: rung 0 (1 epoch) 2/2 best" in text and "checkpoint of rung 1 candidate 1" in text
    assert "1/2 (refit checkpoint: seed 1)" in text and "inherits EA-DC-Transformer's" in text
    assert main(["status", cfg, *where, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 3
    assert main(["status", cfg, "--profile", "tiny", "--out", str(tmp_path / "nope")]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["status", cfg, *where, "--models", "Nope"]) == 2
    assert "has no model ['Nope']" in capsys.readouterr().err


def test_rank_and_relative_difference():
    assert ranks([0.9, 0.8, 0.9], True).tolist() == [1.5, 3.0, 1.5]
    assert ranks([1.0, 2.0], False).tolist() == [1.0, 2.0]
    # six-seed means equal up to float noise tie (issue 87: they ranked 2.00 / 2.50 where 1.95 / 2.55 is right)
    assert ranks([0.1 + 0.2, 0.3, 0.2], True).tolist() == [1.5, 1.5, 3.0]
    m = {("a", "d1"): 1.0, ("b", "d1"): 3.0, ("a", "d2"): 2.0, ("b", "d2"): 2.0}
    s = summary(m, ["a", "b"], ["d1", "d2"], higher_is_better=False)
    assert s["a"]["rank"] == 1.25 and s["b"]["rank"] == 1.75
    assert s["a"]["reldiff"] == pytest.approx((-0.5 + 0.0) / 2)  # Eq. 12
    # the paper's Table 2 average ranks come out of the same code (their published Avg Rank row: 6.5 ... 1.2)
    pub = read_published("table2.csv")
    models = ["LSTM", "GRU", "ResNet", "DilatedConv", "Transformer", "DC-Transformer", "EA-DC-Transformer"]
    s = summary({(mm, d): pub[d][mm] for d in pub for mm in models}, models, list(pub), True)
    assert s["LSTM"]["rank"] == pytest.approx(6.5, abs=0.1) and s["EA-DC-Transformer"]["rank"] == pytest.approx(
        1.2, abs=0.1
    )


@pytest.mark.slow  # numba compiles MiniRocket for about a minute in a fresh process
def test_minirocket_row(tiny_setup, tmp_path):
    pytest.importorskip("numba")
    cfg = tiny_setup / "cfg" / "mr.toml"
    cfg.write_text(
        '[table]\nname = "mr"\ndatasets = ["TinyTabC", "TinyTabR"]\n[models.MiniRocket]\nkind = "minirocket"\n'
    )
    table = load_table(cfg)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as --threads 1 sets it
    try:
        counts = run_table(table, "tiny", tmp_path, data_dirs=[tiny_setup / "data"], seeds=[0], log=lambda *_: None)
        assert torch.get_num_threads() == 1  # numba's OpenMP layer does not leave later fits more threads
    finally:
        torch.set_num_threads(threads)
    assert counts["run"] == 2
    clf = json.loads(result_path(tmp_path, table, "MiniRocket", "TinyTabC", "tiny", 0).read_text())
    assert clf["value"] >= 0.8 and clf["n_parameters"] > 0  # the classes differ by a mean shift
    reg = json.loads(result_path(tmp_path, table, "MiniRocket", "TinyTabR", "tiny", 0).read_text())
    assert reg["machine"]["torch_threads"] == 1


def test_minirocket_leaves_torch_threads_as_it_found_them(monkeypatch):
    """numba's OpenMP layer resets the OpenMP threads torch uses (measured: 1 -> 2 on the 2-core CPU); the
    MiniRocket row puts them back, so the fits after it keep to --threads (the slow test above runs numba)."""
    pytest.importorskip("numba")
    from eadct.tables import _minirocket

    def like_numba(data, seed):
        torch.set_num_threads(2)
        return "fitted"

    monkeypatch.setattr(_minirocket, "_fit_minirocket", like_numba)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        assert _minirocket.fit_minirocket(None, 0) == "fitted"
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)


def test_sigkill_and_rerun_completes_without_repeating(tiny_setup, tmp_path):
    out = tmp_path / "results"
    cmd = [
        sys.executable,
        "-m",
        "eadct.tables",
        "run",
        str(tiny_setup / "cfg" / "tiny.toml"),
        "--profile",
        "tiny",
        "--data-dir",
        str(tiny_setup / "data"),
        "--out",
        str(out),
        "--datasets",
        "TinyTabC",
        "--threads",
        "1",
    ]
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    deadline = time.monotonic() + 120
    finished = []
    while time.monotonic() < deadline and proc.poll() is None:
        finished = sorted(out.rglob("seed*.json"))
        if finished:
            break
        time.sleep(0.02)
    assert finished, "no unit finished before the deadline: " + proc.stdout.read().decode()[-2000:]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {p: p.read_text() for p in out.rglob("seed*.json")}
    assert 0 < len(before) < 6, "the kill should land mid-sweep"

    again = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    after = sorted(out.rglob("seed*.json"))
    assert len(after) == 6  # 3 models x 2 seeds
    for p, text in before.items():
        assert p.read_text() == text  # finished units were not repeated
    n_run = 6 - len(before)
    assert f"{n_run} run, {len(before)} already done" in again.stdout
    for log in out.rglob("search_trials.jsonl"):
        keys = [(t["rung"], t["candidate"]) for t in map(json.loads, log.read_text().splitlines())]
        assert len(keys) == len(set(keys))  # no trial ran twice
    assert not list(out.rglob("*.pt"))  # checkpoints are cleaned up when their fit finishes


def test_representations_are_recorded_shared_units_completed_and_reported(tiny_setup, tmp_path):
    plain = load_table(tiny_setup / "cfg" / "tiny.toml")
    (tiny_setup / "cfg" / "repr.toml").write_text(
        TABLE.replace(
            'name = "tinytable"',
            'name = "tinyrepr"\ncompare = ["EA-DC-Transformer"]\nrepresentations = true\ntsne = "TinyTabC"',
        )  # fmt: skip
    )
    table = load_table(tiny_setup / "cfg" / "repr.toml")
    out, data = tmp_path / "results", [tiny_setup / "data"]
    models = ["Transformer", "EA-DC-Transformer"]
    # a unit that the plain table finished (same fit, shared) lacks the representation: refitted once
    run_table(plain, "tiny", out, data_dirs=data, datasets=["TinyTabC"], models=["Transformer"], seeds=[0])
    before = json.loads(result_path(out, plain, "Transformer", "TinyTabC", "tiny", 0).read_text())
    assert "representation" not in before
    counts = run_table(table, "tiny", out, data_dirs=data, datasets=["TinyTabC", "TinyTabR"], models=models)
    assert counts == {"run": 8, "skipped": 0, "missing_data": 0, "failed": 0}
    path = result_path(out, table, "Transformer", "TinyTabC", "tiny", 0)
    assert path == result_path(out, plain, "Transformer", "TinyTabC", "tiny", 0)
    after = json.loads(path.read_text())
    assert after["value"] == before["value"]  # the same seeded fit
    rep = after["representation"]
    stored = np.load(path.parent / rep["file"])
    from eadct.metrics import average_within_class_distance

    assert stored["Z"].shape == (after["n_test"], rep["width"])
    assert rep["avgwcd_normalized"] == pytest.approx(average_within_class_distance(stored["Z"], stored["y"], True))
    assert "representation" not in json.loads(result_path(out, table, "Transformer", "TinyTabR", "tiny", 0).read_text())
    assert run_table(table, "tiny", out, data_dirs=data, datasets=["TinyTabC", "TinyTabR"], models=models)["run"] == 0
    paths = build_report(table, "tiny", out, tmp_path / "reports")
    md = paths[0].read_text()
    assert "## Representations: AvgWCD (Eq. 13)" in md and "| EA-DC-Transformer | Transformer |" in md
    assert any(p.name == "tinyrepr_tiny_tsne.png" and p.stat().st_size > 1000 for p in paths)
    assert any(p.name == "tinyrepr_tiny_avgwcd.png" and p.stat().st_size > 1000 for p in paths)
    assert md.index("tinyrepr_tiny_avgwcd.png") < md.index("tinyrepr_tiny.png")  # the report's own figure first
    with pytest.raises(TableConfigError, match="tsne"):
        (tiny_setup / "cfg" / "bad.toml").write_text(TABLE.replace('title = "Tiny table"', 'tsne = "Nope"'))
        load_table(tiny_setup / "cfg" / "bad.toml")


def test_grid_table_sweeps_and_reports_selection_on_train(tiny_setup, tmp_path):
    (tiny_setup / "cfg" / "grid.toml").write_text(
        '[table]\nname = "tinygrid"\ndatasets = ["TinyTabC"]\n\n'
        '[grid]\narchitecture = "ea-dc-transformer"\nalpha = [0.1, 0.9]\nattention_ratio = [0.5]\n'
    )
    table = load_table(tiny_setup / "cfg" / "grid.toml")
    assert list(table.models) == ["alpha=0.1 attention_ratio=0.5", "alpha=0.9 attention_ratio=0.5"]
    assert table.sensitivity == ("alpha", "attention_ratio")
    assert table.models["alpha=0.9 attention_ratio=0.5"].params == {"alpha": 0.9, "attention_ratio": 0.5}
    out = tmp_path / "results"
    run_table(table, "tiny", out, data_dirs=[tiny_setup / "data"], seeds=[0])
    res = json.loads(result_path(out, table, "alpha=0.9 attention_ratio=0.5", "TinyTabC", "tiny", 0).read_text())
    assert res["hyperparameters"]["alpha"] == 0.9 and 0.0 <= res["valid_score"] <= 1.0
    paths = build_report(table, "tiny", out, tmp_path / "reports")
    md = paths[0].read_text()
    assert "## Sensitivity on TinyTabC: alpha, attention_ratio" in md
    assert "Selection on TRAIN only (best validation score) picks" in md
    assert any(p.name.endswith("_TinyTabC_sensitivity.png") for p in paths)
    (tiny_setup / "cfg" / "badgrid.toml").write_text(
        '[table]\nname = "g"\ndatasets = ["TinyTabC"]\n[grid]\nalpha = []\n'
    )
    with pytest.raises(TableConfigError, match=r"\[grid\] needs"):
        load_table(tiny_setup / "cfg" / "badgrid.toml")


def test_cli_mistakes_are_one_line_and_exit_2(tiny_setup, tmp_path, capsys):
    from eadct.tables.cli import main

    table = str(tiny_setup / "cfg" / "tiny.toml")
    mistakes = {
        ("report", table, "--profile", "tiyn"): "no profile 'tiyn'",
        ("report", "table9"): "No table 'table9'",
        ("run", table, "--profile", "tiny", "--datasets", "Nope"): "has no dataset ['Nope']",
        ("run", table, "--profile", "tiny", "--models", "LSTM"): "has no model ['LSTM']",
        ("run", table, "--profile", "tiny", "--data-dir", str(tmp_path / "none")): "is not a folder",
        ("report", table, "--profile", "tiny", "--out", str(tmp_path / "empty")): "holds no results",
        ("report", table, "--profile", "tiny", "--datasets", "Nope"): "has no dataset ['Nope']",
    }
    for argv, message in mistakes.items():
        assert main(list(argv) + ["--report-dir", str(tmp_path / "r")] * (argv[0] == "report")) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("eadct-tables: error: ") and err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "r").exists()  # nothing written


@pytest.mark.parametrize(
    "option,value", [("--threads", "0"), ("--threads", "-1"), ("--threads", "x"), ("--seeds", "-1")]
)
def test_counts_and_seeds_out_of_range_are_usage_errors(tiny_setup, capsys, option, value):
    """``--threads 0`` once meant "automatic" without saying so; now every count is a positive int and every seed
    non-negative, refused by argparse before anything runs."""
    from eadct.tables.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["run", str(tiny_setup / "cfg" / "tiny.toml"), "--profile", "tiny", option, value])
    assert stop.value.code == 2 and f"argument {option}: must be a" in capsys.readouterr().err


def test_a_backend_whose_extra_is_missing_is_one_line_and_exit_2(tiny_setup, tmp_path, capsys, monkeypatch):
    """The missing extra is named before anything runs: no unit is marked FAILED, nothing is written."""
    from eadct.tables._backends import BackendUnavailable
    from eadct.tables.cli import main

    table, out = tiny_setup / "cfg" / "tiny.toml", tmp_path / "results"
    argv = ["run", str(table), "--profile", "tiny", "--data-dir", str(tiny_setup / "data"), "--out", str(out)]
    for backend, module in (("ray", "ray"), ("dask", "distributed")):
        monkeypatch.setitem(sys.modules, module, None)  # import fails as where the extra is not installed
        assert main([*argv, "--backend", backend]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"eadct-tables: error: backend {backend!r} needs ") and err.count("\n") == 1, err
        assert f'pip install "eadct[{backend}]"' in err
        with pytest.raises(BackendUnavailable, match=f"eadct\\[{backend}\\]"):
            run_table(load_table(table), "tiny", out, data_dirs=[tiny_setup / "data"], backend=backend)
    assert not out.exists()


def test_two_drivers_on_one_folder_never_run_a_unit_or_a_trial_twice(tiny_setup, tmp_path, capsys):
    """A driver (a process of its own) claims its unit, then waits for the search that this test holds as another
    driver would; a second driver of the same unit stops at once naming the first; a third, of another seed,
    runs beside it. The shared search's trials are logged once, each unit runs once."""
    import threading

    from eadct.tables._store import search_lock
    from eadct.tables.cli import main

    table, out = load_table(tiny_setup / "cfg" / "tiny.toml"), tmp_path / "results"
    args = ["run", str(tiny_setup / "cfg" / "tiny.toml"), "--profile", "tiny", "--data-dir", str(tiny_setup / "data")]
    args += ["--out", str(out), "--datasets", "TinyTabC", "--models", "w/o Convolution", "--threads", "1"]
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONUNBUFFERED": "1"}
    root = result_path(out, table, "EA-DC-Transformer", "TinyTabC", "tiny", 0).parent  # the inherited search's
    lines: list[str] = []
    with search_lock(root, print, "EA-DC-Transformer", command="the test"):
        first = subprocess.Popen(
            [sys.executable, "-m", "eadct.tables", *args, "--seeds", "0"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        reader = threading.Thread(target=lambda: lines.extend(first.stdout), daemon=True)
        reader.start()
        deadline = time.monotonic() + 120
        while not any("waiting for the search" in x for x in lines) and time.monotonic() < deadline:
            assert first.poll() is None, "".join(lines)
            time.sleep(0.05)
        [waiting] = [x for x in lines if "waiting for the search" in x]
        assert f"another driver runs it, process {os.getpid()} on " in waiting and "(the test)" in waiting
        assert main([*args, "--seeds", "0"]) == 2  # the same unit: stops before running anything
        err = capsys.readouterr().err
        assert err.startswith("eadct-tables: error: ") and err.count("\n") == 1, err
        assert "another driver runs 1 of the units this run would run" in err and f"process {first.pid} on " in err
        assert "eadct-tables run " in err and "--seeds 0" in err  # the first driver's command
        assert not (root / "search_trials.jsonl").exists()  # nobody searched while the search was held
    assert main([*args, "--seeds", "1"]) == 0  # another unit of the same search, beside the first driver
    assert first.wait(timeout=300) == 0, "".join(lines)
    reader.join(timeout=10)
    trials = [json.loads(x) for x in (root / "search_trials.jsonl").read_text().splitlines()]
    assert len({(t["rung"], t["candidate"]) for t in trials}) == len(trials) == 3  # each trial once
    assert "1 run, 0 already done" in "".join(lines) and "1 run, 0 already done" in capsys.readouterr().out
    assert sorted(p.name for p in out.rglob("seed*.json")) == ["seed0.json", "seed1.json"]
    assert not list((out / ".drivers").iterdir())  # both drivers withdrew their claims


def test_a_results_folder_without_file_locks_warns_and_runs(tmp_path, monkeypatch):
    import errno

    import eadct.tables._store as store

    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(store.fcntl, "flock", no_locks)
    with pytest.warns(UserWarning, match="does not support file locks .*nothing keeps a second driver"):
        with store.claim_units(tmp_path, ["tiny/A/key/seed0.json"]), store.search_lock(tmp_path / "A", print, "A"):
            pass


def test_report_never_replaced_by_fewer_results_and_draws_without_matplotlib(tiny_setup, tmp_path, capsys, monkeypatch):
    from eadct.tables.cli import main

    table = load_table(tiny_setup / "cfg" / "tiny.toml")
    out, reports = tmp_path / "results", tmp_path / "reports"
    run_table(table, "tiny", out, data_dirs=[tiny_setup / "data"], datasets=["TinyTabC"], models=["Transformer"])
    md = build_report(table, "tiny", out, reports, figure=False)[0]
    assert "Results: 2 unit(s)." in md.read_text()
    (result_path(out, table, "Transformer", "TinyTabC", "tiny", 1)).unlink()
    argv = ["report", str(tiny_setup / "cfg" / "tiny.toml"), "--profile", "tiny", "--out", str(out)]
    argv += ["--report-dir", str(reports), "--no-figure"]
    assert main(argv) == 2
    assert "holds 2 unit result(s)" in capsys.readouterr().err and "Results: 2 unit(s)." in md.read_text()
    assert main(argv + ["--force"]) == 0 and "Results: 1 unit(s)." in md.read_text()
    capsys.readouterr()
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # the plots extra is not installed
    assert main(argv[:-1]) == 0
    captured = capsys.readouterr()
    assert 'pip install "eadct[plots]"' in captured.err and captured.out.strip() == str(md)


def test_a_report_on_part_of_the_datasets_shows_only_those(tiny_setup, tmp_path):
    from eadct.tables.cli import main

    table = load_table(tiny_setup / "cfg" / "tiny.toml")
    out, reports = tmp_path / "results", tmp_path / "reports"
    run_table(table, "tiny", out, data_dirs=[tiny_setup / "data"], models=["Transformer"], seeds=[0])
    argv = ["report", str(tiny_setup / "cfg" / "tiny.toml"), "--profile", "tiny", "--out", str(out), "--no-figure"]
    assert main(argv + ["--report-dir", str(reports / "all")]) == 0
    assert main(argv + ["--report-dir", str(reports / "part"), "--datasets", "TinyTabR"]) == 0
    whole, part = ((reports / d / "tinytable_tiny.md").read_text() for d in ("all", "part"))
    assert "| TinyTabC |" in whole and "| TinyTabR |" in whole
    assert "| TinyTabC |" not in part and "| TinyTabR |" in part and "Results: 1 unit(s)." in part


def test_a_report_over_seeds_beyond_the_profile_reads_their_units(tiny_setup, tmp_path, capsys):
    """``report --seeds`` reads the units that ``run --seeds`` fitted beyond the profile's seeds (same folders: seeds
    are not in a unit's key); the default report keeps to the profile's."""
    from eadct.tables.cli import main

    table = load_table(tiny_setup / "cfg" / "tiny.toml")
    out, reports = tmp_path / "results", tmp_path / "reports"
    unit = dict(data_dirs=[tiny_setup / "data"], datasets=["TinyTabR"], models=["Transformer"])
    run_table(table, "tiny", out, **unit)
    run_table(table, "tiny", out, **unit, seeds=[2])
    assert result_path(out, table, "Transformer", "TinyTabR", "tiny", 2).is_file()
    argv = ["report", str(tiny_setup / "cfg" / "tiny.toml"), "--profile", "tiny", "--out", str(out), "--no-figure"]
    assert main(argv + ["--report-dir", str(reports / "profile")]) == 0
    assert main(argv + ["--report-dir", str(reports / "three"), "--seeds", "0", "1", "2"]) == 0
    assert main(argv + ["--report-dir", str(reports / "bad"), "--seeds", "0", "0"]) == 2
    assert "--seeds must be distinct" in capsys.readouterr().err and not (reports / "bad").exists()
    profile, three = ((reports / d / "tinytable_tiny.md").read_text() for d in ("profile", "three"))
    assert "Seeds [0, 1];" in profile and "Results: 2 unit(s)." in profile
    assert "Seeds [0, 1, 2];" in three and "Results: 3 unit(s)." in three


def _rows_table(folder: Path, rows: str):
    """A table of the given ``[models...]`` rows (TOML), beside the shipped profiles: a row's key does not depend on
    the table that names it, so these are the keys of the same rows in research/configs/ (not shipped)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rows.toml"
    path.write_text(f'[table]\nname = "rows"\ntitle = "Rows"\ndatasets = ["ERing", "Tecator", "PLAID"]\n\n{rows}')
    return load_table(path)


# the rows of research/configs/candidates.toml these tests read
CANDIDATE_ROWS = """
[models."EA-DC (defaults)"]
architecture = "ea-dc-transformer"

[models."EA-DC (averaged)"]
architecture = "ea-dc-transformer"
params = { average_epochs = 20, validation_fraction = 0.0 }

[models."EA-DC (batch 8)"]
architecture = "ea-dc-transformer"
params = { batch_size = 8 }

[models."EA-DC (8 segments)"]
architecture = "ea-dc-transformer"
params = { n_segments = 8 }

[models.MiniRocket]
kind = "minirocket"
"""

# the rows of research/configs/candidates_regression.toml these tests read
REGRESSION_CANDIDATE_ROWS = """
[models."EA-DC (defaults)"]
architecture = "ea-dc-transformer"

[models."EA-DC (weight averaging, 1200 steps)"]
architecture = "ea-dc-transformer"
params = { head_refit = "ridge", average_epochs = 20, validation_fraction = 0.0, max_steps = 1200 }

[models."EA-DC (step cap 900)"]
architecture = "ea-dc-transformer"
params = { head_refit = "ridge", average_epochs = 20, validation_fraction = 0.0, max_steps = 900 }

[models."EA-DC (dilation per layer)"]
architecture = "ea-dc-transformer"
params = { dilation_per_layer = true }
"""

# the rows of research/configs/unseen.toml these tests read
UNSEEN_ROWS = """
[models."EA-DC (defaults)"]
architecture = "ea-dc-transformer"

[models."EA-DC (wide_scales=auto)"]
architecture = "ea-dc-transformer"
params = { wide_scales = "auto" }

[models."EA-DC (wide_scales=auto, input_differences=False)"]
architecture = "ea-dc-transformer"
params = { wide_scales = "auto", input_differences = false }

[models."EA-DC (wide_scales=False, input_differences=False)"]
architecture = "ea-dc-transformer"
params = { wide_scales = false, input_differences = false }
"""


def test_unit_keys_follow_changed_defaults(monkeypatch, tmp_path):
    """A default changed since the key reference enters a unit's key as if the row had set it: the default row
    then shares the results of a row that asked for the same settings, stale results are never reused, and
    MiniRocket and the paper profiles (which pin the setting) keep their keys. At the reference, the keys are
    those of the results stored before the reference existed."""
    from eadct.tables import _keys

    table = _rows_table(tmp_path, CANDIDATE_ROWS)
    paper = load_table("table2")
    keys = lambda: (  # noqa: E731
        table.model_key("EA-DC (defaults)", "ERing", "defaults"),
        table.model_key("EA-DC (averaged)", "ERing", "defaults"),
        table.model_key("MiniRocket", "ERing", "defaults"),
        paper.model_key("EA-DC-Transformer", "Handwriting", "quick"),
    )
    reference = dict(_keys.REFERENCE_DEFAULTS)
    defaults = lambda **changed: lambda task="classification": {**reference, **changed}  # noqa: E731
    monkeypatch.setattr(_keys, "current_defaults", defaults())
    before = keys()
    assert before[0] == "ea-dc-transformer-01383d756c" and before[3] == "ea-dc-transformer-ceaad3b65c"
    assert before[0] != before[1]
    monkeypatch.setattr(_keys, "current_defaults", defaults(**table.models["EA-DC (averaged)"].params))
    after = keys()
    assert after[0] == before[1] and after[1] == before[1]  # the default row now is the candidate row
    assert after[2] == before[2] and after[3] == before[3]  # MiniRocket; the paper pins both settings
    monkeypatch.setattr(_keys, "current_defaults", defaults(dropout=0.2))  # a setting the paper leaves
    assert keys()[3] != before[3] and keys()[0] != before[0]


def test_unit_keys_follow_each_estimators_defaults(tmp_path):
    """Each estimator's own defaults decide the keys of its sets: the classifier's (weight averaging, batches of
    8, 8 segments) those of the classification sets, the regressor's (weight averaging, no step cap since issue 86)
    those of the regression sets."""
    from eadct import EADCTClassifier, EADCTRegressor
    from eadct.tables._search import make_estimator

    table = _rows_table(tmp_path / "cls", CANDIDATE_ROWS)
    spec, profile = table.models["EA-DC (defaults)"], table.profile("defaults")
    key = lambda model, dataset: table.model_key(model, dataset, "defaults")  # noqa: E731
    rows = ("EA-DC (defaults)", "EA-DC (averaged)", "EA-DC (batch 8)", "EA-DC (8 segments)")  # all adopted
    assert len({key(row, "ERing") for row in rows}) == 1
    assert key("EA-DC (defaults)", "Tecator") == key("EA-DC (averaged)", "Tecator")  # the regressor averages too
    assert key("EA-DC (defaults)", "Tecator") != key("EA-DC (defaults)", "ERing")
    for task, cls in (("classification", EADCTClassifier), ("regression", EADCTRegressor)):
        est = make_estimator(task, spec, profile, "X", {}, 0)
        assert type(est) is cls
        names = ("average_epochs", "validation_fraction", "batch_size", "n_segments", "max_steps")
        assert {k: est._settings()[k] for k in names} == {k: cls()._settings()[k] for k in names}
    # the regressor's adopted defaults share their units with a candidate row of the same settings
    regression = _rows_table(tmp_path / "reg", REGRESSION_CANDIDATE_ROWS)
    assert regression.model_key("EA-DC (defaults)", "Tecator", "defaults") == regression.model_key(
        "EA-DC (dilation per layer)", "Tecator", "defaults"
    )
    # the rows of a step cap keep their own units: the regressor has none since issue 86
    for capped in ("EA-DC (step cap 900)", "EA-DC (weight averaging, 1200 steps)"):
        assert regression.model_key("EA-DC (defaults)", "Tecator", "defaults") != regression.model_key(
            capped, "Tecator", "defaults"
        )


def test_a_changed_default_the_rows_network_does_not_read_leaves_its_key(monkeypatch):
    """The regressor's ``dilation_per_layer=True`` moves the EA-DC rows' keys but not the Transformer's, LSTM's or
    ResNet's (no convolution branch: their fits are those from before it); ``input_differences``, which the
    regressor chooses on TRAIN, stays in every key."""
    from eadct.tables import _keys

    accuracy, table1 = load_table("accuracy"), load_table("table1")
    rows = ((accuracy, "EA-DC (defaults)"), (accuracy, "Transformer (defaults)"), (table1, "LSTM"), (table1, "ResNet"))
    keys = lambda: [table.model_key(row, "Tecator", "defaults") for table, row in rows]  # noqa: E731
    today = keys()
    real = _keys.current_defaults
    per_block = lambda task="classification": {**real(task), "dilation_per_layer": False}  # noqa: E731
    monkeypatch.setattr(_keys, "current_defaults", per_block)
    before = keys()
    assert today[0] != before[0] and today[1:] == before[1:]
    assert _keys.unread({"dilation_per_layer": True, "max_steps": 900}, "transformer") == {"max_steps": 900}
    assert _keys.unread({"dilation_per_layer": True}, "ea-dc-transformer") == {"dilation_per_layer": True}
    assert _keys.unread({"input_differences": "auto", "alpha": 0.9}, "lstm") == {"input_differences": "auto"}


def test_key_reference_lists_every_parameter():
    """A new estimator parameter must be added to the key reference with the value that reproduces what the
    estimators did before it (eadct/tables/_keys.py); otherwise every stored result would change its key."""
    from eadct.tables import _keys

    missing = sorted(
        (set(_keys.current_defaults("classification")) | set(_keys.current_defaults("regression")))
        - set(_keys.REFERENCE_DEFAULTS)
    )
    assert not missing, f"add {missing} to REFERENCE_DEFAULTS in eadct/tables/_keys.py (see its docstring)"


def test_a_defaults_profile_refits_the_regressors_head_and_records_its_strength(tiny_setup, tmp_path):
    from eadct.estimators._ridge import RIDGE_ALPHAS

    table = load_table(tiny_setup / "cfg" / "tiny.toml")
    out = tmp_path / "results"
    run_table(table, "tinydefaults", out, data_dirs=[tiny_setup / "data"], datasets=["TinyTabR"],
              models=["Transformer"], log=lambda *a: None)  # fmt: skip
    reg = json.loads(result_path(out, table, "Transformer", "TinyTabR", "tinydefaults", 0).read_text())
    assert reg["hyperparameters"]["head_refit"] == "ridge"
    assert len(reg["hyperparameters"]["head_alpha"]) == 1 and reg["hyperparameters"]["head_alpha"][0] in RIDGE_ALPHAS
    # the regressor's default input_differences="auto": what it chose on TRAIN
    assert reg["hyperparameters"]["input_differences"] == "auto"
    assert reg["hyperparameters"]["input_differences_chosen"] in (False, True)
    assert reg["hyperparameters"]["input_differences_decided_by"] in ("proxy", None)
    md = build_report(table, "tinydefaults", out, tmp_path / "reports", figure=False)[0].read_text()
    assert "head_alpha=[" in md and "input_differences_chosen=" in md


def test_a_rows_own_epochs_win_over_the_profiles_budget(tiny_setup, tmp_path):
    """A candidate row that sets ``max_epochs`` fits that many epochs, not the profile's (its key says so)."""
    (tiny_setup / "cfg" / "tinyepochs.toml").write_text(
        '[table]\nname = "tinyepochs"\ntitle = "Tiny epochs"\ndatasets = ["TinyTabC"]\n\n'
        '[models.Profile]\narchitecture = "transformer"\n\n'
        '[models."One epoch"]\narchitecture = "transformer"\nparams = { max_epochs = 1, average_epochs = 1 }\n'
    )
    table = load_table(tiny_setup / "cfg" / "tinyepochs.toml")
    out = tmp_path / "results"
    run_table(table, "tinydefaults", out, data_dirs=[tiny_setup / "data"], log=lambda *a: None)
    units = {m: json.loads(result_path(out, table, m, "TinyTabC", "tinydefaults", 0).read_text()) for m in table.models}
    for model, epochs in (("Profile", 2), ("One epoch", 1)):
        assert units[model]["hyperparameters"]["max_epochs"] == epochs
        assert units[model]["epochs_run"]["finetune"] == epochs


def test_a_row_that_sets_a_changed_default_back_shares_the_units_of_the_fit_before_the_change(monkeypatch, tmp_path):
    """``wide_scales="auto"``, ``input_differences=False`` and ``wide_scales=False`` on a classification set are the
    classifier's fit before those defaults: the same key (so the same stored units) as the defaults' row had then;
    a row's other settings stay in its key as they are."""
    from eadct.tables import _keys

    table = _rows_table(tmp_path, UNSEEN_ROWS)
    real = _keys.current_defaults
    for row, before in (("EA-DC (wide_scales=auto)", {"wide_scales": "auto"}),
                        ("EA-DC (wide_scales=auto, input_differences=False)",
                         {"input_differences": False, "wide_scales": "auto"}),
                        ("EA-DC (wide_scales=False, input_differences=False)",
                         {"input_differences": False, "wide_scales": False})):  # fmt: skip
        today = table.model_key(row, "PLAID", "defaults")
        assert today != table.model_key("EA-DC (defaults)", "PLAID", "defaults")
        monkeypatch.setattr(_keys, "current_defaults", lambda task="classification", b=before: {**real(task), **b})
        assert table.model_key("EA-DC (defaults)", "PLAID", "defaults") == today
        monkeypatch.setattr(_keys, "current_defaults", real)
    assert _keys.key_params({}, {"wide_scales": "auto"}, {"wide_scales": False}) == {}
    assert _keys.key_params({}, {}, {"alpha": 0.5}) == {"alpha": 0.5}  # the reference's value, no default changed
    assert _keys.key_params({}, {"max_steps": 900}, {"max_steps": 1200}) == {"max_steps": 1200}


def test_a_data_dependent_auto_default_that_decides_the_reference_keeps_the_key_of_the_fit_before_it(monkeypatch):
    """``wide_scales="auto"`` decides from the data; on a registered set where it decides the reference's value
    (its scale spread and channels say so) the key is the one from before the default, so the stored units are
    found; on a set the registry does not know, or where "auto" acts, "auto" stays keyed."""
    from eadct.datasets import get_info
    from eadct.tables import _keys

    table = load_table("accuracy")
    key = table.model_key("EA-DC (defaults)", "ERing", "defaults")
    real = _keys.current_defaults
    monkeypatch.setattr(_keys, "current_defaults", lambda task="classification": {**real(task), "wide_scales": False})
    assert table.model_key("EA-DC (defaults)", "ERing", "defaults") == key
    monkeypatch.setattr(_keys, "current_defaults", real)
    assert get_info("ERing").scale_spread == 0.0 and get_info("ERing").n_channels == 4
    changed = {"wide_scales": "auto", "max_steps": 900}
    assert _keys.decided(changed, "ERing") == {"max_steps": 900}
    assert _keys.decided(changed, "Tecator") == {"max_steps": 900}  # its spread is known: wide_scales decided
    assert _keys.decided(changed, "PLAID") == changed == _keys.decided(changed, None)  # not in the registry
    assert _keys.decided(changed, "FaceDetection") == {"wide_scales": "auto", "max_steps": 900}  # spread not measured
    # the classifier's input_differences="auto": never on a set of several channels; the regressor's is a choice
    # on TRAIN's series and targets (the proxy's), which the registry cannot decide
    assert _keys.decided({"input_differences": "auto"}, "FaceDetection") == {}
    assert _keys.decided({"input_differences": "auto"}, "Tecator") == {"input_differences": "auto"}
    assert _keys.decided({"input_differences": "auto"}, "ArrowHead") == {"input_differences": "auto"}  # unregistered
    wide = dataclasses.replace(get_info("ERing"), scale_spread=3.5)
    monkeypatch.setattr("eadct.datasets.get_info", lambda name: wide)
    assert _keys.decided(changed, "ERing") == {"wide_scales": "auto", "max_steps": 900}


def test_a_threshold_for_wide_scales_is_decided_from_the_registry_as_auto_is(monkeypatch):
    """``wide_scales=100.0`` among the defaults: on a registered set whose spread it does not pass, it and the
    classifier's ``input_differences="auto"`` leave the key as "auto" left it; on one it passes it stays keyed and
    takes the differences' decision with it; an unregistered set keeps both."""
    from eadct.datasets import get_info
    from eadct.tables import _keys

    changed = {"wide_scales": 100.0, "input_differences": "auto"}
    assert get_info("BasicMotions").scale_spread == 1.75  # the widest shared classification set
    assert _keys.decided(changed, "BasicMotions") == {} == _keys.decided({**changed, "wide_scales": "auto"}, "ERing")
    assert _keys.decided(changed, "Covid3Month_disc") == changed  # not in the registry
    counts = dataclasses.replace(get_info("ERing"), n_channels=1, scale_spread=2.45)  # one channel of counts
    monkeypatch.setattr("eadct.datasets.get_info", lambda name: counts)
    assert _keys.decided(changed, "ERing") == {"wide_scales": 100.0}  # acts, so no differences (the reference's)
    assert _keys.decided({**changed, "wide_scales": "auto"}, "ERing") == {"input_differences": "auto"}


def test_a_classification_unit_records_where_wide_scales_acted(tiny_setup, tmp_path, monkeypatch):
    """``wide_scales`` (the classifier's default, a threshold of 10^2): the channels it logged and read series by
    series are in the unit's hyperparameters, and in the report where there are any."""
    from eadct.estimators import _data

    table = load_table(tiny_setup / "cfg" / "tiny.toml")
    runs = {}
    real = _data.spread_threshold
    for name, threshold in (("none", real), ("all", lambda w: 0.5)):  # a threshold of 0.5: every channel passes
        monkeypatch.setattr(_data, "spread_threshold", threshold)
        out = tmp_path / name
        run_table(table, "tinydefaults", out, data_dirs=[tiny_setup / "data"], datasets=["TinyTabC"],
                  models=["Transformer"], log=lambda *a: None)  # fmt: skip
        res = json.loads(result_path(out, table, "Transformer", "TinyTabC", "tinydefaults", 0).read_text())
        runs[name] = (res["hyperparameters"]["wide_scale_channels"], out)
        # input_differences="auto" (also the classifier's default): what its rule decided, never with two channels
        assert res["hyperparameters"]["input_differences_chosen"] is False
        assert "input_differences_decided_by" not in res["hyperparameters"]  # the regressor's choice only
    assert runs["none"][0] == [] and runs["all"][0] == [0, 1]
    md = {
        k: build_report(table, "tinydefaults", out, tmp_path / k, figure=False)[0].read_text()
        for k, (_, out) in runs.items()
    }
    assert "wide_scale_channels=[0, 1]" in md["all"] and "wide_scale_channels" not in md["none"]
