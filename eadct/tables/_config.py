"""Table configurations: which datasets, models, search space and run profile make one paper table.

The files live in ``eadct/tables/configs/`` (TOML); ``profiles.toml`` holds the run profiles every table
shares, and a table file may override a profile's keys under ``[profiles.<name>]``.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

from ._keys import current_defaults, dataset_task, key_base, key_params, unread
from ._sensitivity import grid_models

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CONFIG_PACKAGE = "eadct.tables.configs"
EPOCH_SETTINGS = ("max_epochs", "pretrain_epochs", "n_iter_no_change")
SEARCH_KINDS = {"halving", "random", "none"}
MODEL_KINDS = {"eadct", "minirocket"}
TARGET_KINDS = {"at_least_published", "better_than"}
# the profile settings that change a result (part of a unit's key), in key order
RESULT_SETTINGS = (
    "base",
    "search",
    "n_candidates",
    "eta",
    "search_epochs",
    "pretrain_share",
    "search_validation",
    "search_seed",
    "max_epochs",
    "pretrain_epochs",
    "n_iter_no_change",
)
PROFILE_KEYS = {"description", "seeds", "params", "dataset_params", *RESULT_SETTINGS}
#: Profile keys that may be left out: ``base`` ("paper"), and the refit's epochs (then the base's).
OPTIONAL_KEYS = {"description", "params", "dataset_params", "base", "max_epochs", "pretrain_epochs", "n_iter_no_change"}
#: What a profile's fits start from: the paper's configuration, or the estimators' current defaults.
BASES = {"paper", "defaults"}


class TableConfigError(ValueError):
    """A table configuration that cannot be run (names the file and the key)."""


@dataclass(frozen=True)
class ModelSpec:
    """One row of a table."""

    name: str
    kind: str = "eadct"  # "eadct" (the package's estimators) or "minirocket" (sktime)
    architecture: str | None = "ea-dc-transformer"
    params: dict = field(default_factory=dict)
    search: tuple[str, ...] = ()
    # take the hyperparameters chosen for this model and its fixed params, then apply ``params``
    inherit: str | None = None


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    search: str
    n_candidates: int
    eta: int
    search_epochs: tuple[int, ...]
    pretrain_share: float
    search_validation: float
    search_seed: int
    seeds: tuple[int, ...]
    max_epochs: int | None
    pretrain_epochs: int | None
    n_iter_no_change: int | None
    params: dict
    dataset_params: dict
    base: str = "paper"

    def base_params(self, task: str = "classification") -> dict:
        """The settings every fit of the profile starts from: ``paper_configuration(task)``, or the defaults of the
        same settings of the estimator of ``task`` (``base = "defaults"``: what ``EADCTClassifier()`` or
        ``EADCTRegressor()`` does today)."""
        from ..estimators import flatten, paper_configuration

        if self.base == "paper":
            return flatten(paper_configuration(task))
        defaults = current_defaults(task)
        return {k: defaults[k] for k in flatten(paper_configuration(task))}

    def epochs(self, task: str = "classification") -> dict:
        """The refit's ``max_epochs``, ``pretrain_epochs``, ``n_iter_no_change``: the profile's, else the base's
        (of ``task``'s estimator: the classifier's and the regressor's defaults may differ)."""
        base = self.base_params(task)
        return {k: base[k] if getattr(self, k) is None else getattr(self, k) for k in EPOCH_SETTINGS}

    def settings(self, dataset: str) -> dict:
        """The profile's own settings that change a result on ``dataset`` (part of a unit's key, which adds the
        base settings: ``_keys.key_base``)."""
        out = {k: getattr(self, k) for k in RESULT_SETTINGS}
        out["search_epochs"] = list(out["search_epochs"])
        out["params"] = {**self.params, **self.dataset_params.get(dataset, {})}
        return out


@dataclass(frozen=True)
class TableConfig:
    name: str
    title: str
    datasets: tuple[str, ...]
    models: dict  # name -> ModelSpec, in table order
    space: dict  # parameter -> list of values
    profiles: dict  # name -> Profile
    published: str | None = None
    published_params: str | None = None
    targets: tuple = ()
    path: str = ""
    compare: tuple = ()  # models compared pairwise with every other row in the report
    representations: bool = False  # record each classification fit's TEST representations (AvgWCD, Fig. 4)
    tsne: str | None = None  # the dataset of the report's t-SNE panel
    sensitivity: tuple = ()  # the parameters a [grid] section sweeps (one row per point)

    def profile(self, name: str) -> Profile:
        if name not in self.profiles:
            raise TableConfigError(f"{self.path}: no profile {name!r}; the profiles are {sorted(self.profiles)}.")
        return self.profiles[name]

    def model_key(self, model: str, dataset: str, profile: str) -> str:
        """Directory name of a (model, dataset, profile): the architecture and a hash of everything that
        decides its results, so equal specifications in two tables share their results and a changed
        configuration never reuses stale ones."""
        spec = self.models[model]
        settings = self.profile(profile).settings(dataset)
        # a default changed since the reference enters as if the row set it (_keys.py)
        settings["base_params"], changed = key_base(settings["base"], dataset_task(dataset), dataset)
        if spec.kind == "eadct":  # a changed default the row's network does not read leaves the fit as it was
            changed = unread(changed, spec.architecture)
        content = {
            "kind": spec.kind,
            "architecture": spec.architecture,
            "params": key_params(settings["base_params"], changed, spec.params)
            if spec.kind == "eadct"
            else spec.params,
            "search": {p: self.space[p] for p in spec.search},
            "inherit": None if spec.inherit is None else self.model_key(spec.inherit, dataset, profile),
            "profile": settings,
        }
        digest = hashlib.sha1(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()[:10]
        return f"{spec.architecture if spec.kind == 'eadct' else spec.kind}-{digest}"


def available_tables() -> list[str]:
    """Names of the configurations that ship with the package."""
    files = resources.files(CONFIG_PACKAGE).iterdir()
    return sorted(f.name[:-5] for f in files if f.name.endswith(".toml") and f.name != "profiles.toml")


def _read(path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as err:
        raise TableConfigError(f"{path} is not valid TOML: {err}") from None


def _profiles(raw: dict, overrides: dict, where: str) -> dict:
    merged = copy.deepcopy(raw)
    for name, over in overrides.items():
        base = merged.setdefault(name, {})
        for key, value in over.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                base[key] = {**base[key], **value}
            else:
                base[key] = value
    out = {}
    for name, p in merged.items():
        unknown = set(p) - PROFILE_KEYS
        if unknown:
            raise TableConfigError(f"{where}: profile {name!r} has unknown keys {sorted(unknown)}.")
        missing = PROFILE_KEYS - OPTIONAL_KEYS - set(p)
        if missing:
            raise TableConfigError(f"{where}: profile {name!r} lacks {sorted(missing)}.")
        if p["search"] not in SEARCH_KINDS:
            raise TableConfigError(
                f"{where}: profile {name!r} search={p['search']!r}; use one of {sorted(SEARCH_KINDS)}."
            )
        if not p["search_epochs"] or not p["seeds"] or p["n_candidates"] < 1 or p["eta"] < 2:
            raise TableConfigError(
                f"{where}: profile {name!r} needs search_epochs and seeds, n_candidates >= 1 and eta >= 2."
            )
        if p.get("base", "paper") not in BASES:
            raise TableConfigError(f"{where}: profile {name!r} base={p['base']!r}; use one of {sorted(BASES)}.")
        if not 0 < p["search_validation"] < 1:
            raise TableConfigError(f"{where}: profile {name!r} search_validation must lie in (0, 1).")
        out[name] = Profile(
            name=name,
            description=p.get("description", ""),
            search=p["search"],
            n_candidates=int(p["n_candidates"]),
            eta=int(p["eta"]),
            search_epochs=tuple(int(e) for e in p["search_epochs"]),
            pretrain_share=float(p["pretrain_share"]),
            search_validation=float(p["search_validation"]),
            search_seed=int(p["search_seed"]),
            seeds=tuple(int(s) for s in p["seeds"]),
            **{k: int(p[k]) if k in p else None for k in EPOCH_SETTINGS},
            base=p.get("base", "paper"),
            params=dict(p.get("params", {})),
            dataset_params={k: dict(v) for k, v in p.get("dataset_params", {}).items()},
        )
    return out


def _models(raw_models: dict, space: dict, where: str) -> dict:
    """The ``[models.<name>]`` sections as ModelSpecs; a variant (``inherit``) gets its base's params first."""
    models = {}
    for mname, m in raw_models.items():
        kind = m.get("kind", "eadct")
        if kind not in MODEL_KINDS:
            raise TableConfigError(f"{where}: model {mname!r} kind={kind!r}; use one of {sorted(MODEL_KINDS)}.")
        search = tuple(m.get("search", ()))
        unknown = [p for p in search if p not in space]
        if unknown:
            raise TableConfigError(f"{where}: model {mname!r} searches {unknown}, which [space] does not list.")
        models[mname] = ModelSpec(
            name=mname,
            kind=kind,
            architecture=m.get("architecture", "ea-dc-transformer") if kind == "eadct" else None,
            params=dict(m.get("params", {})),
            search=search,
            inherit=m.get("inherit"),
        )
    if not models:
        raise TableConfigError(f"{where}: no [models.<name>] sections.")
    for spec in models.values():
        if spec.inherit is not None and (spec.inherit not in models or models[spec.inherit].inherit is not None):
            raise TableConfigError(
                f"{where}: model {spec.name!r} inherits {spec.inherit!r}, which must be a model of this table "
                "that does not inherit itself."
            )
    for name, spec in list(models.items()):  # a variant is its base with one component changed
        if spec.inherit is not None:
            models[name] = replace(spec, params={**models[spec.inherit].params, **spec.params})
    return models


def load_table(name_or_path, profiles_path=None) -> TableConfig:
    """Read a table configuration.

    Parameters
    ----------
    name_or_path : str or path
        A shipped table (``"table1"`` ... ``"table4"``, ``"extras"``; see :func:`available_tables`) or the path
        of a TOML file of the same layout.
    profiles_path : path, optional
        Profiles file; default: ``profiles.toml`` beside a given file when there is one, else the shipped one.
    """
    path = Path(str(name_or_path))
    if not path.suffix == ".toml":
        if name_or_path not in available_tables():
            raise TableConfigError(
                f"No table {name_or_path!r}; the shipped tables are {available_tables()} (or pass a .toml path)."
            )
        path = Path(str(resources.files(CONFIG_PACKAGE) / f"{name_or_path}.toml"))
    if not path.is_file():
        raise TableConfigError(f"Table configuration {path} does not exist.")
    raw = _read(path)
    where = str(path)
    if profiles_path is None:
        beside = path.with_name("profiles.toml")
        profiles_path = beside if beside.is_file() else resources.files(CONFIG_PACKAGE) / "profiles.toml"
    profiles = _profiles(_read(profiles_path), raw.get("profiles", {}), where)

    table = raw.get("table")
    if not isinstance(table, dict) or "name" not in table or "datasets" not in table:
        raise TableConfigError(f"{where}: needs a [table] section with name and datasets.")
    space = {k: list(v) for k, v in raw.get("space", {}).items()}
    try:
        grid, swept = grid_models(raw.get("grid"), where)
    except ValueError as err:
        raise TableConfigError(str(err)) from None
    models = _models({**grid, **raw.get("models", {})}, space, where)
    targets = tuple(raw.get("targets", ()))
    for t in targets:
        if t.get("kind") not in TARGET_KINDS or t.get("model") not in models:
            raise TableConfigError(
                f"{where}: target {t} needs kind in {sorted(TARGET_KINDS)} and a model of the table."
            )
    return TableConfig(
        name=table["name"],
        title=table.get("title", table["name"]),
        datasets=tuple(table["datasets"]),
        models=models,
        space=space,
        profiles=profiles,
        published=table.get("published"),
        published_params=table.get("published_params"),
        targets=targets,
        path=where,
        compare=_compared(table.get("compare", ()), models, where),
        representations=bool(table.get("representations", False)),
        tsne=_tsne_dataset(table, where),
        sensitivity=swept,
    )


def _tsne_dataset(table: dict, where: str) -> str | None:
    name = table.get("tsne")
    if name is not None and name not in table["datasets"]:
        raise TableConfigError(f"{where}: tsne = {name!r} is not one of the table's datasets.")
    return name


def _compared(names, models: dict, where: str) -> tuple:
    unknown = [n for n in names if n not in models]
    if unknown:
        raise TableConfigError(f"{where}: compare names {unknown}, which are not models of the table.")
    return tuple(names)
