"""EADCTRepresentation: unsupervised series -> vector encoder."""

from __future__ import annotations

from sklearn.base import TransformerMixin

from ._base import EADCTBase
from ._params import ARCHITECTURE_DOC, TRAINING_DOC


class EADCTRepresentation(TransformerMixin, EADCTBase):
    __doc__ = f"""Unsupervised representation of time series by an EA-DC-Transformer encoder.

    ``fit`` trains the encoder by masked-value reconstruction (paper Eq. 7-8);
    ``transform`` returns the pooled representation Z, one ``d_model`` vector per
    series, for any scikit-learn estimator downstream (e.g. in a ``Pipeline``).

    Parameters
    ----------
{ARCHITECTURE_DOC}    max_epochs : int, default=100
        Pretraining epochs (at most).
{TRAINING_DOC}
    Attributes
    ----------
    n_channels_ : int
        Channels seen in fit.
    n_features_in_ : int
        Same as ``n_channels_``.
    n_timepoints_ : int
    network_ : eadct.networks.SeriesNetwork
    history_ : list of dict
    device_ : str

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
    pretrain_epochs = 0  # not a parameter: fit is all pretraining (max_epochs)

    def __init__(
        self,
        *,
        architecture="ea-dc-transformer",
        alpha=0.5,
        beta=0.3,
        attention_ratio=0.25,
        d_model=64,
        n_heads=8,
        n_blocks=2,
        attention_kernel_size=3,
        d_ff=256,
        dropout=0.1,
        norm="batch",
        checkpoint_attention="auto",
        attention_downsample=1,
        pooling="mean",
        max_epochs=100,
        lr=1e-3,
        batch_size=32,
        mask_ratio=0.15,
        mask_length=3.0,
        validation_fraction=0.1,
        n_iter_no_change=30,
        optimizer=None,
        optimizer_kwargs=None,
        clip_grad_norm=4.0,
        missing_values="raise",
        device="auto",
        precision="auto",
        memory_guard="raise",
        checkpoint_path=None,
        random_state=None,
        verbose=False,
    ):
        self.architecture = architecture
        self.alpha = alpha
        self.beta = beta
        self.attention_ratio = attention_ratio
        self.d_model = d_model
        self.n_heads = n_heads
        self.n_blocks = n_blocks
        self.attention_kernel_size = attention_kernel_size
        self.d_ff = d_ff
        self.dropout = dropout
        self.norm = norm
        self.checkpoint_attention = checkpoint_attention
        self.attention_downsample = attention_downsample
        self.pooling = pooling
        self.max_epochs = max_epochs
        self.lr = lr
        self.batch_size = batch_size
        self.mask_ratio = mask_ratio
        self.mask_length = mask_length
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.optimizer = optimizer
        self.optimizer_kwargs = optimizer_kwargs
        self.clip_grad_norm = clip_grad_norm
        self.missing_values = missing_values
        self.device = device
        self.precision = precision
        self.memory_guard = memory_guard
        self.checkpoint_path = checkpoint_path
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X, y=None):
        """Train the encoder by masked reconstruction of X; y is ignored.

        Returns
        -------
        self
        """
        self._check_params()
        return self._fit_network(self._panel(X, fitting=True), None, None)

    def transform(self, X):
        """Pooled representation, shape (n_samples, d_model)."""
        return self._forward(X, method="represent")
