"""EADCTRegressor."""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin, TransformerMixin

from ._base import EADCTBase
from ._docs import FITTED_DOC, doc_with_default, parameters_doc
from ._input import float_targets
from ._params import REGRESSOR, REGRESSOR_DEFAULTS
from ._ridge import RIDGE_REFITS, check_refit, refit_linear_head
from ._signature import make_init
from ._treatment import ATTRIBUTES_DOC as TREATMENT_ATTRIBUTES_DOC
from ._treatment import DOC as TREATMENT_DOC
from ._treatment import fit_with_chosen_treatment, is_auto


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


_OWN_DEFAULTS_DOC = {n: doc_with_default(n, v) for n, v in REGRESSOR_DEFAULTS.items() if n != "input_differences"}


class EADCTRegressor(RegressorMixin, TransformerMixin, EADCTBase):
    __doc__ = f"""Time-series (extrinsic) regressor on the EA-DC-Transformer.

    Masked-value pretraining, then fine-tuning of encoder and a linear head (or, with
    ``head_hidden_size``, an MLP head) with MSE on standardised targets (paper Eq. 9; or, with
    ``loss="huber"``, a Huber loss on robustly scaled targets); one or several targets. The network kept
    is the mean of the weights of the last {REGRESSOR_DEFAULTS["average_epochs"]} fine-tuning epochs
    (``average_epochs``), within at most {REGRESSOR_DEFAULTS["max_steps"]:,} optimizer steps per stage
    (``max_steps``), and the linear head is fitted again by ridge regression (``head_refit``); the
    convolutions' dilation doubles with every layer (``dilation_per_layer``). The paper chooses the best
    epoch on a validation split, keeps the head as fine-tuned and doubles the dilation with every block:
    ``paper_configuration("regression")``.

    Parameters
    ----------
{parameters_doc(REGRESSOR, input_differences=TREATMENT_DOC, **_OWN_DEFAULTS_DOC)}
    Attributes
    ----------
    target_mean_, target_scale_ : ndarray of shape (n_targets,)
        Target standardisation learnt in fit: mean and standard deviation, or with ``loss="huber"``
        median and interquartile range / 1.349 (the standard deviation where that is 0).
    head_alpha_ : ndarray of shape (n_estimators, n_targets)
        With ``head_refit="ridge"`` or ``"ridge-1se"`` (and the squared error): the strength chosen per member and
        target.
    head_input_weight_ : ndarray of shape (n_estimators,)
        With ``head_input_parts``: the weight of the input's block that leave-one-out chose per member (0: none).
    target_min_, target_max_ : ndarray of shape (n_targets,)
        The smallest and largest value of each target in fit: the range ``clip_predictions`` clips to.
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
    __init__ = make_init(REGRESSOR, **REGRESSOR_DEFAULTS)

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
        check_refit(self.head_refit, self.head_hidden_size, type(self).__name__, self.head_input_parts, self.loss)
        y = float_targets(y, type(self).__name__)
        self._check_n_samples(panel, y)
        if is_auto(self.input_differences):  # the treatment chosen on an inner split, then this fit again
            return fit_with_chosen_treatment(self, X, y, X_unlabeled)
        self.input_differences_ = self.input_differences
        self.__dict__.pop("treatment_choice_", None)
        self._y_ndim = y.ndim
        y2 = y.reshape(len(y), -1)
        with np.errstate(over="ignore", invalid="ignore"):
            self.target_mean_, scale = _target_location_scale(y2, self.loss)
            self.target_scale_ = np.where(scale > 1e-12, scale, 1.0)
            targets = ((y2 - self.target_mean_) / self.target_scale_).astype(np.float32)
            self.target_min_, self.target_max_ = y2.min(axis=0), y2.max(axis=0)
        if not (np.isfinite(self.target_scale_).all() and np.isfinite(targets).all()):
            raise ValueError(
                f"{type(self).__name__}: y has values up to {np.abs(y2).max():.3g}, too large to standardise in "
                "float64 (its mean or spread overflows); rescale y (for example to other units) before fitting."
            )
        for name in ("head_alpha_", "head_input_weight_"):  # a refit without the ridge leaves none from before
            self.__dict__.pop(name, None)
        self._fit_network(panel, targets, y2.shape[1], X_unlabeled=X_unlabeled)
        ridge = self.head_refit in RIDGE_REFITS and self.loss == "squared_error"
        # each member's representation of all of TRAIN (unclipped: the range is still -inf..inf)
        needed = ridge or self.clip_representation
        features = [self._forward(X, "represent", [net]) for net in self.networks_] if needed else []
        if ridge:  # every member's head, on all of TRAIN
            refits = [refit_linear_head(net, feats, targets.astype(np.float64),
                                        self._forward(X, "input_parts", [net]) if self.head_input_parts else None,
                                        self.head_refit)
                      for net, feats in zip(self.networks_, features, strict=True)]  # fmt: skip
            self.head_alpha_ = np.stack([alphas for alphas, _ in refits])
            if self.head_input_parts:
                self.head_input_weight_ = np.array([weight for _, weight in refits])
        if self.clip_representation:
            for net, feats in zip(self.networks_, features, strict=True):
                net.fit_representation_range(feats)
        return self

    def _build_network(self, n_channels: int, max_len: int, n_outputs: int | None, plan: dict | None = None):
        network = super()._build_network(n_channels, max_len, n_outputs, plan)
        if getattr(self, "head_input_parts", None):  # the input's path (zero until the ridge refit)
            network.add_input_path(self.head_input_parts, n_outputs)
        if getattr(self, "clip_representation", False):  # no clip until fit sets TRAIN's range
            network.add_representation_range()
        return network

    def predict(self, X):
        """Predicted targets, shape (n_samples,) or (n_samples, n_targets) as y in fit."""
        out = self._forward(X) * self.target_scale_ + self.target_mean_
        if self.clip_predictions:
            out = np.clip(out, self.target_min_, self.target_max_)
        return out[:, 0] if self._y_ndim == 1 else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags
