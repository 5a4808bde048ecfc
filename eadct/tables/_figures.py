"""The figures of a table's report (matplotlib, from the ``plots`` extra): scores per dataset beside the
published ones, and the representations' t-SNE and the sensitivity sweep where the table has them."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from . import _sensitivity as sensitivity
from ._representations import avgwcd_figure
from ._representations import figure as representation_figure
from ._store import unit_dir


def draw_figures(table, profile, out_dir, results, stats, published, task_of, report_dir: Path):
    """Draw the report's figures: ``(Markdown image lines, paths)``; none, with a warning, without matplotlib."""
    stem = f"{table.name}_{profile}"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        warnings.warn(
            f'matplotlib is not installed: the report of {table.name} has no figures (pip install "eadct[plots]").',
            UserWarning,
            stacklevel=3,
        )
        return [], []
    png = report_dir / f"{stem}.png"
    _figure(table, profile, stats, published, task_of, png)
    links, paths = [f"![{table.name}]({png.name})\n"], [png]
    tsne = report_dir / f"{stem}_tsne.png"
    folder = lambda m, d: unit_dir(out_dir, table, m, d, profile)  # noqa: E731
    classification = [d for d in table.datasets if task_of.get(d) == "classification"]
    avgwcd = report_dir / f"{stem}_avgwcd.png"
    if table.representations and avgwcd_figure(table, results, classification, avgwcd):
        links.insert(0, f"![AvgWCD of the representations]({avgwcd.name})\n")
        paths.append(avgwcd)
    if table.tsne and representation_figure(table, results, folder, tsne):
        links.append(f"![t-SNE of the representations, {table.tsne}]({tsne.name})\n")
        paths.append(tsne)
    for dataset in table.datasets if table.sensitivity else ():
        png = report_dir / f"{stem}_{dataset}_sensitivity.png"
        if sensitivity.figure(table, results, dataset, png):
            links.append(f"![sensitivity on {dataset}]({png.name})\n")
            paths.append(png)
    return links, paths


def _figure(table, profile, stats, published, task_of, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    models = list(table.models)
    datasets = [d for d in table.datasets if any((m, d) in stats for m in models)]
    ncols = min(4, len(datasets))
    nrows = -(-len(datasets) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(max(6.0, 2.9 * ncols), 0.6 + 2.9 * nrows), squeeze=False)
    x = np.arange(len(models))
    labelled = set()

    def label(name):
        if name in labelled:
            return None
        labelled.add(name)
        return name

    for k, d in enumerate(datasets):
        ax = axes[k // ncols][k % ncols]
        for i, m in enumerate(models):
            s = stats.get((m, d))
            if s is not None:
                ax.errorbar(
                    i,
                    s["mean"],
                    yerr=s["std"],
                    fmt="o",
                    color="tab:blue",
                    ms=4,
                    capsize=3,
                    label=label("ours (mean +- std)"),
                )
            pub = published.get(d, {}).get(m)
            if pub is not None:
                ax.plot(i, pub, "x", color="black", ms=6, label=label("published"))
        ax.set_title(d, fontsize=9)
        ax.set_xticks(x)
        ax.set_xticklabels([m[:14] for m in models], rotation=60, ha="right", fontsize=7)
        ax.set_ylabel("accuracy" if task_of[d] == "classification" else "RMSE", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(axis="y", alpha=0.3)
    for k in range(len(datasets), nrows * ncols):
        axes[k // ncols][k % ncols].axis("off")
    fig.suptitle(f"{table.title} ({profile} profile)", fontsize=9)
    handles, labels = [], []
    for ax in axes.flat:
        h, lab = ax.get_legend_handles_labels()
        handles += h
        labels += lab
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    fig.savefig(path, dpi=80)
    plt.close(fig)
