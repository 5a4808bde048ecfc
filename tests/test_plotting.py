"""eadct.plotting (issue 16): every function returns a Figure with the expected panels, headless."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from conftest import TINY, make_panel
from sklearn.model_selection import GridSearchCV

from eadct import EADCTClassifier, EADCTRegressor

pytest.importorskip("matplotlib")
from matplotlib.figure import Figure  # noqa: E402

from eadct import plotting  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    X, y = make_panel(n=24, length=16)
    return (
        EADCTClassifier(**{**TINY, "n_blocks": 2, "attention_downsample": 1, "validation_fraction": 0.25}).fit(X, y),
        X,
        y,
    )


def _panels(fig, with_colorbars=False):
    """Axes that hold data (colour bars and twin axes excluded unless asked)."""
    return [ax for ax in fig.axes if with_colorbars or ax.get_label() != "<colorbar>"]


def test_attention_maps_figure(fitted, tmp_path):
    est, X, _ = fitted
    fig = plotting.plot_attention_maps(est, X[0], layers=[0, 1, 3], heads=[1])
    assert isinstance(fig, Figure) and len(_panels(fig)) == 3  # one head x three layers
    assert [ax.get_title() for ax in _panels(fig)] == ["layer 0, head 1", "layer 1, head 1", "layer 3, head 1"]
    fig = plotting.plot_attention_maps(est, X[0], difference=True)
    assert len(_panels(fig)) == 2 * 4
    assert _panels(fig)[1].get_title() == "layer 1 - layer 0, head 0"
    fig.savefig(tmp_path / "maps.png")  # renders headless
    with pytest.raises(ValueError, match="one series"):
        plotting.plot_attention_maps(est, X[:2])
    with pytest.raises(ValueError, match="heads must be in"):
        plotting.plot_attention_maps(est, X[0], heads=[5])


def test_representations_figure(fitted):
    est, X, y = fitted
    fig = plotting.plot_representations([est, est.transform(X)], X, y, method="pca", titles=["fitted", "again"])
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert fig.axes[0].get_title().startswith("fitted\nAvgWCD (normalised)")
    fig = plotting.plot_representations(est.transform(X), y=np.linspace(0, 1, len(X)), method="tsne")
    assert len(_panels(fig)) == 1 and len(_panels(fig, with_colorbars=True)) == 2  # continuous y: colour bar
    from matplotlib.figure import Figure as F

    ax = F().subplots()
    assert plotting.plot_representations(est, X, y, method="pca", ax=ax) is ax.figure
    with pytest.raises(ValueError, match="needs X"):
        plotting.plot_representations(est)
    with pytest.raises(ValueError, match="method must be"):
        plotting.plot_representations(est.transform(X), method="umap")
    with pytest.raises(ValueError, match="ax= draws one panel"):
        plotting.plot_representations([est, est], X, ax=ax)


def test_history_figure(fitted):
    est, _, _ = fitted
    fig = plotting.plot_history(est)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert isinstance(fig, Figure) and titles == ["pretraining (masked MSE)", "fine-tuning"]
    assert len([ax for ax in fig.axes if ax.get_title()]) == 2
    fig = plotting.plot_history(est, stage="finetune")
    assert [ax.get_title() for ax in fig.axes if ax.get_title()] == ["fine-tuning"]
    with pytest.raises(ValueError, match="stages that ran"):
        plotting.plot_history(est, stage="warmup")
    with pytest.raises(ValueError, match="not fitted"):
        plotting.plot_history(EADCTRegressor())


def test_sensitivity_figure_from_grid_search_and_frame():
    X, y = make_panel(n=12, length=8)
    tiny = {**TINY, "max_epochs": 1, "pretrain_epochs": 0}
    search = GridSearchCV(EADCTClassifier(**tiny), {"alpha": [0.1, 0.5], "beta": [0.3, 0.6]}, cv=2).fit(X, y)
    fig = plotting.plot_sensitivity(search.cv_results_, params=("alpha", "beta"))
    assert isinstance(fig, Figure) and len(fig.axes) == 2
    assert fig.axes[0].get_xlabel() == "alpha"
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"alpha": [0.1, 0.1, 0.5, 0.5], "attention_ratio": [0.25, 0.5] * 2, "score": [1, 2, 3, 5]})
    fig = plotting.plot_sensitivity(frame, params=("alpha", "attention_ratio"), score="score")
    line = fig.axes[0].get_lines()[0]
    np.testing.assert_allclose(line.get_ydata(), [1.5, 4.0])  # mean over the other parameter
    assert fig.axes[0].get_title() == "best alpha = 0.5"
    with pytest.raises(ValueError, match="no parameter"):
        plotting.plot_sensitivity(frame, params=("beta",), score="score")


def test_missing_matplotlib_names_the_extra(fitted, monkeypatch):
    est, X, _ = fitted
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"eadct\[plots\]"):
        plotting.plot_history(est)
