"""The bake-off report's figures: aeon's critical-difference diagram and score against fit time (PNG, Agg)."""

from __future__ import annotations

import numpy as np

from ._stats import ALPHA, cd_groups, rank_table, rounded


def critical_difference(means, higher_is_better, path, alpha=ALPHA) -> dict:
    """Draw aeon's critical-difference diagram to ``path`` (PNG); return its ``order``, ``groups``,
    ``friedman_p`` and aeon's ``p_values`` (one-sided, methods in ``order``). Needs at least 3 methods."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from aeon.benchmarking.stats import check_friedman
    from aeon.visualisation import plot_critical_difference

    if means.shape[1] < 3:
        raise ValueError(f"a critical-difference diagram needs at least 3 methods, got {list(means.columns)}")
    values = rounded(means).to_numpy()
    options = dict(lower_better=not higher_is_better, test="wilcoxon", correction="holm", alpha=alpha)
    fig, _, p_values = plot_critical_difference(values, list(means.columns), **options, return_p_values=True)
    fig.savefig(path, dpi=120, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    order, groups = cd_groups(means, higher_is_better, p_values, alpha)
    friedman = float(check_friedman(rank_table(means, higher_is_better).to_numpy()))
    return {"order": order, "groups": groups, "friedman_p": friedman, "p_values": p_values}


def plot_time(means, fit_means, score_label, path) -> None:
    """Score against mean fit time (seconds, log x) for the methods in ``fit_means`` (datasets x methods, ms);
    small points per method x dataset, a large marker per method (geometric-mean time, mean score)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    for i, name in enumerate(fit_means.columns):
        seconds = np.maximum(fit_means[name].to_numpy(dtype=float), 1.0) / 1000.0  # below 1 ms drawn at 1 ms
        score = means[name].to_numpy(dtype=float)
        ok = np.isfinite(seconds) & np.isfinite(score)
        colour = f"C{i % 10}"
        ax.scatter(seconds[ok], score[ok], s=14, alpha=0.45, color=colour)
        centre = [np.exp(np.mean(np.log(seconds[ok])))], [np.mean(score[ok])]
        ax.scatter(*centre, s=120, marker="D", color=colour, edgecolor="black", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("mean fit time per dataset (s, log scale)")
    ax.set_ylabel(score_label)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.savefig(path, dpi=120, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
