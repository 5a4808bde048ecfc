"""Figures of fitted estimators, in the paper's styles: attention maps layer by layer (Fig. 5), t-SNE of the
representations (Fig. 4), training curves, and accuracy against alpha, beta and p (Fig. 9b).

Needs matplotlib (``pip install "eadct[plots]"``). Every function returns a :class:`matplotlib.figure.Figure`
built without pyplot, so nothing is shown, no window opens and no figure lingers in pyplot's registry: save it
with ``fig.savefig(path)``, or let Jupyter display it. Functions that draw one panel take ``ax=`` to draw into
an existing axis (and return that axis' figure). Examples with pictures: docs/inspect.md.
"""

from __future__ import annotations

import numpy as np

from .metrics import average_within_class_distance

__all__ = ["plot_attention_maps", "plot_history", "plot_representations", "plot_sensitivity"]

_PANEL = 2.6  # inches per panel


def _new_figure(rows: int, cols: int, ax=None, **subplot_kw):
    """``(figure, 2-D array of axes)``: a new pyplot-free figure, or ``ax``'s when given (one panel only)."""
    try:
        from matplotlib.figure import Figure
    except ImportError as err:
        raise ImportError('eadct.plotting needs matplotlib: pip install "eadct[plots]"') from err
    if ax is not None:
        if rows * cols != 1:
            raise ValueError(f"ax= draws one panel, but this figure has {rows} x {cols}; leave ax=None.")
        return ax.figure, np.array([[ax]])
    fig = Figure(figsize=(_PANEL * cols + 0.8, _PANEL * rows), layout="constrained")
    return fig, np.atleast_2d(fig.subplots(rows, cols, squeeze=False, **subplot_kw))


# ------------------------------------------------------------------------------------------ attention maps
def _one_series(x):
    """``x`` as a one-series input of ``attention_maps``."""
    if isinstance(x, np.ndarray) or np.isscalar(x):
        x = np.asarray(x)
        if x.ndim in (1, 2):
            return x.reshape(1, -1, x.shape[-1]) if x.ndim == 2 else x.reshape(1, 1, -1)
        if x.ndim == 3 and len(x) == 1:
            return x
    elif hasattr(x, "__len__") and len(x) == 1:
        return x
    shape = getattr(x, "shape", None) or f"{len(x)} series"
    raise ValueError(f"x must be one series, (n_channels, length) or (length,), got {shape}; pick one, e.g. X[0].")


def plot_attention_maps(estimator, x, layers=None, heads=None, kind="weights", difference=False):
    """The attention maps of one series, layers side by side (columns) for the chosen heads (rows): Fig. 5.

    Parameters
    ----------
    estimator : fitted EADCTClassifier, EADCTRegressor or EADCTRepresentation with attention
    x : one series, array of shape (n_channels, length) or (length,) (or a one-series list or DataFrame)
    layers : sequence of int or None
        0-based layers (all when None).
    heads : sequence of int or None
        Heads to draw (all when None).
    kind : {"weights", "logits"}
        As :meth:`~eadct.EADCTClassifier.attention_maps`.
    difference : bool
        Draw each panel after the first as the change from the previous layer drawn (diverging colours,
        centred on 0): how the maps evolve.

    Returns
    -------
    matplotlib.figure.Figure
    """
    maps = estimator.attention_maps(_one_series(x), kind=kind, layers=layers)[0]  # (L, K, M, M)
    layer_ids = list(range(maps.shape[0])) if layers is None else [int(i) for i in np.atleast_1d(layers)]
    head_ids = list(range(maps.shape[1])) if heads is None else [int(h) for h in np.atleast_1d(heads)]
    if any(not 0 <= h < maps.shape[1] for h in head_ids):
        raise ValueError(f"heads must be in [0, {maps.shape[1]}), got {heads!r}.")
    fig, axes = _new_figure(len(head_ids), len(layer_ids))
    for row, h in enumerate(head_ids):
        for col, name in enumerate(layer_ids):
            ax, image = axes[row, col], maps[col, h]
            if difference and col > 0:
                image = image - maps[col - 1, h]
                bound = float(np.abs(image).max()) or 1.0
                shown = ax.imshow(image, cmap="RdBu_r", vmin=-bound, vmax=bound)
                ax.set_title(f"layer {name} - layer {layer_ids[col - 1]}, head {h}", fontsize=8)
            else:
                shown = ax.imshow(image, cmap="viridis")
                ax.set_title(f"layer {name}, head {h}", fontsize=8)
            ax.set_xlabel("key", fontsize=7)
            ax.set_ylabel("query", fontsize=7)
            ax.tick_params(labelsize=6)
            fig.colorbar(shown, ax=ax, shrink=0.8)
    fig.suptitle(f"attention {kind} of {estimator.architecture}", fontsize=9)
    return fig


# ------------------------------------------------------------------------------------------ representations
def _embed(Z: np.ndarray, method: str, random_state) -> np.ndarray:
    """2-D embedding of ``Z`` by t-SNE or PCA (scikit-learn)."""
    if method == "pca":
        from sklearn.decomposition import PCA

        return PCA(n_components=2, random_state=random_state).fit_transform(Z)
    if method == "tsne":
        from sklearn.manifold import TSNE

        perplexity = float(min(30.0, max(1.0, (len(Z) - 1) / 3)))
        return TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=random_state).fit_transform(Z)
    raise ValueError(f"method must be 'tsne' or 'pca', got {method!r}.")


def _representation_panels(Z_or_estimators, X, titles):
    """``[(title, Z), ...]`` from one array, one fitted estimator, or a sequence of either."""
    items = Z_or_estimators
    if isinstance(items, np.ndarray) or hasattr(items, "transform"):
        items = [items]
    panels = []
    for i, item in enumerate(items):
        if hasattr(item, "transform"):
            if X is None:
                raise ValueError("plot_representations needs X to transform with the estimators.")
            title, Z = getattr(item, "architecture", type(item).__name__), item.transform(X)
        else:
            title, Z = f"representation {i}", np.asarray(item, dtype=float)
        if Z.ndim != 2:
            raise ValueError(f"a representation must be 2-D (n_samples, n_features), got shape {Z.shape}.")
        panels.append((titles[i] if titles is not None else title, Z))
    return panels


def plot_representations(Z_or_estimators, X=None, y=None, method="tsne", titles=None, random_state=0, ax=None):
    """Fig. 4: a 2-D map (t-SNE, or PCA for speed) of representations, one panel per model, same data.

    Parameters
    ----------
    Z_or_estimators : array (n_samples, n_features), fitted estimator, or a sequence of either
        Estimators are applied to X with ``transform`` (the fitted representation, the task head's input).
    X : input of the estimators' ``transform``; needed when estimators are passed.
    y : array-like of shape (n_samples,), optional
        Colours: classes (with a legend; the panel title then also gives the normalised AvgWCD of
        :func:`eadct.metrics.average_within_class_distance`) or continuous targets (with a colour bar).
    method : {"tsne", "pca"}
    titles : sequence of str, optional
        Panel titles (default: the estimators' architectures).
    random_state : int
        Seed of t-SNE / PCA.
    ax : matplotlib axis, optional
        Draw into it (one panel only).

    Returns
    -------
    matplotlib.figure.Figure
    """
    panels = _representation_panels(Z_or_estimators, X, titles)
    y = None if y is None else np.asarray(y)
    categorical = y is not None and (y.dtype.kind in "OUSb" or len(np.unique(y)) <= 20)
    fig, axes = _new_figure(1, len(panels), ax=ax)
    for col, (title, Z) in enumerate(panels):
        ax_, points = axes[0, col], _embed(Z, method, random_state)
        if y is None:
            ax_.scatter(points[:, 0], points[:, 1], s=8)
        elif categorical:
            for label in np.unique(y):
                ax_.scatter(*points[y == label].T, s=8, label=str(label))
            title += f"\nAvgWCD (normalised) {average_within_class_distance(Z, y, normalize=True):.3f}"
        else:
            shown = ax_.scatter(points[:, 0], points[:, 1], c=y.astype(float), s=8, cmap="viridis")
            fig.colorbar(shown, ax=ax_, shrink=0.8)
        ax_.set_title(title, fontsize=8)
        ax_.set_xticks([])
        ax_.set_yticks([])
    if categorical and len(np.unique(y)) <= 12:
        axes[0, -1].legend(fontsize=6, markerscale=1.5, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


# ------------------------------------------------------------------------------------------ training curves
def plot_history(estimator, stage=None, ax=None):
    """Training curves from ``history_``: loss per epoch of pretraining and fine-tuning, one panel each.

    Parameters
    ----------
    estimator : fitted eadct estimator
    stage : {"pretrain", "finetune"} or None
        One stage (then ``ax=`` may be given), or every stage that ran.
    ax : matplotlib axis, optional

    Returns
    -------
    matplotlib.figure.Figure
        Train and validation loss per epoch (validation accuracy on a right-hand axis when recorded), the
        chosen (best) epochs marked; an ensemble's members as separate lines.
    """
    history = getattr(estimator, "history_", None)
    if history is None:
        raise ValueError(f"{type(estimator).__name__} is not fitted (no history_); call fit first.")
    stages = [s for s in ("pretrain", "finetune") if any(r["stage"] == s for r in history)]
    if stage is not None:
        if stage not in stages:
            raise ValueError(f"stage must be one of the stages that ran, {stages}, got {stage!r}.")
        stages = [stage]
    fig, axes = _new_figure(1, len(stages), ax=ax)
    for col, name in enumerate(stages):
        _history_panel(axes[0, col], [r for r in history if r["stage"] == name], name)
    return fig


def _history_panel(ax, records: list[dict], name: str) -> None:
    members = sorted({r.get("member", 0) for r in records})
    accuracy_ax = None
    for member in members:
        rows = [r for r in records if r.get("member", 0) == member]
        suffix = f" (member {member})" if len(members) > 1 else ""
        epochs = [r["epoch"] for r in rows]
        ax.plot(epochs, [r["train_loss"] for r in rows], ".-", label="train loss" + suffix)
        if "valid_loss" in rows[0]:
            ax.plot(epochs, [r["valid_loss"] for r in rows], ".--", label="validation loss" + suffix)
        if "valid_accuracy" in rows[0]:
            accuracy_ax = accuracy_ax or ax.twinx()
            accuracy_ax.plot(epochs, [r["valid_accuracy"] for r in rows], ":", color="gray")
            accuracy_ax.set_ylabel("validation accuracy (dotted)", fontsize=7)
        best = [r["epoch"] for r in rows if r.get("best")]
        if best:
            ax.axvline(best[-1], color="black", lw=0.6, alpha=0.5)
    ax.set_title({"pretrain": "pretraining (masked MSE)", "finetune": "fine-tuning"}[name], fontsize=8)
    ax.set_xlabel("epoch", fontsize=7)
    ax.set_ylabel("loss", fontsize=7)
    ax.legend(fontsize=6)


# ------------------------------------------------------------------------------------------ sensitivity
def _results_table(results, score: str) -> dict:
    """Columns of ``cv_results_`` (``param_<name>``) or of a DataFrame / mapping (``<name>``) as arrays."""
    if hasattr(results, "to_dict") and hasattr(results, "columns"):
        results = {c: results[c].to_numpy() for c in results.columns}
    columns = {}
    for key, values in dict(results).items():
        name = key[len("param_") :] if key.startswith("param_") else key
        columns[name] = (
            np.ma.filled(np.ma.asarray(values, dtype=object), None)
            if np.ma.isMaskedArray(values)
            else np.asarray(values, dtype=object)
        )
    if score not in columns:
        raise ValueError(f"results have no column {score!r}; columns: {sorted(columns)}.")
    return columns


def plot_sensitivity(results, params=("alpha", "beta", "attention_ratio"), score="mean_test_score"):
    """Fig. 9b: the score against each hyperparameter, one panel per parameter; the mean over every
    other setting of the grid, with the spread (min to max) as a band.

    Parameters
    ----------
    results : ``GridSearchCV.cv_results_``, or a pandas DataFrame / mapping with one column per parameter
        and a ``score`` column (e.g. a table run's results).
    params : sequence of str
        Parameter names (without ``param_``).
    score : str
        The column to plot (``"mean_test_score"`` for a search; accuracy for a table run).

    Returns
    -------
    matplotlib.figure.Figure
    """
    columns = _results_table(results, score)
    missing = [p for p in params if p not in columns]
    if missing:
        raise ValueError(f"results have no parameter {missing}; parameters: {sorted(set(columns) - {score})}.")
    scores = columns[score].astype(float)
    fig, axes = _new_figure(1, len(params))
    for col, name in enumerate(params):
        ax, values = axes[0, col], columns[name]
        known = np.array([v is not None for v in values])
        levels = sorted({float(v) for v in values[known]})
        groups = [scores[known][values[known].astype(float) == level] for level in levels]
        means = [g.mean() for g in groups]
        ax.fill_between(levels, [g.min() for g in groups], [g.max() for g in groups], alpha=0.2)
        ax.plot(levels, means, "o-")
        ax.set_xlabel(name, fontsize=8)
        ax.set_ylabel(score if col == 0 else "", fontsize=8)
        ax.set_title(f"best {name} = {levels[int(np.argmax(means))]:g}", fontsize=8)
    return fig
