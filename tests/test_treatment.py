"""``EADCTRegressor(options={"input_differences": "auto"})``: the treatment chosen on TRAIN (the kernel ridge proxy,
then an inner split), then refitted."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from conftest import TINY, TINY_REPR, make_panel
from sklearn.base import clone

import eadct
from eadct import EADCTRegressor
from eadct.estimators import _proxy, _treatment
from eadct.estimators._proxy import proxy_scores

FAST = dict(TINY, max_epochs=2)


@pytest.fixture(scope="module")
def data():
    X, _ = make_panel(n=24)
    return X, X[:, 0].mean(axis=1) + 0.5 * X[:, 1, -1]


def slope_data(n=30, length=32, seed=0):
    """Series whose target is the square of a slope hidden under a level that varies far more (as on spectra), and
    the square of the level."""
    rng, t = np.random.default_rng(seed), np.linspace(0, 1, length)
    level, slope = rng.normal(0, 5, n), rng.normal(0, 1, n)
    X = (level[:, None] + slope[:, None] * t + 0.01 * rng.normal(size=(n, length)))[:, None, :]
    return X, slope**2, level**2


@pytest.fixture(scope="module")
def fits(data):
    """The plain fits with and without the differences, and "auto" forced each way by the network's margin (the
    proxy's vote is checked on its own below: these data do not pass it)."""
    X, y = data
    out = {value: EADCTRegressor(**FAST, options={"input_differences": value}).fit(X, y) for value in (False, True)}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_treatment, "PROXY_MARGIN", 0.0)
        mp.setattr(_treatment, "NETWORK_BELOW", np.inf)
        for margin, name in ((0.0, "auto-without"), (1e9, "auto-with")):
            mp.setattr(_treatment, "MARGIN", margin)
            out[name] = EADCTRegressor(**FAST, options={"input_differences": "auto"}).fit(X, y)
    return out


@pytest.mark.parametrize("name, chosen", [("auto-without", False), ("auto-with", True)])
def test_auto_refits_the_chosen_treatment_exactly(fits, data, name, chosen):
    X, _ = data
    auto = fits[name]
    assert auto.get_params()["options__input_differences"] == "auto"  # fit does not change the parameter
    assert auto.input_differences_ is chosen and auto.treatment_choice_["chosen"] is chosen
    assert fits[chosen].input_differences_ is chosen and not hasattr(fits[chosen], "treatment_choice_")
    # the refit is the plain fit of the chosen treatment with the same random_state
    np.testing.assert_array_equal(auto.predict(X), fits[chosen].predict(X))


def test_auto_records_both_held_out_errors(fits):
    choice = fits["auto-without"].treatment_choice_
    assert choice["n_fit"] + choice["n_holdout"] == 24 and choice["n_holdout"] == 8
    assert choice["rmse_without"] > 0 and choice["rmse_with"] > 0 and choice["margin"] == 0.0
    assert choice["decided_by"] == "network" and choice["proxy_with"] > 0 and choice["proxy_without"] > 0


def test_proxy_loo_is_kernel_ridge_refitted_without_each_series():
    """The closed-form leave-one-out RMSE equals scikit-learn's kernel ridge refitted n times."""
    from sklearn.kernel_ridge import KernelRidge

    rng = np.random.default_rng(0)
    F, y = rng.normal(size=(20, 4)), rng.normal(size=20)
    Fs, ys = (F - F.mean(0)) / F.std(0), (y - y.mean()) / y.std()
    brute = []
    for alpha in _proxy.ALPHAS:
        errors = []
        for i in range(20):
            ridge = KernelRidge(alpha=alpha, kernel="rbf", gamma=1 / 4).fit(np.delete(Fs, i, 0), np.delete(ys, i))
            errors.append(ridge.predict(Fs[i : i + 1])[0] - ys[i])
        brute.append(np.sqrt(np.mean(np.square(errors))))
    assert np.isclose(_proxy.loo_rmse(F, y), min(brute), rtol=1e-8)


def test_proxy_sees_a_slope_under_a_level_and_not_the_level():
    X, slope2, level2 = slope_data(n=100)
    without, with_ = proxy_scores(X, slope2)
    assert with_ < 0.5 * without
    without, with_ = proxy_scores(X, level2)
    assert with_ > _treatment.PROXY_MARGIN * without
    assert proxy_scores(X[:11], slope2[:11]) is None  # too few series
    assert proxy_scores(X[:, :, :1], slope2) is None  # one step: no parts


def test_proxy_scores_several_targets_and_a_constant_one():
    """Several targets: each standardised, the RMSE over all of them; a constant target: nothing to learn, 0 both
    ways, which is no reason to take the differences."""
    X, slope2, level2 = slope_data(n=100)
    without, with_ = proxy_scores(X, np.c_[slope2, slope2])
    assert (without, with_) == pytest.approx(proxy_scores(X, slope2), rel=1e-9)
    level = proxy_scores(X, level2)
    both = proxy_scores(X, np.c_[slope2, level2])
    for k, slope_k in enumerate((without, with_)):  # one strength for both: no better than each target's own
        assert np.sqrt(slope_k**2 / 2 + level[k] ** 2 / 2) - 1e-12 <= both[k] < 1
    assert proxy_scores(X, np.ones(100)) == (0.0, 0.0)


def test_proxy_reads_unequal_lengths_and_missing_steps():
    """A list of series of their own lengths, and trailing NaN padding, score as the valid steps alone."""
    X, slope2, _ = slope_data(n=40)
    ragged = [x[:, : 20 + i % 12] for i, x in enumerate(X)]
    padded = np.full(X.shape, np.nan)
    for i, x in enumerate(ragged):
        padded[i, :, : x.shape[1]] = x
    scores = proxy_scores(ragged, slope2)
    assert np.allclose(scores, proxy_scores(padded, slope2))
    assert scores[1] < _treatment.PROXY_MARGIN * scores[0]


def test_auto_takes_the_proxys_differences_on_series_of_unequal_length():
    X, slope2, _ = slope_data(n=24)
    ragged = [x[:, : 20 + i % 12] for i, x in enumerate(X)]
    est = EADCTRegressor(**FAST, options={"input_differences": "auto"}).fit(ragged, slope2)
    assert est.treatment_choice_["decided_by"] == "proxy" and est.input_differences_ is True
    plain = EADCTRegressor(**FAST, options={"input_differences": True}).fit(ragged, slope2)
    np.testing.assert_array_equal(est.predict(ragged), plain.predict(ragged))


def test_proxy_scores_a_seeded_subset_of_a_large_set(monkeypatch):
    X, slope2, _ = slope_data(n=60)
    monkeypatch.setattr(_proxy, "MAX_SERIES", 40)
    first = proxy_scores(X, slope2, random_state=0)
    assert first == proxy_scores(X, slope2, random_state=0)
    assert first != proxy_scores(X, slope2, random_state=1)
    monkeypatch.setattr(_proxy, "MAX_SERIES", 60)
    assert first != proxy_scores(X, slope2, random_state=0)


@pytest.mark.parametrize("max_steps", [None, 1])
def test_auto_takes_the_proxys_differences_without_network_fits(monkeypatch, max_steps):
    """Where the proxy sees the slopes, "auto" fits the differences on all of TRAIN at once, exactly
    ``input_differences=True``, also where the step cap keeps the network from choosing."""
    X, slope2, _ = slope_data()
    calls, scored = [], []
    monkeypatch.setattr(_treatment, "clone", lambda est: calls.append(est) or clone(est))
    proxy = _treatment.proxy_scores
    monkeypatch.setattr(_treatment, "proxy_scores", lambda s, y, r: scored.append((np.array(s), y)) or proxy(s, y, r))
    params, steps = FAST, {"max_steps": max_steps}
    est = EADCTRegressor(**params, options={**steps, "input_differences": "auto"}).fit(X[:24], slope2[:24])
    choice = est.treatment_choice_
    assert calls == [] and est.input_differences_ is True and choice["decided_by"] == "proxy"
    assert choice["proxy_with"] < 0.8 * choice["proxy_without"] and choice["skipped"] is None
    assert choice["rmse_with"] is None and choice["n_holdout"] == 0
    ((seen_X, seen_y),) = scored  # the proxy saw the series passed to fit, nothing else
    np.testing.assert_array_equal(seen_X, X[:24])
    np.testing.assert_array_equal(seen_y, slope2[:24])
    plain = EADCTRegressor(**params, options={**steps, "input_differences": True}).fit(X[:24], slope2[:24])
    np.testing.assert_array_equal(est.predict(X), plain.predict(X))


def test_the_choice_sees_only_the_series_passed_to_fit(data, monkeypatch):
    X, y = data
    seen = []
    fit = EADCTRegressor.fit

    def spy(self, X_, y_, X_unlabeled=None):
        seen.append((np.asarray(X_).copy(), np.asarray(y_).copy(), self.get_params()["options__input_differences"]))
        return fit(self, X_, y_, X_unlabeled=X_unlabeled)

    monkeypatch.setattr(EADCTRegressor, "fit", spy)
    monkeypatch.setattr(_treatment, "NETWORK_BELOW", np.inf)  # the network chooses whatever the proxy sees
    est = EADCTRegressor(**FAST, options={"input_differences": "auto"})
    est.fit(X[:18], y[:18])  # the last 6 series stand for data outside TRAIN
    (_, _, auto), (X_a, y_a, first), (X_b, _, second), (X_r, y_r, refit) = seen
    assert (auto, first, second, refit) == ("auto", False, True, est.input_differences_)
    np.testing.assert_array_equal(X_a, X_b)  # both treatments on the same inner part
    rows = {row.tobytes() for row in X[:18]}
    assert all(row.tobytes() in rows for row in X_a) and len(X_a) == 12  # two thirds of TRAIN, nothing else
    np.testing.assert_array_equal(X_r, X[:18])
    np.testing.assert_array_equal(y_r, y[:18])


def test_auto_is_deterministic_and_survives_clone_pickle_and_save(fits, data, tmp_path):
    X, y = data
    auto = fits["auto-with"]
    again = clone(auto).set_params(options__input_differences="auto")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_treatment, "MARGIN", 1e9)
        mp.setattr(_treatment, "PROXY_MARGIN", 0.0)
        mp.setattr(_treatment, "NETWORK_BELOW", np.inf)
        again.fit(X, y)
    untimed = lambda choice: {k: v for k, v in choice.items() if k != "choice_s"}  # noqa: E731
    assert untimed(again.treatment_choice_) == untimed(auto.treatment_choice_)
    np.testing.assert_array_equal(again.predict(X), auto.predict(X))
    restored = pickle.loads(pickle.dumps(auto))
    np.testing.assert_allclose(restored.predict(X), auto.predict(X), atol=1e-6)
    loaded = eadct.load(eadct.save(auto, tmp_path / "auto.safetensors"))
    assert loaded.get_params()["options__input_differences"] == "auto" and loaded.input_differences_ is True
    np.testing.assert_allclose(loaded.predict(X), auto.predict(X), atol=1e-6)


def test_auto_on_few_series_fits_without_choosing(data, monkeypatch):
    X, y = data
    calls = []
    monkeypatch.setattr(_treatment, "clone", lambda est: calls.append(est) or clone(est))
    est = EADCTRegressor(**FAST, options={"input_differences": "auto"}).fit(X[:11], y[:11])
    assert calls == [] and est.input_differences_ is False
    assert est.treatment_choice_["rmse_without"] is None and est.treatment_choice_["n_holdout"] == 0
    assert est.treatment_choice_["skipped"] == "few series" and est.treatment_choice_["decided_by"] is None
    assert est.treatment_choice_["proxy_without"] is None


@pytest.mark.parametrize("max_steps, skipped", [(None, None), (3 * 2, None), (3 * 2 - 1, "step cap")])
def test_auto_does_not_choose_where_the_step_cap_shortens_fine_tuning(data, monkeypatch, max_steps, skipped):
    """24 series in batches of 16: 2 steps an epoch, so 2 epochs need 4 steps; 3 epochs (max_epochs=3) 6."""
    X, y = data
    calls = []
    monkeypatch.setattr(_treatment, "clone", lambda est: calls.append(est) or clone(est))
    monkeypatch.setattr(_treatment, "NETWORK_BELOW", np.inf)
    params, steps = dict(FAST, max_epochs=3), {"max_steps": max_steps}
    est = EADCTRegressor(**params, options={**steps, "input_differences": "auto"}).fit(X, y)
    assert est.treatment_choice_["skipped"] == skipped and len(calls) == (0 if skipped else 2)
    if skipped:  # the proxy did not take the differences: exactly the fit without them
        assert est.input_differences_ is False and est.treatment_choice_["rmse_with"] is None
        assert est.treatment_choice_["decided_by"] is None and est.treatment_choice_["proxy_without"] > 0
        plain = EADCTRegressor(**params, options={**steps, "input_differences": False}).fit(X, y)
        np.testing.assert_array_equal(est.predict(X), plain.predict(X))


@pytest.mark.parametrize(
    "ratio, judge, network_fits, chosen",
    [
        (0.79, "proxy", 0, True),
        (0.8, "network", 2, None),
        (0.969, "network", 2, None),
        (0.97, "proxy", 0, False),
        (1.2, "proxy", 0, False),
    ],
)
def test_the_network_chooses_only_where_the_proxy_sees_some_gain(data, monkeypatch, ratio, judge, network_fits, chosen):
    """Below PROXY_MARGIN the proxy takes the differences; in [PROXY_MARGIN, NETWORK_BELOW) the network chooses; at
    NETWORK_BELOW or above the proxy sees no gain and the defaults' treatment is fitted at once, exactly
    ``input_differences=False``."""
    X, y = data
    calls = []
    monkeypatch.setattr(_treatment, "clone", lambda est: calls.append(est) or clone(est))
    monkeypatch.setattr(_treatment, "proxy_scores", lambda series, y, random_state: (0.5, 0.5 * ratio))
    est = EADCTRegressor(**FAST, options={"input_differences": "auto"}).fit(X, y)
    choice = est.treatment_choice_
    assert len(calls) == network_fits and choice["decided_by"] == judge
    assert choice["proxy_without"] == 0.5 and choice["proxy_with"] == 0.5 * ratio
    assert choice["skipped"] == ("no proxy gain" if judge == "proxy" and not chosen else None)
    if chosen is not None:
        assert est.input_differences_ is chosen and choice["rmse_without"] is None and choice["n_holdout"] == 0
        plain = EADCTRegressor(**FAST, options={"input_differences": chosen}).fit(X, y)
        np.testing.assert_array_equal(est.predict(X), plain.predict(X))
    assert _treatment.NETWORK_BELOW == 0.97 > _treatment.PROXY_MARGIN


def test_auto_is_the_regressors_default_but_not_the_papers():
    assert EADCTRegressor().get_params()["options__input_differences"] == "auto"
    assert eadct.paper_configuration("regression")["options"]["input_differences"] is False
    assert 'default="auto"' in EADCTRegressor.__doc__.split("``input_differences`` :")[1].split("\n")[0]


def test_auto_reports_bad_input_as_the_plain_fit_does(data):
    X, y = data
    with pytest.raises(ValueError) as plain:
        EADCTRegressor(**FAST).fit(X, y[:5])
    with pytest.raises(ValueError) as auto:
        EADCTRegressor(**FAST, options={"input_differences": "auto"}).fit(X, y[:5])
    assert str(auto.value) == str(plain.value)


def test_auto_is_the_supervised_estimators_only(data):
    X, _ = data
    with pytest.raises(ValueError, match=r"input_differences must be True or False \(\"auto\": EADCTClassifier and"):
        eadct.EADCTRepresentation(**TINY_REPR, options={"input_differences": "auto"}).fit(X)


def test_the_networks_choice_on_unequal_lengths_does_not_warn_the_user(monkeypatch, recwarn):
    """The inner split's held-out series may be longer than its fitted part's: predicting them is the choice's
    business, so the user sees no warning about positions past the training length."""
    from conftest import make_unequal

    X, _, target = make_unequal(lengths=(3, 15))
    monkeypatch.setattr(_treatment, "PROXY_MARGIN", 0.0)  # the network's choice, with its inner fits
    monkeypatch.setattr(_treatment, "NETWORK_BELOW", np.inf)
    est = EADCTRegressor(**FAST, options={"input_differences": "auto"}).fit(X, target)
    assert est.treatment_choice_["decided_by"] == "network"
    assert not [w for w in recwarn if "longer than the longest seen in fit" in str(w.message)]
