"""The code in README.md and docs/ runs (issue 17, point 4).

Python blocks: the blocks of each page, in order, are saved as one script and run as ``__main__`` in a fresh
interpreter in a temporary folder, as a reader who saves them would (so code that starts worker processes needs
its ``if __name__ == "__main__":`` guard, as it would there), with fast settings (every fit of the script's own
process is cut to a 16-wide, 2-block network and one epoch per stage: the test checks that the code runs, not its
scores). Shell blocks: every command is checked. Scripts must exist,
``pip install`` extras must be declared in pyproject.toml, and ``eadct-tables`` / ``eadct-datasets`` arguments
must parse. The cheap ones (``list``, ``check`` of bundled sets) also run and must exit 0. A block that needs
what no test machine has (a SLURM cluster) is written as ``{code-block} python``: shown, not run.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
FAST = dict(d_model=16, n_heads=2, n_blocks=2, d_ff=16, max_epochs=1, pretrain_epochs=1, batch_size=64, n_jobs=1)


def _blocks(page: Path, languages: tuple[str, ...]) -> list[str]:
    return [code for lang, code in BLOCK.findall(page.read_text()) if lang in languages]


def _pages_with(languages):
    return [pytest.param(p, id=str(p.relative_to(ROOT))) for p in PAGES if _blocks(p, languages)]


# Run in the fresh interpreter before the page's script (``python -c RUNNER script.py``): the fast settings, then the
# script as ``__main__`` from its file, so that a spawned worker process imports it as Python does a saved script.
RUNNER = f"""
import functools, runpy, sys

import sklearn.manifold

import eadct.estimators._base as base

fit_network = base.EADCTBase._fit_network


def fast(self, *args, **kwargs):
    for name, value in {FAST}.items():
        setattr(self, name, value)
    return fit_network(self, *args, **kwargs)


base.EADCTBase._fit_network = fast
# t-SNE's fewest iterations (scikit-learn allows 250, default 1000): a figure's code path, not its quality
sklearn.manifold.TSNE = functools.partial(sklearn.manifold.TSNE, max_iter=250)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _run_as_script(code: str, folder: Path, name: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``code`` saved as ``folder/name`` and run there in a fresh interpreter (after :data:`RUNNER`'s settings)."""
    script = folder / name
    script.write_text(code)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    command = [sys.executable, "-c", RUNNER, str(script)]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=timeout)


def _page_script(page: Path) -> tuple[str, list[int]]:
    """The page's Python blocks as one script, and the line on which each block starts."""
    lines, starts = [], []
    for i, code in enumerate(_blocks(page, ("python",))):
        lines.append(f"# {page.name}, python block {i + 1}")
        starts.append(len(lines) + 1)
        lines += code.splitlines()
    return "\n".join(lines) + "\n", starts


@pytest.mark.parametrize("page", _pages_with(("python",)))
def test_python_blocks_run(page, tmp_path):
    pytest.importorskip("matplotlib")
    code, starts = _page_script(page)
    name = f"doc_{page.stem.lower()}.py"
    run = _run_as_script(code, tmp_path, name)
    if run.returncode:
        at = [int(n) for n in re.findall(rf'File "[^"]*{re.escape(name)}", line (\d+)', run.stderr)]
        where = f"python block {sum(s <= at[-1] for s in starts)}, " if at else ""
        pytest.fail(f"{page.name}: {where}exit {run.returncode} as a saved script:\n{run.stderr[-4000:]}")


def test_a_saved_script_that_starts_processes_without_a_main_guard_fails(tmp_path):
    """What the saved-script run catches and ``exec`` in this process did not: a child process started by the
    ``spawn`` method (as dask's LocalCluster starts its workers) imports the script again, and without an
    ``if __name__ == "__main__":`` guard starts a process while it is starting itself."""
    code = (
        "import multiprocessing\n"
        "child = multiprocessing.get_context('spawn').Process(target=print, args=('child',))\n"
        "child.start()\n"
        "child.join()\n"
        "assert child.exitcode == 0, f'the child process exited with {child.exitcode}'\n"
    )
    run = _run_as_script(code, tmp_path, "unguarded.py", timeout=120)
    assert run.returncode != 0 and "bootstrapping phase" in run.stderr, run.stderr[-2000:]


def _extras() -> set[str]:
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])


def _check_pip(words: list[str]) -> None:
    assert words[:2] == ["pip", "install"], words
    for spec in words[2:]:
        if spec == "-e":
            continue
        name, _, extras = spec.partition("[")
        assert name in (".", "eadct"), f"pip installs {spec!r}, not eadct"
        for extra in filter(None, extras.rstrip("]").split(",")):
            assert extra in _extras(), f"no extra {extra!r} in pyproject.toml"


def _check_cli(words: list[str]) -> None:
    from eadct.datasets import cli as datasets_cli
    from eadct.tables import cli as tables_cli
    from eadct.tables.bakeoff import cli as bakeoff_cli
    from eadct.tables.bakeoff import report as bakeoff_report

    program, argv = words[0], words[1:]
    if program == "eadct-bakeoff":  # parsed only: every verb reads data or results
        if argv[:1] == ["report"]:
            bakeoff_report._parser().parse_args(argv[1:])
        else:
            bakeoff_cli._parser().parse_args(argv)
        return
    cli = tables_cli if program == "eadct-tables" else datasets_cli
    args = cli._parser().parse_args(argv)  # argparse exits (SystemExit) on arguments that do not parse
    runs_cheaply = args.command == "list" or (args.command == "check" and not args.data_dir)
    if runs_cheaply:
        assert cli.main(argv) == 0, " ".join(words)


def _check_command(words: list[str]) -> None:
    while words and re.match(r"^[A-Z_]+=", words[0]):  # VAR=value before the command
        words = words[1:]
    program = words[0]
    if program in ("bash", "python"):
        assert (ROOT / words[1]).is_file(), f"{words[1]} does not exist"
    elif program == "pip":
        _check_pip(words)
    elif program in ("eadct-tables", "eadct-datasets", "eadct-bakeoff"):
        _check_cli(words)
    elif program in ("dask", "ray"):  # cluster commands (docs/cluster.md): their extra exists, the verb is real
        assert program in _extras(), f"pyproject.toml declares no [{program}] extra for {' '.join(words)!r}"
        assert words[1] in {"dask": ("scheduler", "worker"), "ray": ("start",)}[program], " ".join(words)
    else:
        pytest.fail(f"no check for the command {' '.join(words)!r}; add one to tests/test_docs.py")


@pytest.mark.parametrize("page", _pages_with(("bash",)))
def test_shell_commands_exist_and_parse(page, capsys):
    for code in _blocks(page, ("bash",)):
        for line in code.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                _check_command(words)


PUBLIC_MODULES = [
    "eadct",
    "eadct.sktime",
    "eadct.aeon",
    "eadct.persistence",
    "eadct.delegation",
    "eadct.metrics",
    "eadct.plotting",
    "eadct.datasets",
    "eadct.runtime",
    "eadct.networks",
    "eadct.training",
    "eadct.tables",
    "eadct.tables.bakeoff",
    "eadct.provenance",
]


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_api_page_lists_every_public_name(module):
    import importlib

    text = (ROOT / "docs" / "api.md").read_text()
    section = text.split(f".. currentmodule:: {module}\n", 1)
    assert len(section) == 2, f"docs/api.md has no section for {module}"
    listed = set(section[1].split("```", 1)[0].split())
    missing = [n for n in importlib.import_module(module).__all__ if n != "__version__" and n not in listed]
    assert not missing, f"docs/api.md does not list {module}.{missing}"


def test_the_training_page_table_of_defaults_is_the_code_s():
    """docs/training.md restates each estimator's training defaults and the paper's: every cell must be the value
    that ``get_params()`` and ``paper_configuration`` give (a changed default fails here until the page follows)."""
    import ast

    from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation, paper_configuration
    from eadct.estimators import flatten

    text = (ROOT / "docs" / "training.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    estimators = [EADCTClassifier(), EADCTRegressor(), EADCTRepresentation()]
    paper = flatten(paper_configuration("regression"))
    checked = 0
    for row in rows:
        name_cell, *cells = [c.strip() for c in row.strip("|").split("|")]
        name = name_cell.strip("`").split('"')[1] if "options" in name_cell else name_cell.strip("`")
        for est, cell in zip([*estimators, None], cells, strict=True):
            if cell in ("", "(none)"):
                continue
            want = (
                paper.get(name) if est is None else est.get_params().get(name, est.get_params().get(f"options__{name}"))
            )
            assert ast.literal_eval(cell.strip("`")) == want, (name, cell, want)
            checked += 1
    assert checked >= 25
