"""The estimators' small signature and their ``options``: one nested dict that scikit-learn's tools reach with
``options__<field>``; removed parameters through the deprecation path; old saved states upgraded."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation
from eadct.estimators._options import flatten, nest
from eadct.estimators._params import CLASSIFIER_DEFAULTS, OPTIONS, REGRESSOR_DEFAULTS, REGRESSOR_OPTIONS, REMOVED
from eadct.estimators._persistence import _upgrade_state

#: A value of each removed parameter that did something.
USED = {
    "relative_positions": True,
    "drop_path": 0.1,
    "conv_causal": False,
    "stem_kernel_size": 9,
    "pool_layers": "all",
    "head_init": "probe",
    "head_hidden_size": 8,
    "head_input_parts": 4,
    "clip_predictions": True,
    "clip_representation": True,
    "log_inputs": "auto",
    "lr_schedule": "cosine",
    "min_steps": 400,
    "average_batch_norm": "recompute",
    "average_decay": 0.9,
    "augmentation": 0.1,
    "window_slicing": 0.1,
    "mask_augmentation": 0.1,
    "mixup": 0.2,
    "label_smoothing": 0.1,
    "sam_rho": 0.05,
}
ESTIMATORS = (EADCTClassifier, EADCTRegressor, EADCTRepresentation)
TINY = dict(d_model=8, n_heads=2, n_blocks=1, d_ff=8, attention_ratio=0.5, max_epochs=1, batch_size=8, device="cpu")


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_each_signature_fits_on_a_screen(cls):
    assert len(inspect.signature(cls).parameters) <= 26
    assert "options" in inspect.signature(cls).parameters


def test_get_params_lists_every_field_with_the_value_in_effect():
    params = EADCTClassifier(options={"n_segments": 2}).get_params()
    assert params["options__n_segments"] == 2
    assert params["options__average_epochs"] == CLASSIFIER_DEFAULTS["average_epochs"]
    assert {k.removeprefix("options__") for k in params if k.startswith("options__")} == set(OPTIONS)
    regressor = EADCTRegressor().get_params()
    assert "max_steps" not in REGRESSOR_DEFAULTS and regressor["options__max_steps"] is None  # no step cap
    assert {k.removeprefix("options__") for k in regressor if k.startswith("options__")} == set(REGRESSOR_OPTIONS)
    assert EADCTClassifier().get_params(deep=False)["options"] is None


def test_set_params_sets_one_field_and_never_changes_the_callers_dict():
    given = {"n_segments": 2}
    est = EADCTClassifier(options=given)
    est.set_params(options__max_steps=7)
    assert est.options == {"n_segments": 2, "max_steps": 7}
    assert given == {"n_segments": 2}
    assert clone(est).get_params()["options__max_steps"] == 7
    with pytest.raises(ValueError, match="no field 'bogus'"):
        est.set_params(options__bogus=1)
    plain = EADCTClassifier()
    plain.set_params(**plain.get_params())  # every field at the value it has: options stays None (sktime checks this)
    assert plain.options is None


def test_grid_search_reaches_a_field_with_the_double_underscore():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(16, 1, 12)), np.repeat([0, 1], 8)
    grid = GridSearchCV(EADCTClassifier(**TINY, pretrain_epochs=0), {"options__n_segments": [1, 2]}, cv=2)
    grid.fit(X, y)
    assert grid.best_params_["options__n_segments"] in (1, 2)
    assert grid.best_estimator_.options["n_segments"] == grid.best_params_["options__n_segments"]


def test_an_unknown_field_is_a_value_error_at_fit_naming_the_fields():
    X, y = np.zeros((8, 1, 6)), np.repeat([0, 1], 4)
    with pytest.raises(ValueError, match="no field 'mixup'.*removed.*Its fields are"):
        EADCTClassifier(**TINY, options={"mixup": 0.2}).fit(X, y)
    with pytest.raises(ValueError, match="options must be None or a dict"):
        EADCTClassifier(**TINY, options=[("n_segments", 2)]).fit(X, y)
    with pytest.raises(ValueError, match="n_segments must be a positive int"):
        EADCTClassifier(**TINY, options={"n_segments": 0}).fit(X, y)


@pytest.mark.parametrize("name", sorted(REMOVED))
def test_a_removed_parameter_warns_at_the_value_that_did_nothing_and_is_refused_at_another(name):
    assert set(USED) == set(REMOVED)
    with pytest.warns(FutureWarning, match=f"{name} was removed"):
        est = EADCTClassifier(**{name: REMOVED[name]})
    assert name not in est.get_params()
    with pytest.raises(TypeError, match=f"{name} was removed"):
        EADCTClassifier(**{name: USED[name]})


def test_a_field_passed_flat_moves_into_options_with_a_future_warning():
    with pytest.warns(FutureWarning, match="now a field of options"):
        est = EADCTRegressor(max_steps=50, options={"loss": "huber"})
    assert est.options == {"loss": "huber", "max_steps": 50}
    with pytest.warns(FutureWarning, match="now a field of options"):
        est.set_params(n_segments=3)
    assert est.options["n_segments"] == 3
    with pytest.warns(FutureWarning, match="renamed|field of options"):
        assert EADCTClassifier(checkpoint_attention=True).options == {"recompute_attention": True}
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        EADCTClassifier(bogus=1)


def test_flatten_and_nest_are_inverse():
    params = {"d_model": 16, "options": {"n_segments": 2, "max_steps": 9}}
    flat = flatten(params)
    assert flat == {"d_model": 16, "n_segments": 2, "max_steps": 9}
    assert nest(EADCTClassifier, flat) == params
    assert EADCTClassifier(**nest(EADCTClassifier, flat)).get_params()["options__max_steps"] == 9


def test_a_state_of_the_flat_version_loads_with_its_fields_in_options():
    state = {"d_model": 16, "n_segments": 2, "average_epochs": 20, "mixup": 0.0, "pool_layers": "last",
             "wide_scales": 100.0, "input_differences": "auto"}  # fmt: skip
    _upgrade_state(state, EADCTClassifier)
    assert state["options"] == {"n_segments": 2}  # the others are the classifier's defaults
    assert "mixup" not in state and "pool_layers" not in state
    old = {"d_model": 16, "mixup": 0.4}
    with pytest.raises(ValueError, match=r"fitted with mixup=0\.4.*no longer has"):
        _upgrade_state(old, EADCTClassifier)
    with pytest.raises(ValueError, match="max_steps both flat and as a field of options"):
        _upgrade_state({"options": {"n_segments": 2}, "max_steps": -3}, EADCTClassifier)
    before_wide_scales = {"d_model": 16}  # a state from before wide_scales existed: it did what False does
    _upgrade_state(before_wide_scales, EADCTClassifier)
    assert before_wide_scales["options"]["wide_scales"] is False


def test_the_sktime_and_aeon_estimators_reach_the_fields_too():
    from eadct.sktime import EADCTClassifier as SktimeClassifier

    est = SktimeClassifier(options={"n_segments": 2})
    assert est.get_params()["options__n_segments"] == 2
    est.set_params(options__max_steps=5)
    assert est.options == {"n_segments": 2, "max_steps": 5}
    pytest.importorskip("aeon")
    from eadct.aeon import EADCTRegressor as AeonRegressor

    aeon = AeonRegressor()
    aeon.set_params(options__loss="huber")
    assert aeon.get_params()["options__loss"] == "huber"


def test_defaults_warn_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for cls in ESTIMATORS:
            clone(cls()).get_params()


def test_an_old_parameter_set_as_an_attribute_or_through_set_params_takes_the_deprecation_path(tmp_path):
    import eadct

    est = EADCTClassifier()
    with pytest.warns(FutureWarning, match="now a field of options"):
        est.n_segments = 2  # fit must not ignore it: it lands in options
    assert est.options == {"n_segments": 2} and clone(est).get_params()["options__n_segments"] == 2
    with pytest.warns(FutureWarning, match="drop_path was removed"):
        est.set_params(drop_path=0)
    with pytest.raises(TypeError, match="drop_path was removed"):
        est.set_params(drop_path=0.1)
    with pytest.raises(TypeError, match="drop_path was removed"):
        est.drop_path = 0.1
    with pytest.raises(TypeError, match="unexpected keyword argument 'options__n_segments'"):
        EADCTClassifier(options__n_segments=2)
    with pytest.raises(TypeError, match="given twice"):
        EADCTClassifier(n_segments=2, options={"n_segments": 3})
    with pytest.raises(ValueError, match="now called recompute_attention"):
        EADCTClassifier(**TINY, options={"checkpoint_attention": True}).fit(np.zeros((8, 1, 6)), np.repeat([0, 1], 4))
    est.foo = 1  # an attribute eadct.load would refuse: save says so instead of writing the file
    with pytest.raises(ValueError, match="neither its parameters nor its fitted state.*foo"):
        eadct.save(est, tmp_path / "model.safetensors")


def test_the_no_op_values_of_removed_parameters_are_of_their_kind_only():
    from eadct.estimators._options import is_noop

    assert is_noop(np.float64(0.0), 0.0) and is_noop(0, 0.0) and is_noop(np.bool_(False), False)
    assert not is_noop(np.array([0.0]), 0.0) and not is_noop(0, False) and not is_noop(False, 0.0)
    assert not is_noop(0, None) and is_noop(None, None) and not is_noop(np.int64(0), False)


def test_a_pooling_that_is_not_a_name_and_a_key_given_twice_in_a_file_are_value_errors():
    from eadct.estimators._loading import _decode_setting

    with pytest.raises(ValueError, match="pooling must be one of"):
        EADCTClassifier(**TINY, pooling=[1]).fit(np.zeros((8, 1, 6)), np.repeat([0, 1], 4))
    twice = {"__items__": [["n_segments", 4], ["n_segments", 10**9]]}
    with pytest.raises(ValueError, match="gives a key twice"):
        _decode_setting("options", twice, 0, ValueError)


def test_a_setting_the_architecture_does_not_read_is_not_validated_for_it():
    X, y = np.random.default_rng(0).normal(size=(12, 2, 10)), np.arange(12) % 2
    lstm = dict(architecture="lstm", d_model=8, max_epochs=1, pretrain_epochs=0, device="cpu", random_state=0)
    odd = EADCTClassifier(**lstm, n_heads=3, attention_ratio=0.3, options={"attention_kernel_size": 4}).fit(X, y)
    plain = EADCTClassifier(**lstm).fit(X, y)
    np.testing.assert_array_equal(odd.predict_proba(X), plain.predict_proba(X))  # ignored, not only unchecked
    with pytest.raises(ValueError, match="attention_kernel_size must be a positive odd int"):
        EADCTClassifier(d_model=8, n_heads=2, options={"attention_kernel_size": 4}).fit(X, y)
