"""docs/accuracy.md's results tables are the committed bake-off results: each number recomputed from the results
tables in reports/bakeoff/ (no fit; reads small CSVs), so the page cannot drift from what it cites."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from eadct.tables.bakeoff._stats import against_peers, average_ranks, common_folds, set_means
from eadct.tables.bakeoff.report import SIDE_COMPARISONS, load_ours

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "accuracy.md"
SUMMARY = ROOT / "reports" / "bakeoff"
MIN_FOLDS = 3  # the page's report command: --min-folds 3
SIDE_MIN_FOLDS = 2  # and --side-min-folds 2
NAMES = {"EA-DC (defaults)": "EA-DC"}


def _table_after(title: str) -> tuple[list[str], list[list[str]]]:
    """The header and the rows (cells) of the first Markdown table after the paragraph that starts with ``title``."""
    text = PAGE.read_text()
    start = text.index(title)
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
        elif rows:
            break
    return rows[0], rows[2:]  # header, rule, rows


def _means(task, methods=None, min_folds=MIN_FOLDS):
    tables = load_ours(SUMMARY, task, methods)
    folds, _ = common_folds(tables, min_folds)
    return set_means(tables, folds), folds


@pytest.mark.parametrize(
    ("title", "task"),
    [("**Classification, 11 UEA sets**", "classification"), ("**Regression, 6 TSER sets**", "regression")],
)
def test_the_main_rank_tables_are_the_committed_results(title, task):
    means, folds = _means(task)
    ranks = average_ranks(means, task == "classification")
    _, rows = _table_after(title)
    assert {NAMES.get(r[0], r[0]) for r in rows} == set(means.columns)
    peers = against_peers(means, "EA-DC", task == "classification")
    for row in rows:
        name = NAMES.get(row[0], row[0])
        assert row[1] == f"{ranks[name]:.3f}", (name, row[1])
        if task == "classification":
            assert row[2] == f"{means[name].mean():.4f}", (name, row[2])
        elif name != "EA-DC":
            r = peers.loc[name]
            assert row[2].startswith(f"x{r.mean_diff:.3f} "), (name, row[2])
            assert re.search(rf"\b{r.wins}\D+{r.losses}\b\D*\)", row[2]), (name, row[2])


def test_the_folds_sentence_counts_the_committed_dataset_folds():
    text = PAGE.read_text()
    for task, word in (("classification", "classification"), ("regression", "regression")):
        tables = load_ours(SUMMARY, task, ["EA-DC"])
        n = int(tables["EA-DC"].notna().to_numpy().sum())
        assert re.search(rf"\b{n}\s+dataset-folds\s+of\s+{word}|\b{n}\s+of\s+{word}", text), (task, n)


def test_side_comparisons_cited_on_the_page_are_the_committed_results():
    """Each table under a ``<!-- side:<name>:<task> -->`` marker matches its side report: the ranks, and the per-set
    means where the columns are datasets."""
    text = PAGE.read_text()
    found = 0
    for name in SIDE_COMPARISONS:
        for m in re.finditer(rf"<!-- side:{name}:(classification|regression) -->", text):
            task, found = m.group(1), found + 1
            means, _ = _means(task, list(SIDE_COMPARISONS[name]), min_folds=SIDE_MIN_FOLDS)
            ranks = average_ranks(means, task == "classification")
            header, rows = _table_after(m.group(0))
            assert {NAMES.get(r[0], r[0]) for r in rows} == set(means.columns), m.group(0)
            for row in rows:
                method = NAMES.get(row[0], row[0])
                assert row[1] == f"{ranks[method]:.3f}", (name, task, row)
                for column, cell in zip(header[2:], row[2:], strict=True):
                    if column in means.index:
                        assert cell == f"{means.loc[column, method]:.4f}", (name, task, method, column, cell)
                    elif column == "mean accuracy":
                        assert cell == f"{means[method].mean():.4f}", (name, task, method, cell)
    assert found, "docs/accuracy.md cites no side comparison"
