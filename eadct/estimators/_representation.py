"""EADCTRepresentation: unsupervised series -> vector encoder."""

from __future__ import annotations

from sklearn.base import TransformerMixin

from ..networks.encoder import LEARNED_POOLINGS
from ._base import EADCTBase
from ._docs import FITTED_DOC, doc_with_default, parameters_doc
from ._params import UNSUPERVISED
from ._signature import check_params, make_init

_PRETRAIN_EPOCHS_DOC = "int, default=60\n    Pretraining epochs (at most)."
#: The representation keeps mean pooling (one d_model vector per series, docs/model.md); the
#: supervised estimators' default, "segments", measured better for their task heads (docs/accuracy.md).
_OWN_DEFAULTS = {"pooling": "mean"}
_POOLING_DOC = doc_with_default("pooling", _OWN_DEFAULTS["pooling"])


class EADCTRepresentation(TransformerMixin, EADCTBase):
    __doc__ = f"""Unsupervised representation of time series by an EA-DC-Transformer encoder.

    ``fit`` trains the encoder by masked-value reconstruction (paper Eq. 7-8);
    ``transform`` returns the pooled representation Z, one ``d_model`` vector per
    series, for any scikit-learn estimator downstream (e.g. in a ``Pipeline``).

    Parameters
    ----------
{parameters_doc(UNSUPERVISED, max_epochs=_PRETRAIN_EPOCHS_DOC, pooling=_POOLING_DOC)}
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
    __init__ = make_init(UNSUPERVISED, **_OWN_DEFAULTS)

    def fit(self, X, y=None):
        """Train the encoder by masked reconstruction of X; y is ignored.

        Returns
        -------
        self
        """
        check_params(self.get_params(), type(self).__name__)
        if self.pooling in LEARNED_POOLINGS:
            raise ValueError(
                f"pooling={self.pooling!r} learns its queries in fine-tuning, which EADCTRepresentation does not "
                'run (they would stay at their start, plain part means): use pooling="segments"'
            )
        return self._fit_network(self._panel(X, fitting=True), None, None)
