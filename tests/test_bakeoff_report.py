"""The bake-off report on tiny synthetic summary tables (no real data)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from eadct.tables.bakeoff._results import write_summary
from eadct.tables.bakeoff._stats import (
    against_peers,
    average_ranks,
    cd_groups,
    common_folds,
    holm,
    pairwise,
    rank_table,
    set_means,
)
from eadct.tables.bakeoff.report import PUBLISHED_METHODS, load_scores, main, published_label, write_report

DATASETS = [f"Set{i}" for i in range(6)]


def _table(values, datasets=DATASETS, folds=3):
    return pd.DataFrame(
        np.asarray(values, dtype=float).reshape(len(datasets), folds), index=datasets, columns=list(range(folds))
    )


def _tables(task="classification", seed=0):
    """4 methods x 6 datasets x 3 folds; EA-DC best, Slow worst; Slow has no fold 2 on Set5."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.5, 0.8, size=(6, 1))
    shift = {"EA-DC": 0.15, "MiniRocket": 0.1, "QUANT": 0.05, "Slow": 0.0}
    out = {}
    for m, s in shift.items():
        values = np.clip(base + s + 0.01 * rng.normal(size=(6, 3)), 0, 1)
        out[m] = _table(values if task == "classification" else 10 * (1 - values))
    out["Slow"].loc["Set5", 2] = np.nan
    return out


def _write(summary, task, tables, times=True):
    measure = "accuracy" if task == "classification" else "rmse"
    for m, t in tables.items():
        write_summary(summary / task / measure / f"{m}_{measure}.csv", t)
        if times:
            for k, measure_t in enumerate(("fittime", "predicttime")):
                ms = 10.0 ** (1 + list(tables).index(m)) * (1 + k) * np.ones(t.shape)
                write_summary(summary / task / measure_t / f"{m}_{measure_t}.csv", _table(ms))


def _published(root, task="classification", absent=()):
    """The task's default published tables: our datasets but ``absent``, plus one we never ran, 30 folds."""
    folder = root / ("classification_multivariate" if task == "classification" else "regression")
    datasets = [*(d for d in DATASETS if d not in absent), "NotOurs"]
    rng = np.random.default_rng(1)
    for m in PUBLISHED_METHODS[task]:
        size = (len(datasets), 30)
        values = rng.uniform(0.6, 0.9, size=size) if task == "classification" else rng.uniform(1, 3, size)
        write_summary(
            folder / f"{m}_{'accuracy' if task == 'classification' else 'rmse'}.csv", _table(values, datasets, 30)
        )
    return root


def test_ranks_share_ties_and_round_float_noise():
    means = pd.DataFrame({"A": [0.9, 0.1 + 0.2], "B": [0.9, 0.3], "C": [0.5, 0.1]}, index=["d1", "d2"])
    ranks = rank_table(means, higher_is_better=True)
    assert ranks.loc["d1"].tolist() == [1.5, 1.5, 3.0]
    assert ranks.loc["d2"].tolist() == [1.5, 1.5, 3.0]  # 0.1 + 0.2 != 0.3 in floats, equal after rounding
    assert average_ranks(means, True).to_dict() == {"A": 1.5, "B": 1.5, "C": 3.0}


def test_lower_is_better_flips_ranks():
    means = pd.DataFrame({"A": [1.0, 2.0], "B": [2.0, 3.0], "C": [3.0, 1.0]}, index=["d1", "d2"])
    assert rank_table(means, True).loc["d1"].tolist() == [3.0, 2.0, 1.0]
    assert rank_table(means, False).loc["d1"].tolist() == [1.0, 2.0, 3.0]
    assert list(average_ranks(means, False).index) == ["A", "C", "B"]
    assert list(average_ranks(means, True).index) == ["B", "C", "A"]


def test_holm_against_a_hand_example():
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> max so far 0.06
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm([0.5, 0.2, 0.9]), [1.0, 0.6, 1.0])  # capped at 1
    assert holm([]).shape == (0,)


def test_common_folds_intersect_and_drop_with_reasons():
    a = _table(np.ones(18))
    b = a.copy()
    b.loc["Set1", 1] = np.nan
    c = a.drop(index="Set2")
    folds, dropped = common_folds({"A": a, "B": b, "C": c})
    assert folds["Set0"] == [0, 1, 2] and folds["Set1"] == [0, 2]
    assert "Set2" not in folds and "no folds from C" in dropped["Set2"]
    folds, dropped = common_folds({"A": a, "B": b, "C": c}, min_folds=3)
    assert "Set1" not in folds and "2 common fold(s) < min_folds=3" in dropped["Set1"]
    a.loc["Set0", 0] = 0.0  # means use only the common folds
    b.loc["Set0", 0] = 0.0
    means = set_means({"A": a, "B": b}, {"Set0": [1, 2], "Set1": [0, 2]})
    assert means.loc["Set0", "A"] == 1.0 and means.shape == (2, 2)
    with pytest.raises(ValueError, match="min_folds"):
        common_folds({"A": a}, min_folds=0)


def test_pairwise_win_tie_loss_and_equal_methods():
    means = pd.DataFrame({"A": [0.9, 0.8, 0.7, 0.6], "B": [0.8, 0.8, 0.6, 0.7], "C": [0.9, 0.8, 0.7, 0.6]})
    pairs = pairwise(means, higher_is_better=True).set_index(["A", "B"])
    assert pairs.loc[("A", "B"), ["wins", "ties", "losses"]].tolist() == [2, 1, 1]
    assert pairs.loc[("A", "C"), "p"] == 1.0 and pairs.loc[("A", "C"), "ties"] == 4
    lower = pairwise(means, higher_is_better=False).set_index(["A", "B"])
    assert lower.loc[("A", "B"), ["wins", "ties", "losses"]].tolist() == [1, 1, 2]
    np.testing.assert_allclose(pairs["p_holm"], holm(pairs["p"]))


@pytest.mark.parametrize("higher", [True, False])
def test_cd_groups_are_aeons_cliques(higher):
    from aeon.visualisation.results._critical_difference import _compute_ranks, _find_cliques, _sort_by_average_rank

    rng = np.random.default_rng(3)
    names = ["A", "B", "C", "D", "E"]
    values = rng.uniform(size=(25, 1)) + np.array([0.0, 0.01, 0.3, 0.31, 0.6]) + 0.05 * rng.normal(size=(25, 5))
    means = pd.DataFrame(values, columns=names)
    ranks = _compute_ranks(values, lower_better=not higher)
    labels, avg, ordered = _sort_by_average_rank(values, names, ranks)
    cliques, p = _find_cliques(ranks, ordered, labels, avg, 25, 5, "wilcoxon", "holm", 0.05, not higher)
    order, groups = cd_groups(means, higher, p, 0.05)
    assert order == list(labels)
    assert groups == [[labels[i] for i in np.flatnonzero(row)] for row in cliques]
    assert len(groups) >= 2


def test_load_scores_labels_published_and_restricts_to_our_datasets(tmp_path):
    _write(tmp_path / "s", "classification", _tables())
    tables = load_scores(tmp_path / "s", "classification", published=_published(tmp_path / "p"))
    assert list(tables) == [
        "EA-DC",
        "MiniRocket",
        "QUANT",
        "Slow",
        *map(published_label, ["HC2", "ROCKET", "InceptionT"]),
    ]
    assert list(tables["HC2 (published)"].index) == DATASETS and tables["HC2 (published)"].shape[1] == 30
    assert list(load_scores(tmp_path / "s", "classification", methods=["QUANT"])) == ["QUANT"]
    with pytest.raises(ValueError, match="no table"):
        load_scores(tmp_path / "s", "classification", methods=["Nope"])
    with pytest.raises(ValueError, match="no published table"):
        load_scores(tmp_path / "s", "classification", published=tmp_path / "p", published_methods=["Nope"])


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_write_report_writes_both_reports_and_pngs_deterministically(tmp_path, task):
    summary, out = tmp_path / "s", tmp_path / "out"
    _write(summary, task, _tables(task))
    published = _published(tmp_path / "p", task)
    paths = write_report(summary, out, task, published=published, min_folds=3, command="the command")
    assert paths == [out / f"{task}.md", out / f"{task}_published.md"]
    for png in ("cd", "time", "published_cd"):
        assert (out / f"{task}_{png}.png").stat().st_size > 0, png
    assert not (out / f"{task}_published_time.png").exists()
    text, pub = (p.read_text() for p in paths)
    for part in [
        "the command",
        "## Folds per dataset",
        "## Average ranks",
        "## EA-DC against each peer",
        "| EA-DC | MiniRocket |",
        f"({task}_cd.png)",
        f"({task}_time.png)",
        f"[{task}_published.md]({task}_published.md), on 5 of these 5 datasets.",
        "- Group",
        "Set5: 2 common fold(s) < min_folds=3",
        "Covers: methods EA-DC, MiniRocket, QUANT, Slow. Datasets: 5 compared (Set0, Set1, Set2, Set3, Set4)",
    ]:
        assert part in text, part
    assert "(published)" not in text and "NotOurs" not in text
    for part in ["the command", f"[{task}.md]({task}.md)", f"({task}_published_cd.png)", "| HC2 (published) |"]:
        assert part in pub or task == "regression" and "HC2" in part, part
    assert "NotOurs" not in pub and "Score against fit time" not in pub
    assert "published tsml-eval results " + ", ".join(map(published_label, PUBLISHED_METHODS[task])) in pub
    again = write_report(summary, out, task, published=published, min_folds=3, command="the command")
    assert [p.read_text() for p in again] == [text, pub]


def _part(text, title):
    """The Markdown section ``## <title>`` of a report."""
    return text.split(f"## {title}\n")[1].split("\n## ")[0]


def test_a_set_missing_from_published_stays_in_the_main_report_only(tmp_path):
    summary, out = tmp_path / "s", tmp_path / "out"
    _write(summary, "classification", _tables())
    published = _published(tmp_path / "p", absent=["Set2"])
    main_md, pub_md = write_report(summary, out, "classification", published=published, command="cmd")
    text, pub = main_md.read_text(), pub_md.read_text()
    assert "| Set2 | 3 |" in _part(text, "Mean accuracy per dataset")
    assert "6 compared (Set0, Set1, Set2, Set3, Set4, Set5), 0 dropped" in text
    link = "[classification_published.md](classification_published.md), on 5 of these 6 datasets; not there: Set2."
    assert link in text
    assert (
        "Set2" not in _part(pub, "Mean accuracy per dataset")
        and "| Set2 | 3 | 3 | 3 | 3 | 0 | 0 | 0 | 0 | dropped |" in pub
    )
    assert "5 compared (Set0, Set1, Set3, Set4, Set5), 1 dropped" in pub
    assert "- Set2: 0 common fold(s) < min_folds=1; no folds from HC2 (published), ROCKET (published)" in pub
    assert "Folds: fold by fold, each dataset's folds that every method has, 2 to 3 per dataset (14 " in pub
    alone = write_report(summary, tmp_path / "alone", "classification", command="cmd")[0].read_text()
    assert "No comparison with published results in this run (pass `--published`)." in alone
    assert [x for x in alone.splitlines() if "published" not in x] == [
        x for x in text.splitlines() if "published" not in x
    ]


def test_against_peers_wins_mean_difference_and_holm_over_the_focal_comparisons():
    means = pd.DataFrame(
        {"B": [0.8, 0.8, 0.6, 0.7, 0.5], "EA-DC": [0.9, 0.8, 0.7, 0.6, 0.9], "C": [0.1, 0.2, 0.3, 0.4, 0.5]}
    )
    peers = against_peers(means, "EA-DC", higher_is_better=True)
    assert list(peers.index) == ["B", "C"]
    assert peers.loc["B", ["wins", "ties", "losses"]].tolist() == [3, 1, 1]
    assert peers.loc["C", ["wins", "ties", "losses"]].tolist() == [5, 0, 0]
    np.testing.assert_allclose(peers["mean_diff"], [0.78 - 0.68, 0.78 - 0.3])
    np.testing.assert_allclose(peers["p_holm"], holm(peers["p"]))  # over the 2 comparisons, not all 3 pairs
    all_pairs = pairwise(means, True).set_index(["A", "B"])
    assert peers.loc["B", "p"] == all_pairs.loc[("B", "EA-DC"), "p"]
    lower = against_peers(means, "EA-DC", higher_is_better=False)
    assert lower.loc["B", ["wins", "ties", "losses"]].tolist() == [1, 1, 3]
    ratio = np.exp(np.mean(np.log(means["EA-DC"] / means["B"])))  # errors: a geometric-mean ratio, not a difference
    np.testing.assert_allclose(lower.loc["B", "mean_diff"], ratio)
    assert against_peers(means.drop(columns="EA-DC"), "EA-DC", True).empty


def test_methods_and_published_methods_pick_the_columns(tmp_path):
    summary, out = tmp_path / "s", tmp_path / "o"
    _write(summary, "classification", _tables())
    published = _published(tmp_path / "p")
    argv = ["--summary", str(summary), "--out", str(out), "--task", "classification", "--published", str(published)]
    assert main([*argv, "--methods", "QUANT", "MiniRocket", "Slow", "--published-methods", "ROCKET"]) == 0
    text, pub = (out / "classification.md").read_text(), (out / "classification_published.md").read_text()
    assert "Covers: methods QUANT, MiniRocket, Slow." in text and "EA-DC" not in text
    assert "--methods QUANT MiniRocket Slow --published-methods ROCKET" in text
    assert "published tsml-eval results ROCKET (published)." in pub and "EA-DC" not in pub and "HC2" not in pub
    with pytest.raises(ValueError, match="pass the tsml-eval folder as published"):
        write_report(summary, out, "classification", published_methods=["HC2"])


def test_main_writes_every_task_present_and_rejects_bad_tasks(tmp_path, capsys):
    summary = tmp_path / "s"
    _write(summary, "classification", _tables(), times=False)
    assert main(["--summary", str(summary), "--out", str(tmp_path / "o"), "--task", "all"]) == 0
    text = (tmp_path / "o" / "classification.md").read_text()
    assert "--task all" in text and "No fit times" in text and not (tmp_path / "o" / "regression.md").exists()
    with pytest.raises(ValueError, match="unknown task 'forecasting'"):
        main(["--summary", str(summary), "--out", str(tmp_path / "o"), "--task", "forecasting"])
    with pytest.raises(ValueError, match="unknown task"):
        write_report(summary, tmp_path / "o", "accuracy")


def test_side_comparisons_have_their_own_folds_and_leave_the_main_one_alone(tmp_path):
    summary, out, ref = tmp_path / "s", tmp_path / "out", tmp_path / "ref"
    tables = _tables()
    # the architecture rows on fold 0 only, the paper's row on two sets: neither may shrink the main comparison
    arch = {"DC-Transformer": tables["QUANT"].copy(), "Transformer": tables["Slow"].copy()}
    for t in arch.values():
        t.loc[:, [1, 2]] = np.nan
    paper_row = tables["MiniRocket"].copy()
    paper_row.loc[["Set0", "Set1", "Set2", "Set3"]] = np.nan
    _write(summary, "classification", {**tables, **arch, "EA-DC-paper": paper_row})
    ref.mkdir()
    pd.DataFrame(
        {"Transformer": [0.5, 0.6], "DC-Transformer": [0.55, 0.65], "EA-DC-Transformer": [0.6, 0.7]},
        index=pd.Index(["Set4", "NotOurs"], name="dataset"),
    ).to_csv(ref / "paper_table2_classification_accuracy.csv")
    paths = write_report(summary, out, "classification", min_folds=1, command="cmd", paper_reference=ref)
    assert [p.name for p in paths] == ["classification.md", "classification_architecture.md", "classification_paper.md"]
    main_md, arch_md, paper_md = (p.read_text() for p in paths)
    assert "Covers: methods EA-DC, MiniRocket, QUANT, Slow. Datasets: 6 compared" in main_md
    assert "2 to 3 per dataset (17 dataset-folds)" in main_md
    assert "Transformer" not in main_md.split("## Side comparisons")[0]
    assert "[classification_architecture.md](classification_architecture.md)" in main_md
    assert "Covers: methods EA-DC, DC-Transformer, Transformer. Datasets: 6 compared" in arch_md
    assert "1 to 1 per dataset (6 dataset-folds)" in arch_md
    assert "## EA-DC against each peer" in arch_md and (out / "classification_architecture_cd.png").stat().st_size
    assert (out / "classification_architecture_time.png").stat().st_size > 0
    assert "Covers: methods EA-DC, EA-DC-paper. Datasets: 2 compared (Set4, Set5), 0 dropped" in paper_md
    assert "Not run by every row here, so not compared: Set0, Set1, Set2, Set3." in paper_md
    assert "| Set0 |" not in paper_md
    assert "Not drawn: aeon's diagram needs at least 3 methods." in paper_md
    fold0 = _part(paper_md, "Against the paper's reported scores (fold 0)")
    assert "| dataset | paper: EA-DC-Transformer | EA-DC, fold 0 | EA-DC-paper, fold 0 |" in fold0
    row = f"| Set4 | 0.6000 | {tables['EA-DC'].loc['Set4', 0]:.4f} | {paper_row.loc['Set4', 0]:.4f} |"
    assert row in fold0 and "NotOurs" not in fold0
    assert "| Set4 | 0.6000 | 0.5500 | 0.5000 |" in _part(arch_md, "Against the paper's reported scores (fold 0)")
    alone = write_report(summary, tmp_path / "o2", "classification", methods=["EA-DC", "Transformer"], command="c")
    assert "Covers: methods EA-DC, Transformer." in alone[0].read_text()  # named rows go to the main comparison
    # two folds asked of the side reports: the architecture rows (fold 0 only) have none to compare, the main is kept
    again = write_report(summary, tmp_path / "o3", "classification", command="c", min_folds=3, side_min_folds=2)
    assert "Covers: methods EA-DC, MiniRocket, QUANT, Slow. Datasets: 5 compared" in again[0].read_text()
    arch_again = again[1].read_text()
    assert "Nothing to compare: no dataset has enough folds that every method has." in arch_again
    assert "Score against fit time" not in arch_again and "| Set4 | 0.6000 | 0.5500 | 0.5000 |" not in arch_again
    with pytest.raises(ValueError, match="as paper_reference"):
        write_report(summary, out, "classification", command="cmd", paper_reference=tmp_path / "nowhere")


def test_rmse_tests_use_differences_relative_to_the_pair_so_one_large_scale_set_does_not_dominate():
    from scipy.stats import wilcoxon

    # A beats B by 900 (a 9% error) on a set in the thousands, and loses by 15-25% on five sets near 1
    means = pd.DataFrame({"A": [10_000.0, 1.2, 1.25, 1.3, 1.15, 1.22], "B": [10_900.0, 1.0, 1.0, 1.0, 1.0, 1.0]})
    relative = (means["B"] - means["A"]) / ((means["A"] + means["B"]) / 2)
    p = pairwise(means, higher_is_better=False).loc[0, "p"]
    assert p == pytest.approx(wilcoxon(relative, zero_method="wilcox").pvalue)
    assert p != pytest.approx(wilcoxon(means["B"] - means["A"], zero_method="wilcox").pvalue)
    assert against_peers(means, "A", higher_is_better=False).loc["B", "p"] == p
