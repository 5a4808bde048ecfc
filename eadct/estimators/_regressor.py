"""EADCTRegressor."""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin, TransformerMixin

from ._base import EADCTBase
from ._docs import FITTED_DOC, doc_with_default, options_doc, parameters_doc
from ._input import float_targets
from ._params import REGRESSOR_DEFAULTS, REGRESSOR_OPTIONS, SUPERVISED
from ._ridge import RIDGE_REFITS, refit_linear_head
from ._signature import make_init
from ._treatment import ATTRIBUTES_DOC as TREATMENT_ATTRIBUTES_DOC
from ._treatment import DOC as TREATMENT_DOC
from ._treatment import fit_with_chosen_treatment, is_auto
from ._warn import warn_if_nothing


def _target_location_scale(y2: np.ndarray, loss: str) -> tuple[np.ndarray, np.ndarray]:
    """Centre and spread of each target column: mean and standard deviation for the squared error; for the
    Huber loss median and interquartile range / 1.349 (the standard deviation of a normal sample), so that
    extreme targets neither shift nor stretch the scale; the standard deviation where the IQR is 0."""
    std = y2.std(axis=0)
    if loss != "huber":
        return y2.mean(axis=0), std
    q25, median, q75 = np.percentile(y2, [25, 50, 75], axis=0)
    iqr_scale = (q75 - q25) / 1.349
    return median, np.where(iqr_scale > 1e-12, iqr_scale, std)


_PARAMETERS_DOC = parameters_doc(
    SUPERVISED,
    options=options_doc(REGRESSOR_OPTIONS, REGRESSOR_DEFAULTS, input_differences=TREATMENT_DOC),
    **{n: doc_with_default(n, v) for n, v in REGRESSOR_DEFAULTS.items() if n in SUPERVISED},
)


class EADCTRegressor(RegressorMixin, TransformerMixin, EADCTBase):
    __doc__ = f"""Time-series (extrinsic) regressor on the EA-DC-Transformer.

    Masked-value pretraining, then fine-tuning of encoder and a linear head with MSE on standardised
    targets (paper Eq. 9; or, with ``options={{"loss": "huber"}}``, a Huber loss on robustly scaled targets);
    one or several targets. The network kept is the mean of the weights of the last
    {REGRESSOR_DEFAULTS["average_epochs"]} fine-tuning epochs (``average_epochs``), and the linear head is fitted
    again by ridge regression (``head_refit``); the convolutions' dilation doubles with every layer
    (``dilation_per_layer``): each a field of ``options``. The paper chooses the best epoch on a validation
    split, keeps the head as fine-tuned and doubles the dilation with every block:
    ``paper_configuration("regression")``.

    Parameters
    ----------
{_PARAMETERS_DOC}
    Attributes
    ----------
    target_mean_, target_scale_ : ndarray of shape (n_targets,)
        Target standardisation learnt in fit: mean and standard deviation, or with ``loss="huber"``
        median and interquartile range / 1.349 (the standard deviation where that is 0).
    head_alpha_ : ndarray of shape (n_estimators, n_targets)
        With ``head_refit="ridge"`` or ``"ridge-1se"`` (and the squared error): the strength chosen per member and
        target.
{TREATMENT_ATTRIBUTES_DOC}{FITTED_DOC}
    Examples
    --------
    >>> import numpy as np
    >>> from eadct import EADCTRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 2, 16)); y = X.mean(axis=(1, 2))
    >>> reg = EADCTRegressor(d_model=8, n_heads=2, n_blocks=1, max_epochs=2,
    ...                      pretrain_epochs=1, random_state=0).fit(X, y)
    >>> reg.predict(X).shape
    (20,)
    """

    _task = "regression"
    _option_names, _own_defaults = REGRESSOR_OPTIONS, REGRESSOR_DEFAULTS
    __init__ = make_init(SUPERVISED, **REGRESSOR_DEFAULTS)

    def fit(self, X, y, X_unlabeled=None):
        """Pretrain on X (and ``X_unlabeled``), then fine-tune on (X, y).

        Parameters
        ----------
        X : see :meth:`EADCTClassifier.fit`
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        X_unlabeled : optional, series used in pretraining only

        Returns
        -------
        self
        """
        panel = self._start_supervised_fit(X, y)
        y = float_targets(y, type(self).__name__)
        self._check_n_samples(panel, y)
        if is_auto(self._option("input_differences")):  # the treatment chosen on TRAIN, then this fit again
            return fit_with_chosen_treatment(self, X, y, X_unlabeled)
        self.input_differences_ = self._option("input_differences")
        self.__dict__.pop("treatment_choice_", None)
        self._y_ndim = y.ndim
        y2 = y.reshape(len(y), -1)
        loss, head_refit = self._option("loss"), self._option("head_refit")
        with np.errstate(over="ignore", invalid="ignore"):
            self.target_mean_, scale = _target_location_scale(y2, loss)
            self.target_scale_ = np.where(scale > 1e-12, scale, 1.0)
            targets = ((y2 - self.target_mean_) / self.target_scale_).astype(np.float32)
        if not (np.isfinite(self.target_scale_).all() and np.isfinite(targets).all()):
            raise ValueError(
                f"{type(self).__name__}: y has values up to {np.abs(y2).max():.3g}, too large to standardise in "
                "float64 (its mean or spread overflows); rescale y (for example to other units) before fitting."
            )
        self.__dict__.pop("head_alpha_", None)  # a refit without the ridge leaves none from before
        self._fit_network(panel, targets, y2.shape[1], X_unlabeled=X_unlabeled)
        if head_refit in RIDGE_REFITS and loss == "squared_error":  # every member's head, on all of TRAIN
            alphas = []
            for net in self.networks_:
                features = self._forward(X, "represent", [net])
                alphas.append(refit_linear_head(net, features, targets.astype(np.float64), head_refit))
            self.head_alpha_ = np.stack(alphas)
        outputs = self._forward(X, "forward", self.networks_)  # fit's own pass: it names its networks
        error = float(np.mean((outputs.reshape(targets.shape) - targets) ** 2))
        warn_if_nothing(self, error, float(np.mean(targets.var(axis=0))), lower_is_better=True)
        return self

    def predict(self, X):
        """Predicted targets, shape (n_samples,) or (n_samples, n_targets) as y in fit."""
        out = self._forward(X) * self.target_scale_ + self.target_mean_
        return out[:, 0] if self._y_ndim == 1 else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
