"""EADCTRepresentation: unsupervised series -> vector encoder."""

from __future__ import annotations

from sklearn.base import TransformerMixin

from ._base import EADCTBase
from ._docs import FITTED_DOC, doc_with_default, options_doc, parameters_doc
from ._params import REPRESENTATION_DEFAULTS, UNSUPERVISED, UNSUPERVISED_OPTIONS
from ._signature import check_params, make_init

_PRETRAIN_EPOCHS_DOC = "int, default=60\n    Pretraining epochs (at most)."
_POOLING_DOC = doc_with_default("pooling", REPRESENTATION_DEFAULTS["pooling"])
_OPTIONS_DOC = options_doc(UNSUPERVISED_OPTIONS, REPRESENTATION_DEFAULTS)


class EADCTRepresentation(TransformerMixin, EADCTBase):
    __doc__ = f"""Unsupervised representation of time series by an EA-DC-Transformer encoder.

    ``fit`` trains the encoder by masked-value reconstruction (paper Eq. 7-8);
    ``transform`` returns the pooled representation Z, one ``d_model`` vector per
    series, for any scikit-learn estimator downstream (e.g. in a ``Pipeline``).

    Parameters
    ----------
{parameters_doc(UNSUPERVISED, max_epochs=_PRETRAIN_EPOCHS_DOC, pooling=_POOLING_DOC, options=_OPTIONS_DOC)}
    Attributes
    ----------
{FITTED_DOC}
    Examples
    --------
    >>> import numpy as np
    >>> from eadct import EADCTRepresentation
    >>> X = np.random.default_rng(0).normal(size=(20, 2, 16))
    >>> rep = EADCTRepresentation(d_model=8, n_heads=2, n_blocks=1, max_epochs=2, random_state=0)
    >>> rep.fit_transform(X).shape
    (20, 8)
    """

    _task = None
    _option_names, _own_defaults = UNSUPERVISED_OPTIONS, REPRESENTATION_DEFAULTS
    __init__ = make_init(UNSUPERVISED, **REPRESENTATION_DEFAULTS)

    def fit(self, X, y=None):
        """Train the encoder by masked reconstruction of X; y is ignored.

        Returns
        -------
        self
        """
        check_params(self._settings(), type(self).__name__)
        return self._fit_network(self._panel(X, fitting=True), None, None)
