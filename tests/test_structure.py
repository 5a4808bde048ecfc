"""One place per concept: the architecture registry, the single parameter source, the pure memory planner,
and the code-size and import rules of docs/model.md ("Architecture of the code")."""

from __future__ import annotations

import ast
import inspect
import re
import warnings
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import TINY, make_panel

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation, LearnedNothingWarning
from eadct.estimators._params import (
    CLASSIFIER_DEFAULTS,
    OPTIONS,
    PARAMS,
    REGRESSOR_DEFAULTS,
    REGRESSOR_OPTIONS,
    REMOVED,
    REPRESENTATION_DEFAULTS,
    SUPERVISED,
    UNSUPERVISED,
    UNSUPERVISED_OPTIONS,
)
from eadct.networks import (
    ARCHITECTURES,
    Architecture,
    EncoderConfig,
    encoder_settings,
    get_architecture,
    plan_training_memory,
    register_architecture,
)

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------------------------- registry
@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_every_architecture_builds_its_declared_width(name):
    arch = get_architecture(name)
    config = EncoderConfig(n_channels=3, max_len=12, **arch.resolve({"d_model": 16, "n_heads": 2, "d_ff": 16}))
    out = arch.build(config)(torch.randn(2, 12, 3))
    assert out.shape == (2, 12, arch.width(config))
    assert arch.uses <= set(encoder_settings())
    assert set(arch.overrides) <= set(encoder_settings())


#: A value other than EncoderConfig's default for each encoder setting (each valid alone).
_OTHER_VALUES = {"d_model": 8, "n_heads": 4, "n_blocks": 1, "attention_ratio": 0.5, "alpha": 0.9, "beta": 0.9,
                 "attention_kernel_size": 5, "conv_kernel_size": 5, "dilation_per_layer": True,
                 "positional_encoding": "sinusoidal", "input_differences": True, "series_normalization": True,
                 "d_ff": 8, "dropout": 0.3, "norm": "layer", "recompute_attention": True, "attention_downsample": 2,
                 "attention_tokens": 4}  # fmt: skip


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_a_setting_an_architecture_does_not_declare_leaves_its_network_as_it_is(name):
    """``uses`` is what a row reads: changing any other encoder setting builds the same network (same weights from
    the same seed, same output), so the tables may leave such a changed default out of a unit's key."""
    assert set(_OTHER_VALUES) == set(encoder_settings())
    arch = get_architecture(name)
    x = torch.randn(3, 12, 2)

    def output(**change):
        torch.manual_seed(0)
        settings = arch.resolve({"d_model": 16, "n_heads": 2, "d_ff": 16, **change})
        network = arch.build(EncoderConfig(n_channels=2, max_len=12, **settings))  # training mode: dropout acts
        torch.manual_seed(1)
        return network(x).detach()

    base = output()
    for setting in sorted(set(encoder_settings()) - arch.uses):
        assert torch.equal(output(**{setting: _OTHER_VALUES[setting]}), base), setting
    if name == "transformer":  # no convolution branch
        assert arch.uses.isdisjoint({"conv_kernel_size", "dilation_per_layer"})


def test_unknown_architecture_names_the_registered_ones():
    with pytest.raises(ValueError, match=r"architecture must be one of \['dc-transformer'"):
        get_architecture("mamba")
    with pytest.raises(ValueError, match="registered already"):
        register_architecture(Architecture("lstm", ARCHITECTURES["lstm"].build))


def test_a_new_row_is_one_registry_entry(monkeypatch):
    """A registered toy architecture fits and predicts through the estimators with nothing else changed."""

    class MeanEncoder(torch.nn.Module):
        def __init__(self, config):
            super().__init__()
            self.d_model = config.d_model
            self.proj = torch.nn.Linear(config.n_channels, config.d_model)

        def forward(self, x, valid=None):
            return self.proj(x) if valid is None else self.proj(x) * valid.unsqueeze(-1)

    monkeypatch.setitem(ARCHITECTURES, "toy", Architecture("toy", MeanEncoder, uses={"d_model"}, attention=False))
    X, y = make_panel(n=12, channels=2, length=10, n_classes=2)
    clf = EADCTClassifier(**{**TINY, "architecture": "toy"}).fit(X, y)
    assert clf.predict(X).shape == (12,)
    assert isinstance(clf.network_.encoder, MeanEncoder)


def test_docs_table_lists_every_architecture_once():
    text = (ROOT / "docs" / "model.md").read_text()
    rows = re.findall(r'^\| `"([a-z-]+)"`', text, flags=re.M)
    assert sorted(rows) == sorted(ARCHITECTURES)


# ----------------------------------------------------------------------------------------------- parameters
#: Each estimator's flat parameters, fields of ``options`` and own defaults, as eadct.estimators._params lists them.
_STRUCTURE = {
    EADCTClassifier: (SUPERVISED, OPTIONS, CLASSIFIER_DEFAULTS),
    EADCTRegressor: (SUPERVISED, REGRESSOR_OPTIONS, REGRESSOR_DEFAULTS),
    EADCTRepresentation: (UNSUPERVISED, UNSUPERVISED_OPTIONS, REPRESENTATION_DEFAULTS),
}


@pytest.mark.parametrize("cls", [EADCTClassifier, EADCTRegressor, EADCTRepresentation])
def test_parameters_derive_from_one_source(cls):
    flat, option_names, own = _STRUCTURE[cls]
    signature = inspect.signature(cls)
    assert tuple(signature.parameters) == flat and set(flat).isdisjoint(option_names)
    assert set(own) <= set(flat) | set(option_names)
    config = {f.name: f.default for f in fields(EncoderConfig)}
    for name in encoder_settings():  # every exposed encoder field is a parameter or a field of options, with the
        # config's default (or the estimator's own, defined once in eadct.estimators._params)
        assert name in flat or name in option_names, name
        assert PARAMS[name].default == config[name]
    defaults = {**{n: p.default for n, p in PARAMS.items()}, **own}
    for name, param in signature.parameters.items():
        assert param.kind is param.KEYWORD_ONLY
        assert param.default == defaults[name], name
        assert f"    {name} : " in cls.__doc__  # documented, from the same definition
    for name in option_names:
        assert f"* ``{name}`` : " in cls.__doc__  # each field documented under options, from the same definition
    assert set(REMOVED).isdisjoint(set(flat) | set(option_names))
    assert cls().get_params(deep=False) == {n: p.default for n, p in signature.parameters.items()}
    assert cls().get_params() == {
        **{n: p.default for n, p in signature.parameters.items()},
        **{f"options__{n}": defaults[n] for n in option_names},
    }


def test_init_refuses_unknown_and_maps_the_old_name():
    with pytest.raises(TypeError, match="unexpected keyword argument 'alhpa'"):
        EADCTClassifier(alhpa=0.3)
    moved = re.escape("checkpoint_attention is now a field of options: pass options={'recompute_attention': True}")
    with pytest.warns(FutureWarning, match=moved):
        clf = EADCTClassifier(checkpoint_attention=True)
    assert clf.options == {"recompute_attention": True}
    assert clf.get_params()["options__recompute_attention"] is True
    assert not any("checkpoint_attention" in k for k in clf.get_params())


def test_one_validator_accepts_grid_values():
    """numpy scalars from a parameter grid pass the estimator's and the config's checks alike."""
    X, y = make_panel(n=12, channels=2, length=10, n_classes=2)
    params = {**TINY, "d_model": np.int64(16), "alpha": np.float64(0.4)}
    clf = EADCTClassifier(**params, options={"recompute_attention": np.bool_(True)}).fit(X, y)
    assert clf.network_.encoder.config.recompute_attention is True
    assert EncoderConfig(n_channels=1, max_len=4, recompute_attention=np.bool_(False), d_model=16, n_heads=2)


# ----------------------------------------------------------------------------------------------- memory plan
def _plan(free_bytes, keeps_freed=False, guard="auto", recompute="auto"):
    config = EncoderConfig(n_channels=3, max_len=400, recompute_attention=recompute, attention_downsample=1)
    return plan_training_memory(
        config,
        get_architecture("ea-dc-transformer").training_bytes,
        batch_size=32,
        n_train=100,
        length=400,
        device="cpu",
        guard=guard,
        free_bytes=free_bytes,
        keeps_freed=keeps_freed,
    )


def test_memory_plan_is_a_function_of_its_arguments():
    assert _plan(8 * 2**30) == _plan(8 * 2**30)
    assert _plan(64 * 2**30).overrides == {} and _plan(64 * 2**30).fits
    small = _plan(2**30)
    assert small.overrides and small.fits and "memory_plan_" in small.message
    refused = _plan(2**30, guard="raise")
    assert not refused.fits and "Settings that would fit" in refused.message
    assert _plan(2**20, guard="off") == _plan(2**40, guard="off")
    # the process state is an argument: keeping freed memory turns "auto" into stored maps, a larger estimate
    assert _plan(8 * 2**30, keeps_freed=True).need_bytes > _plan(8 * 2**30, keeps_freed=False).need_bytes


def test_estimators_with_equal_params_plan_alike(monkeypatch):
    import eadct.estimators._base as base

    monkeypatch.setattr(base, "available_memory_bytes", lambda device: 2 * 2**20)  # pretend 2 MB free
    X, y = make_panel(length=96)
    plans = []
    for _ in range(2):
        with pytest.warns(UserWarning, match="memory_plan_"):
            plans.append(EADCTClassifier(**TINY, options={"memory_guard": "auto"}).fit(X, y).memory_plan_)
    assert plans[0] == plans[1] != {}


# ----------------------------------------------------------------------------------------------- validation split
def test_an_empty_validation_split_is_announced():
    X, y = make_panel(n=12, channels=2, length=10, n_classes=3)  # 4 per class: round(0.4) = 0 each
    with pytest.warns(UserWarning, match="holds out no series .* chosen on the training loss"):
        clf = EADCTClassifier(**TINY, validation_fraction=0.1, options={"average_epochs": None}).fit(X, y)
    assert all("valid_loss" not in r for r in clf.history_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", LearnedNothingWarning)  # three epochs on 12 series: not this test's subject
        EADCTClassifier(**{**TINY, "validation_fraction": 0.0}).fit(X, y)  # asked for: no warning of the split


# ----------------------------------------------------------------------------------------------- code rules
def _python_files(*folders):
    for folder in folders:
        yield from sorted((ROOT / folder).rglob("*.py"))


def test_files_and_functions_stay_small():
    long_files, long_functions = [], []
    for path in _python_files("eadct", "benchmarks"):
        source = path.read_text()
        if path.relative_to(ROOT).parts[0] == "eadct" and source.count("\n") > 450:
            long_files.append(path.name)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                if node.end_lineno - start + 1 > 60:
                    long_functions.append(f"{path.name}:{node.name}")
    assert not long_files and not long_functions
    assert (ROOT / "eadct" / "estimators" / "_base.py").read_text().count("\n") < 300


def _imported_modules(path: Path):
    """Absolute names of the modules ``path`` imports from (relative imports resolved)."""
    package = list(path.relative_to(ROOT).with_suffix("").parts[:-1])
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            yield ".".join(base + ([node.module] if node.module else []))


def test_no_import_of_another_package_private_module():
    """``eadct.<a>`` imports only public modules of ``eadct.<b>``; benchmarks only public modules."""
    offenders = []
    for path in _python_files("eadct", "benchmarks"):
        parts = path.relative_to(ROOT).parts
        own = parts[1] if parts[0] == "eadct" and len(parts) > 2 else None
        for name in _imported_modules(path):
            mod = name.split(".")
            private = mod[0] == "eadct" and any(p.startswith("_") and p != "__init__" for p in mod[1:])
            if private and (own is None or mod[1] != own):
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert not offenders


def test_no_two_modules_import_each_other():
    """No import cycle in eadct, counting the imports inside functions (a lazy import hides a cycle from the
    interpreter, not from the reader); a package and its own modules may import each other."""
    graph = {}
    for path in _python_files("eadct"):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        graph[name] = set(_imported_modules(path))
    for path in _python_files("eadct"):  # "from . import x" names the module x, not the package
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level and not node.module:
                graph[name] |= {f"{package}.{a.name}" for a in node.names if f"{package}.{a.name}" in graph}
    related = lambda a, b: a.startswith(b + ".") or b.startswith(a + ".")  # noqa: E731
    pairs = [(a, b) for a, imported in graph.items() for b in imported if b in graph and a in graph[b]]
    cycles = sorted({tuple(sorted(pair)) for pair in pairs if pair[0] != pair[1] and not related(*pair)})
    assert not cycles


def test_pickles_from_before_the_rename_load(fitted_classifier, panel):
    """A pickle written before recompute_attention, options and _network_spec (eadct 0.1.0 at a6fc7c7: every
    setting flat, checkpoint_attention the old name) still loads; the old name's value lands in options."""
    X, _ = panel
    state = fitted_classifier.__getstate__()
    assert state.pop("options") is None
    fields = {k.removeprefix("options__"): v for k, v in fitted_classifier.get_params().items() if "__" in k}
    state.update(fields)  # the old version stored every setting flat
    state["checkpoint_attention"] = state.pop("recompute_attention")
    spec = state.pop("_network_spec")
    state["_network_args"] = (spec["n_channels"], spec["max_len"], spec["n_outputs"], spec["plan"])
    old = EADCTClassifier.__new__(EADCTClassifier)
    old.__setstate__(state)
    assert old.get_params() == fitted_classifier.get_params()
    np.testing.assert_array_equal(old.predict_proba(X), fitted_classifier.predict_proba(X))
    state.update(checkpoint_attention=True, memory_plan_={"checkpoint_attention": True})  # a value not the default
    old = EADCTClassifier.__new__(EADCTClassifier)
    old.__setstate__(state)
    assert old.options == {"recompute_attention": True}
    assert old.memory_plan_ == {"recompute_attention": True}
    np.testing.assert_array_equal(old.predict_proba(X), fitted_classifier.predict_proba(X))
