"""Property-based tests of the input checks (issue 19, point 4): whatever X and y a user passes, fit, predict and
transform either work or raise a ValueError or TypeError raised by eadct's (or scikit-learn's) own checks,
never an exception from inside numpy, pandas or torch.

An error counts as a check's only where a ``raise`` statement of eadct (or of scikit-learn's validation) raised
it: the innermost frame of its traceback is in those files and its line is that ``raise``. An operation that
fails inside them (``len`` of a float, a ``np.asarray`` that cannot convert) is not a check, however long its
message.

Bounded for the default suite: a one-epoch d_model-8 network per fit, and MAX_EXAMPLES examples per test
(``HYPOTHESIS_MAX_EXAMPLES=2000`` hunts longer, with fresh random examples; ``--hypothesis-show-statistics``
shows how many examples fitted and which errors the others raised).
"""

from __future__ import annotations

import os
import traceback
import warnings

import numpy as np
import pandas as pd
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

from eadct import EADCTClassifier, EADCTRegressor, EADCTRepresentation  # noqa: E402

HUNT = "HYPOTHESIS_MAX_EXAMPLES" in os.environ
MAX_EXAMPLES = int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=not HUNT,  # by default the same examples on every run: a red CI is reproducible
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
SMALL = dict(d_model=8, n_heads=2, n_blocks=1, d_ff=8, max_epochs=1, batch_size=8, device="cpu", n_jobs=1)
OURS = ("/eadct/", "/sklearn/utils/", "/sklearn/base.py")  # where a check may raise

FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
DTYPES = st.sampled_from(["int8", "int64", "uint8", "float16", "float32", "float64", "bool", "object", "complex64"])
SIZES = st.integers(0, 4)


@st.composite
def arrays(draw):
    """Arrays of 1 to 4 dimensions, any size from 0, any dtype, NaN and inf anywhere."""
    shape = tuple(draw(st.lists(SIZES, min_size=1, max_size=4)))
    dtype = draw(DTYPES)
    if dtype == "object":
        elements = st.one_of(FLOATS, st.integers(-5, 5), st.text(max_size=2), st.none())
        return np.array(draw(st.lists(elements, min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))),
                        dtype=object).reshape(shape)  # fmt: skip
    if dtype.startswith(("float", "complex")):
        return draw(
            hnp.arrays(
                dtype, shape, elements=st.floats(-1e3, 1e3, width=16) | st.sampled_from([np.nan, np.inf, -np.inf])
            )
        )
    return draw(hnp.arrays(dtype, shape))


@st.composite
def ragged(draw):
    """Lists of series of unequal lengths and channels, with odd members (scalars, None, strings, 3D)."""
    item = st.one_of(
        hnp.arrays("float64", st.tuples(st.integers(1, 3), st.integers(0, 5)), elements=FLOATS),
        hnp.arrays("float64", st.integers(0, 5), elements=st.floats(-10, 10)),
        hnp.arrays("int64", st.tuples(st.integers(1, 2), st.integers(1, 5))),
        st.lists(st.floats(-10, 10), max_size=5),
        st.sampled_from([None, 3.0, "abc", np.zeros((1, 2, 3))]),
    )
    return draw(st.lists(item, min_size=0, max_size=6))


@st.composite
def nested_frames(draw):
    """sktime nested_univ DataFrames (cells are Series, any length) and pd-multiindex ones."""
    n, channels = draw(st.integers(0, 4)), draw(st.integers(1, 2))
    lengths = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    values = st.floats(-10, 10) | st.just(np.nan)
    if draw(st.booleans()):
        cells = {f"c{c}": [pd.Series(draw(st.lists(values, min_size=m, max_size=m)), dtype=float) for m in lengths]
                 for c in range(channels)}  # fmt: skip
        if n and draw(st.booleans()):  # a cell that is not a series: NaN (a missing series), None, a number, ...
            odd = st.sampled_from([np.nan, None, 3.0, "abc", np.zeros((2, 2)), {"a": 1.0}])
            cells[f"c{draw(st.integers(0, channels - 1))}"][draw(st.integers(0, n - 1))] = draw(odd)
        return pd.DataFrame(cells)
    rows = [(i, t) for i, m in enumerate(lengths) for t in range(m)]
    index = pd.MultiIndex.from_tuples(rows, names=["instance", "time"]) if rows else pd.MultiIndex.from_arrays([[], []])
    data = {f"c{c}": draw(st.lists(values, min_size=len(rows), max_size=len(rows))) for c in range(channels)}
    return pd.DataFrame(data, index=index)


# panels that could be valid (1-6 series, 1-3 channels, 1-8 steps, floats of any width, a NaN or inf here and
# there), so that a good share of examples fits and predicts rather than failing the first check
@st.composite
def plausible(draw):
    """Panels that could be valid (1-6 series, 1-3 channels, 1-8 steps, floats of any width) with, in a third of
    them, one NaN, inf or huge value somewhere: a good share of examples fits and predicts."""
    shape = draw(st.tuples(st.integers(1, 6), st.integers(1, 3), st.integers(1, 8)))
    X = draw(
        hnp.arrays(st.sampled_from(["float16", "float32", "float64"]), shape, elements=st.floats(-100, 100, width=16))
    )
    if draw(st.integers(0, 2)) == 0:
        X.flat[draw(st.integers(0, X.size - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf, 6e4]))
    return X


ANY_X = st.one_of(arrays(), ragged(), nested_frames(), plausible())
LABELS = st.one_of(st.integers(0, 2), st.sampled_from(["a", "b"]), st.booleans(), st.none(), FLOATS)
ANY_Y = st.one_of(
    st.lists(LABELS, min_size=12, max_size=12),  # the right length, labels of any (mixed) type
    st.lists(st.integers(0, 2) | st.sampled_from(["a", "b"]), min_size=12, max_size=12),
    st.lists(LABELS, min_size=0, max_size=14),
    hnp.arrays(DTYPES, st.integers(0, 14)),
    hnp.arrays("float64", st.tuples(st.just(12), st.integers(0, 3)), elements=FLOATS),
)


def _n_series(X) -> int:
    if isinstance(X, pd.DataFrame) and isinstance(X.index, pd.MultiIndex):
        return X.index.get_level_values(0).nunique()
    try:
        return len(X)
    except TypeError:
        return 1


def raised_by_a_check(err: BaseException) -> str | None:
    """Why ``err`` is not an error of eadct's (or scikit-learn's) own checks, or None where it is: the innermost frame
    of its traceback must be in those files, on a ``raise`` statement, and the message must say something."""
    frame = traceback.extract_tb(err.__traceback__)[-1]
    where = f"{type(err).__name__} raised at {frame.filename}:{frame.lineno} ({(frame.line or '').strip()}): {err}"
    if not any(part in frame.filename for part in OURS):
        return f"not raised by eadct: {where}"
    if not (frame.line or "").lstrip().startswith("raise"):
        return f"an operation failed, no check raised it: {where}"
    if len(str(err)) <= 20:
        return f"no useful message: {where}"
    return None


def _checked(call, what: str = "call"):
    """Run ``call``; a ValueError or TypeError must come from eadct's or scikit-learn's checks
    (:func:`raised_by_a_check`). Anything else (IndexError, RuntimeError, an error raised inside numpy or torch, a
    TypeError of a failing operation) fails the test."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call()
        event(f"{what}: worked")
        return out, None
    except (ValueError, TypeError) as err:
        event(f"{what}: {type(err).__name__}")
        problem = raised_by_a_check(err)
        assert problem is None, problem
        return None, err


def _check_outputs(out, n: int, what: str):
    out = np.asarray(out)
    assert out.shape[0] == n, f"{what} returned {out.shape[0]} rows for {n} series"
    if out.dtype.kind in "fc":
        assert np.isfinite(out).all(), f"{what} returned non-finite values"


@FUZZ
@given(X=ANY_X, data=st.data())
def test_classifier_fit_and_predict_any_X(X, data):
    n = _n_series(X)
    y = np.array(data.draw(st.lists(st.sampled_from([0, 1]), min_size=n, max_size=n)))
    missing = data.draw(st.sampled_from(["raise", "trim"]))  # "trim" reads trailing NaN as padding
    clf, err = _checked(lambda: EADCTClassifier(**SMALL, pretrain_epochs=0, missing_values=missing).fit(X, y), "fit")
    if clf is not None:
        proba, _ = _checked(lambda: clf.predict_proba(X), "predict_proba")
        _check_outputs(proba, n, "predict_proba")


@FUZZ
@given(y=ANY_Y)
def test_classifier_and_regressor_any_y(y, panel12):
    for est in (EADCTClassifier(**SMALL, pretrain_epochs=0), EADCTRegressor(**SMALL, pretrain_epochs=0)):
        fitted, _ = _checked(lambda est=est: est.fit(panel12, y), f"{type(est).__name__}.fit")
        if fitted is not None:
            pred, _ = _checked(lambda est=fitted: est.predict(panel12), "predict")
            _check_outputs(pred, len(panel12), f"{type(est).__name__}.predict")


@FUZZ
@given(X=ANY_X)
def test_predict_and_transform_any_X_after_a_fit(X, fitted_small):
    n = _n_series(X)
    for est, method in fitted_small:
        out, _ = _checked(lambda est=est, method=method: getattr(est, method)(X), f"{type(est).__name__}.{method}")
        if out is not None:
            _check_outputs(out, n, f"{type(est).__name__}.{method}")


@FUZZ
@given(X=ANY_X)
def test_representation_fit_any_X(X):
    rep, _ = _checked(lambda: EADCTRepresentation(**SMALL, missing_values="interpolate").fit(X), "fit")
    if rep is not None:
        out, _ = _checked(lambda: rep.transform(X), "transform")
        _check_outputs(out, _n_series(X), "transform")


@pytest.fixture(scope="module")
def panel12():
    return np.random.default_rng(0).normal(size=(12, 2, 6))


@pytest.fixture(scope="module")
def fitted_small(panel12):
    y = np.arange(12) % 2
    return [
        (EADCTClassifier(**SMALL, pretrain_epochs=0).fit(panel12, y), "predict_proba"),
        (EADCTRegressor(**SMALL, pretrain_epochs=0, missing_values="interpolate").fit(panel12, y * 1.5), "predict"),
        (EADCTRepresentation(**SMALL).fit(panel12), "transform"),
    ]


def test_the_rule_refuses_an_operation_that_fails_inside_eadct(tmp_path):
    """``len`` of a float in an eadct file is a TypeError from that file with a long message, and not a check; the
    same file's ``raise`` is one."""
    source = tmp_path / "eadct" / "checks.py"
    source.parent.mkdir()
    source.write_text(
        "def length(x):\n    return len(x)\n\n\n"
        "def check(x):\n    raise TypeError(f'x must be a series of numbers, got {x!r}')\n"
    )
    module = {}
    exec(compile(source.read_text(), str(source), "exec"), module)
    with pytest.raises(TypeError, match="object of type 'float' has no len") as operation:
        module["length"](float("nan"))
    assert raised_by_a_check(operation.value).startswith("an operation failed")
    with pytest.raises(TypeError) as check:
        module["check"](float("nan"))
    assert raised_by_a_check(check.value) is None
