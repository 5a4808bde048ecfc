"""EADCTClassifier."""

from __future__ import annotations

import numpy as np
from scipy.special import log_softmax, softmax
from sklearn.base import ClassifierMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from ._base import EADCTBase
from ._data import univariate_differences
from ._docs import FITTED_DOC, doc_with_default, options_doc, parameters_doc
from ._params import CLASSIFIER_DEFAULTS, OPTIONS, SUPERVISED
from ._signature import make_init
from ._treatment import is_auto
from ._warn import warn_if_nothing

#: ``EADCTClassifier``'s text of ``input_differences``, which also takes "auto" (a rule on X, not a choice by fits
#: as the regressor's).
DIFFERENCES_DOC = doc_with_default("input_differences", CLASSIFIER_DEFAULTS.get("input_differences", False)).replace(
    "bool, ", 'bool or "auto", ', 1
) + (
    '\n    "auto": the differences where X has one channel and ``wide_scales`` acts on none (a univariate'
    "\n    series, standardised as a whole, whose shape the slopes carry); elsewhere none. What it decided:"
    "\n    ``input_differences_`` (docs/accuracy.md)."
)

_PARAMETERS_DOC = parameters_doc(
    SUPERVISED,
    options=options_doc(OPTIONS, CLASSIFIER_DEFAULTS, input_differences=DIFFERENCES_DOC),
    **{n: doc_with_default(n, v) for n, v in CLASSIFIER_DEFAULTS.items() if n in SUPERVISED},
)


class EADCTClassifier(ClassifierMixin, TransformerMixin, EADCTBase):
    __doc__ = f"""Time-series classifier on the EA-DC-Transformer (Wang et al., TPAMI 2023).

    Masked-value pretraining of the encoder on the training series, then fine-tuning
    of encoder and an MLP head with cross-entropy; the network kept is the mean of
    the weights of the last 20 fine-tuning epochs (``options["average_epochs"]``; the
    paper chooses the best epoch on a validation split: ``validation_fraction=0.1,
    options={{"average_epochs": None}}``).

    Parameters
    ----------
{_PARAMETERS_DOC}
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    input_differences_ : bool
        Whether the network reads the first differences: ``input_differences``, or what "auto" decided.
{FITTED_DOC}
    Examples
    --------
    >>> import numpy as np
    >>> from eadct import EADCTClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 2, 16)); y = np.repeat([0, 1], 10); X[y == 1] += 1
    >>> clf = EADCTClassifier(d_model=8, n_heads=2, n_blocks=1, max_epochs=2,
    ...                       pretrain_epochs=1, random_state=0).fit(X, y)
    >>> clf.predict(X).shape
    (20,)
    """

    _task = "classification"
    _option_names, _own_defaults = OPTIONS, CLASSIFIER_DEFAULTS
    __init__ = make_init(SUPERVISED, **CLASSIFIER_DEFAULTS)

    def fit(self, X, y, X_unlabeled=None):
        """Pretrain on X (and ``X_unlabeled``), then fine-tune on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_channels, n_timepoints), (n_samples, n_timepoints),
            list of (n_channels, length_i) arrays, or sktime nested DataFrame
        y : array-like of shape (n_samples,)
        X_unlabeled : same forms as X, optional
            Extra unlabeled series used in pretraining only.

        Returns
        -------
        self
        """
        panel = self._start_supervised_fit(X, y)
        y = column_or_1d(y, warn=True)
        self._check_n_samples(panel, y)
        classes, encoded = _unique_labels(y, type(self).__name__)  # before sklearn's check, which sorts y too
        check_classification_targets(y)
        if len(classes) < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 classes in y, but only one class ({classes[0]!r}) is present."
                if len(classes)
                else "y is empty."
            )
        self.classes_ = classes
        differences, wide_scales = self._option("input_differences"), self._option("wide_scales")
        self.input_differences_ = univariate_differences(panel, wide_scales) if is_auto(differences) else differences
        self._fit_network(panel, encoded.astype(np.int64), len(classes), stratify=encoded, X_unlabeled=X_unlabeled)
        outputs = self._forward(X, "forward", self.networks_)  # fit's own pass: it names its networks
        accuracy = float(np.mean(np.argmax(outputs, axis=1) == encoded))
        warn_if_nothing(self, accuracy, np.bincount(encoded).max() / len(encoded), lower_is_better=False)
        return self

    def predict_proba(self, X):
        """Class probabilities, shape (n_samples, n_classes)."""
        return softmax(self._forward(X), axis=1)

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba`."""
        return log_softmax(self._forward(X), axis=1)

    def predict(self, X):
        """Most probable class, shape (n_samples,)."""
        logits = self._forward(X)
        return self.classes_[np.argmax(logits, axis=1)]


def _unique_labels(y: np.ndarray, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(y, return_inverse=True)``, with errors that name missing or mixed labels."""
    if y.dtype == object:
        missing = [i for i, v in enumerate(y) if v is None or (isinstance(v, float) and np.isnan(v))]
        if missing:
            raise ValueError(
                f"{owner}: y has {len(missing)} missing label(s) (None or NaN), the first at y[{missing[0]}]; drop "
                "those series or give them a label."
            )
    try:
        return np.unique(y, return_inverse=True)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in y})
        raise TypeError(
            f"{owner}: y mixes label types {kinds}, which cannot be ordered; use one type for all labels "
            "(for example y.astype(str))."
        ) from None
