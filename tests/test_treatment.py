"""``EADCTRegressor(options={"input_differences": "auto"})``: the treatment chosen on TRAIN by the kernel ridge
proxy alone, then refitted."""

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
KEYS = {"chosen", "proxy_margin", "proxy_without", "proxy_with", "skipped", "choice_s", "decided_by"}


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


def fit_spy(monkeypatch):
    """Record each ``EADCTRegressor.fit``: the series, the targets and ``input_differences`` it was called with."""
    seen, fit = [], EADCTRegressor.fit

    def spy(self, X_, y_, X_unlabeled=None):
        seen.append((np.asarray(X_).copy(), np.asarray(y_).copy(), self.get_params()["options__input_differences"]))
        return fit(self, X_, y_, X_unlabeled=X_unlabeled)

    monkeypatch.setattr(EADCTRegressor, "fit", spy)
    return seen


@pytest.fixture(scope="module")
def fits(data):
    """The plain fits with and without the differences, and "auto" forced each way by the proxy's margin (these
    data do not pass it at 0.8)."""
    X, y = data
    out = {value: EADCTRegressor(**FAST, options={"input_differences": value}).fit(X, y) for value in (False, True)}
    with pytest.MonkeyPatch.context() as mp:
        for margin, name in ((0.0, "auto-without"), (1e9, "auto-with")):
            mp.setattr(_treatment, "PROXY_MARGIN", margin)
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


def test_auto_records_the_proxys_scores(fits):
    choice = fits["auto-with"].treatment_choice_
    assert set(choice) == KEYS and choice["decided_by"] == "proxy" and choice["skipped"] is None
    assert choice["proxy_with"] > 0 and choice["proxy_without"] > 0 and choice["proxy_margin"] == 1e9
    assert choice["choice_s"] >= 0
    assert _treatment.PROXY_MARGIN == 0.8


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


@pytest.mark.parametrize("target, chosen", [("slope", True), ("level", False)])
def test_auto_takes_the_differences_where_slopes_carry_the_target_not_the_level(monkeypatch, target, chosen):
    """Where the slopes carry the target the proxy takes the differences, where the level does it does not: one fit
    of the chosen treatment on all of TRAIN (no other fit), exactly ``input_differences=True`` or ``False``."""
    X, slope2, level2 = slope_data()
    X, y = X[:24], (slope2 if target == "slope" else level2)[:24]
    scored = []
    proxy = _treatment.proxy_scores
    monkeypatch.setattr(_treatment, "proxy_scores", lambda s, y, r: scored.append((np.array(s), y)) or proxy(s, y, r))
    seen = fit_spy(monkeypatch)
    est = EADCTRegressor(**FAST, options={"input_differences": "auto"}).fit(X, y)
    choice = est.treatment_choice_
    assert est.input_differences_ is chosen and choice["decided_by"] == "proxy" and choice["skipped"] is None
    assert (choice["proxy_with"] < 0.8 * choice["proxy_without"]) is chosen
    assert [given for _, _, given in seen] == ["auto", chosen]  # the user's call, then the refit: nothing else
    for seen_X, seen_y, _ in seen:
        np.testing.assert_array_equal(seen_X, X)
        np.testing.assert_array_equal(seen_y, y)
    ((seen_X, seen_y),) = scored  # the proxy saw the series passed to fit, nothing else
    np.testing.assert_array_equal(seen_X, X)
    np.testing.assert_array_equal(seen_y, y)
    plain = EADCTRegressor(**FAST, options={"input_differences": chosen}).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), plain.predict(X))


@pytest.mark.parametrize("ratio, chosen", [(0.79, True), (0.8, False), (0.969, False), (1.2, False), (None, False)])
def test_the_proxy_alone_decides_at_its_margin(fits, data, monkeypatch, ratio, chosen):
    """Below PROXY_MARGIN times the score without them the differences are taken, at or above it not, with no other
    judge; where the proxy cannot score (None: a series of under 2 valid steps) the values alone."""
    X, y = data
    scores = None if ratio is None else (0.5, 0.5 * ratio)
    monkeypatch.setattr(_treatment, "proxy_scores", lambda series, y, random_state: scores)
    seen = fit_spy(monkeypatch)
    est = EADCTRegressor(**FAST, options={"input_differences": "auto"}).fit(X, y)
    choice = est.treatment_choice_
    assert len(seen) == 2 and est.input_differences_ is chosen and choice["chosen"] is chosen
    assert choice["decided_by"] == (None if ratio is None else "proxy") and choice["skipped"] is None
    assert (choice["proxy_without"], choice["proxy_with"]) == ((None, None) if ratio is None else scores)
    np.testing.assert_array_equal(est.predict(X), fits[chosen].predict(X))


def test_auto_on_few_series_fits_the_values_without_choosing(data, monkeypatch):
    X, y = data
    scored = []
    monkeypatch.setattr(_treatment, "proxy_scores", lambda *args: scored.append(args))
    est = EADCTRegressor(**FAST, options={"input_differences": "auto"}).fit(X[:11], y[:11])
    choice = est.treatment_choice_
    assert scored == [] and est.input_differences_ is False and set(choice) == KEYS
    assert choice["skipped"] == "few series" and choice["decided_by"] is None and choice["proxy_without"] is None
    plain = EADCTRegressor(**FAST, options={"input_differences": False}).fit(X[:11], y[:11])
    np.testing.assert_array_equal(est.predict(X), plain.predict(X))


def test_auto_is_deterministic_and_survives_clone_pickle_and_save(fits, data, tmp_path):
    X, y = data
    auto = fits["auto-with"]
    again = clone(auto)
    assert again.get_params()["options__input_differences"] == "auto" and not hasattr(again, "treatment_choice_")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_treatment, "PROXY_MARGIN", 1e9)
        again.fit(X, y)
    untimed = lambda choice: {k: v for k, v in choice.items() if k != "choice_s"}  # noqa: E731
    assert untimed(again.treatment_choice_) == untimed(auto.treatment_choice_)
    np.testing.assert_array_equal(again.predict(X), auto.predict(X))
    restored = pickle.loads(pickle.dumps(auto))
    assert restored.treatment_choice_ == auto.treatment_choice_ and restored.input_differences_ is True
    np.testing.assert_allclose(restored.predict(X), auto.predict(X), atol=1e-6)
    loaded = eadct.load(eadct.save(auto, tmp_path / "auto.safetensors"))
    assert loaded.get_params()["options__input_differences"] == "auto" and loaded.input_differences_ is True
    assert loaded.treatment_choice_ == auto.treatment_choice_
    np.testing.assert_allclose(loaded.predict(X), auto.predict(X), atol=1e-6)


def test_a_saved_choice_with_the_network_judges_keys_still_loads(fits, data, tmp_path):
    """Files saved while the network also chose hold more keys (margin, rmse_*, n_fit, n_holdout, "network"): the
    loader checks only that ``treatment_choice_`` is a dict of plain values."""
    X, _ = data
    old = pickle.loads(pickle.dumps(fits["auto-with"]))
    old.treatment_choice_ = dict(
        chosen=True,
        margin=0.5,
        rmse_without=0.9,
        rmse_with=0.3,
        n_fit=16,
        n_holdout=8,
        choice_s=1.5,
        skipped=None,
        proxy_margin=0.8,
        proxy_without=0.7,
        proxy_with=0.65,
        decided_by="network",
    )
    loaded = eadct.load(eadct.save(old, tmp_path / "old.safetensors"))
    assert loaded.treatment_choice_ == old.treatment_choice_ and loaded.input_differences_ is True
    np.testing.assert_allclose(loaded.predict(X), old.predict(X), atol=1e-6)


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
