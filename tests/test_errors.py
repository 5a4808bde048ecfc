"""Bad input gets a clear ValueError naming the problem and the fix."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import TINY, make_panel

from eadct import EADCTClassifier, EADCTRegressor


def test_empty_X():
    with pytest.raises(ValueError, match="0 sample"):
        EADCTClassifier(**TINY).fit(np.empty((0, 2, 10)), [])


def test_empty_series_in_list():
    with pytest.raises(ValueError, match="empty"):
        EADCTClassifier(**TINY).fit([np.ones((2, 5)), np.ones((2, 0))], [0, 1])


def test_X_y_length_mismatch(panel):
    X, y = panel
    with pytest.raises(ValueError, match="X has 30 samples but y has 29"):
        EADCTClassifier(**TINY).fit(X, y[:-1])


def test_channels_differ_at_predict(fitted_classifier):
    X, _ = make_panel(channels=2)
    with pytest.raises(ValueError, match="X has 2 channels, but EADCTClassifier was fitted with 3"):
        fitted_classifier.predict(X)


def test_channels_differ_within_X():
    with pytest.raises(ValueError, match="different numbers of channels"):
        EADCTClassifier(**TINY).fit([np.ones((2, 5)), np.ones((3, 5))], [0, 1])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_and_inf_refused(panel, bad):
    X, y = panel
    X = X.copy()
    X[3, 1, 4] = bad
    match = "missing_values='interpolate'" if np.isnan(bad) else "infinity"
    with pytest.raises(ValueError, match=match):
        EADCTClassifier(**TINY).fit(X, y)


def test_nan_padding_is_named_with_the_list_as_the_fix(panel):
    """Unequal lengths padded with NaN (tslearn's convention) are told to come as a list, not interpolated."""
    X, y = panel
    X = X.copy()
    X[:4, :, 15:] = np.nan
    with pytest.raises(ValueError, match=r"4 series end in NaN in every channel.*'trim'.*list of \(channels, length\)"):
        EADCTClassifier(**TINY).fit(X, y)
    X[:4, 0, 15:] = 1.0  # one channel observed to the end: missing values, not padding
    with pytest.raises(ValueError, match="missing_values='interpolate' on EADCTClassifier"):
        EADCTClassifier(**TINY).fit(X, y)


def _nan_padded(X, lengths):
    """X with the steps after each series' length set to NaN in every channel, as tslearn pads unequal lengths."""
    X = X.copy()
    for i, length in enumerate(lengths):
        X[i, :, length:] = np.nan
    return X


@pytest.mark.parametrize("estimator", [EADCTClassifier, EADCTRegressor])
def test_trim_reads_nan_padding_as_the_list_of_cut_series(panel, estimator):
    """missing_values='trim' on NaN-padded X fits and predicts exactly as the list of series cut to their lengths."""
    X, y = panel
    lengths = [24 - (i % 5) * 3 for i in range(len(X))]  # 12 to 24 steps
    target = y if estimator is EADCTClassifier else X[:, 0].mean(axis=1)
    cut = [X[i, :, :length] for i, length in enumerate(lengths)]
    padded = _nan_padded(X, lengths)
    on_list = estimator(**TINY).fit(cut, target)
    trimmed = estimator(**TINY, missing_values="trim").fit(padded, target)
    np.testing.assert_array_equal(trimmed.predict(padded), on_list.predict(cut))
    # at predict: NaN padding wider than in fit, and a 3D array without any padding
    wider = np.concatenate([padded, np.full((len(X), X.shape[1], 6), np.nan)], axis=2)
    np.testing.assert_array_equal(trimmed.predict(wider), on_list.predict(cut))
    np.testing.assert_array_equal(trimmed.predict(X), on_list.predict(list(X)))


def test_trim_refuses_nan_before_a_series_ends(panel):
    """NaN in some channels only at a series' last step, or inside it, is a missing value, not padding."""
    X, y = panel
    X = _nan_padded(X, [20] * len(X))
    X[0, 1, 19] = np.nan
    with pytest.raises(ValueError, match=r"NaN \(1 missing value\(s\)\) inside series, before their last values"):
        EADCTClassifier(**TINY, missing_values="trim").fit(X, y)


def test_trim_refuses_a_series_without_values(panel):
    X, y = panel
    X = _nan_padded(X, [24] * len(X))
    X[2] = np.nan
    with pytest.raises(ValueError, match=r"X\[2\] is NaN at every step and channel.*Remove it"):
        EADCTClassifier(**TINY, missing_values="trim").fit(X, y)


def test_nan_at_predict_refused(fitted_classifier, panel):
    X, _ = panel
    X = X.copy()
    X[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fitted_classifier.predict(X)


def test_heads_must_divide_attention_width(panel):
    X, y = panel
    with pytest.raises(ValueError, match=r"attention_ratio \* d_model = 6 is not divisible by n_heads = 4"):
        EADCTClassifier(**{**TINY, "d_model": 24, "n_heads": 4, "attention_ratio": 0.25}).fit(X, y)


def test_attention_width_must_be_whole(panel):
    X, y = panel
    with pytest.raises(ValueError, match="not a whole number"):
        EADCTClassifier(**{**TINY, "attention_ratio": 0.3}).fit(X, y)


def test_one_class_only(panel):
    X, _ = panel
    with pytest.raises(ValueError, match="at least 2 classes"):
        EADCTClassifier(**TINY).fit(X, np.zeros(len(X)))


def test_all_bad_params_named_at_once(panel):
    X, y = panel
    with pytest.raises(ValueError) as err:
        EADCTClassifier(**{**TINY, "alpha": 2.0, "batch_size": 0, "pooling": "sum"}).fit(X, y)
    for name in ("alpha", "batch_size", "pooling"):
        assert name in str(err.value)


def test_recompute_attention_values(panel):
    X, y = panel
    with pytest.raises(ValueError, match="recompute_attention must be True, False or 'auto'"):
        EADCTClassifier(**TINY, recompute_attention="always").fit(X, y)


def test_not_an_optimizer(panel):
    X, y = panel
    with pytest.raises(ValueError, match="torch.optim.Optimizer subclass"):
        EADCTClassifier(**TINY, optimizer="adam").fit(X, y)


def test_bad_device(panel):
    X, y = panel
    with pytest.raises(ValueError, match="device"):
        EADCTClassifier(**{**TINY, "device": "tpu-ish"}).fit(X, y)


def test_1d_X():
    with pytest.raises(ValueError, match="Reshape your data"):
        EADCTClassifier(**TINY).fit(np.ones(10), np.ones(10))


def test_regression_target_nan(panel):
    X, _ = panel
    y = X[:, 0, 0].copy()
    y[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        EADCTRegressor(**TINY).fit(X, y)


def test_continuous_target_for_classifier(panel):
    X, _ = panel
    with pytest.raises(ValueError, match="Unknown label type"):
        EADCTClassifier(**TINY).fit(X, np.linspace(0, 1, len(X)))


# --- what the fuzz tests (test_fuzz.py) found; each was another exception or a silent NaN before ---------------
def test_values_far_outside_the_training_data_are_named_not_predicted_as_nan(fitted_classifier, panel):
    X = panel[0][:2].copy()
    X[1, 0, :] = 3e37  # finite in float32, but overflows the network after standardising
    with pytest.raises(ValueError, match=r"outputs for 1 series \(X\[1\] first\) are not finite.*standard deviations"):
        fitted_classifier.predict(X)


def test_values_beyond_float32_are_refused(panel):
    X, y = panel
    X = X.copy()
    X[0, 0, 0] = 1.5e154  # was a FloatingPointError (NaN loss in epoch 1)
    with pytest.raises(ValueError, match="beyond the float32 range"):
        EADCTClassifier(**TINY).fit(X, y)


def test_multiindex_frame_is_read_as_instance_and_time(fitted_classifier, panel):
    import pandas as pd

    X = panel[0][:4]
    rows = [(i, t) for i in range(4) for t in range(X.shape[2])]
    frame = pd.DataFrame(
        X.transpose(0, 2, 1).reshape(-1, X.shape[1]), index=pd.MultiIndex.from_tuples(rows, names=["instance", "time"])
    )  # was read as 4 * 24 series of one step
    np.testing.assert_allclose(fitted_classifier.predict_proba(frame), fitted_classifier.predict_proba(X), atol=1e-6)
    with pytest.raises(ValueError, match="3-level MultiIndex"):
        fitted_classifier.predict(frame.set_index(frame.index.get_level_values(0), append=True))


@pytest.mark.parametrize(
    "labels,error,message",
    [
        (["a", 0, None], ValueError, r"10 missing label\(s\) \(None or NaN\), the first at y\[2\]"),
        (["a", 0, 1], TypeError, r"mixes label types \['int', 'str'\]"),  # was numpy's "'<' not supported"
    ],
)
def test_missing_and_mixed_labels_are_named(panel, labels, error, message):
    X, _ = panel
    y = np.array((labels * 10)[: len(X)], dtype=object)
    with pytest.raises(error, match=message):
        EADCTClassifier(**TINY).fit(X, y)


def test_regression_targets_that_overflow_are_refused(panel):
    X, _ = panel
    with pytest.raises(ValueError, match="too large to standardise"):  # was a NaN loss, or NaN predictions
        EADCTRegressor(**TINY).fit(X, np.full(len(X), 1.5e307))


@pytest.mark.parametrize(
    "cell, shown", [(np.nan, "float nan"), (None, "NoneType None"), (2.5, "float 2.5"), (np.zeros((2, 3)), "2D")]
)
def test_a_nested_frame_cell_that_is_not_a_series_is_named(panel, cell, shown):
    """sktime's nested_univ frame with a NaN (or other non-series) cell: a ValueError naming the cell and the fix, not
    ``len()`` of a float; also where the first row is the odd one."""
    import pandas as pd

    X, y = panel
    for row in (3, 0):
        columns = {f"dim_{c}": [pd.Series(x[c]) for x in X[:6]] for c in range(X.shape[1])}
        columns["dim_1"][row] = cell
        expected = rf"cell X.iloc\[{row}, 1\] \(row {row}, column 'dim_1'\) is {shown}, not a series"
        with pytest.raises(ValueError, match=expected + r".*series of NaN of the other channels' length"):
            EADCTClassifier(**TINY).fit(pd.DataFrame(columns), y[:6])


def test_regression_targets_that_are_not_numbers_are_named(panel):
    X, _ = panel
    with pytest.raises(ValueError, match="EADCTRegressor: y must hold one finite number per series.*'a'"):
        EADCTRegressor(**TINY).fit(X, ["a"] * len(X))


@pytest.mark.parametrize(
    "labels, message",
    [
        ([0, 1, np.nan, 1], "1 missing label.*the first at index 2"),
        (["a", None, "b", "a"], "1 missing label.*the first at index 1"),
        ([[1], [2], [3], [4, 5]], "one label per row"),
    ],
)
def test_average_within_class_distance_refuses_missing_labels(labels, message):
    from eadct.metrics import average_within_class_distance

    with pytest.raises(ValueError, match=message):
        average_within_class_distance(np.arange(8.0).reshape(4, 2), labels)


@pytest.mark.parametrize(
    "Z, message",
    [
        (np.array([[1.0, np.nan]] * 4), "NaN or infinite values .4, the first at row 0, column 1"),
        (np.array([[np.inf, 1.0]] * 4), "NaN or infinite"),
        ([["a", "b"]] * 4, "Z must be a 2-D array of numbers"),
        (np.ones((4, 2)) * 1j, "complex"),
    ],
)
def test_average_within_class_distance_refuses_representations_that_are_not_finite_numbers(Z, message):
    from eadct.metrics import average_within_class_distance

    with pytest.raises(ValueError, match=message):
        average_within_class_distance(Z, [0, 1, 0, 1])


def test_a_list_mixing_numbers_and_series_is_named():
    """numpy's own error for a ragged list is caught and said with what X may be (found by tests/test_fuzz.py)."""
    with pytest.raises(ValueError, match="X could not be converted to float: .*inhomogeneous.*Pass a numpy array"):
        EADCTClassifier(**TINY).fit([3.0, np.array([])], [0, 1])
