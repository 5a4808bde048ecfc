"""What the sktime and aeon estimators (:mod:`eadct.sktime`, :mod:`eadct.aeon`) share: they wrap the
scikit-learn estimators of :mod:`eadct` in another framework's base class without restating a hyperparameter.

Their ``__init__`` takes the scikit-learn class's hyperparameters (its signature, with a framework's own
defaults where its conventions differ), stores them through the scikit-learn class (which checks the names),
and ``fit`` builds and fits one scikit-learn estimator from ``get_params``.
"""

from __future__ import annotations

import inspect

__all__ = ["Delegating", "TEST_PARAMS", "delegated_signature", "store_params"]

#: Tiny settings for the frameworks' estimator checks (seconds per fit on a CPU): EA-DC with pretraining,
#: and a Transformer with mean pooling, no pretraining and interpolated missing values.
TEST_PARAMS = (
    dict(
        d_model=8,
        n_heads=2,
        n_blocks=1,
        d_ff=8,
        attention_ratio=0.5,
        max_epochs=1,
        pretrain_epochs=1,
        batch_size=16,
        device="cpu",
        random_state=0,
    ),
    dict(
        architecture="transformer",
        d_model=8,
        n_heads=2,
        n_blocks=1,
        d_ff=8,
        max_epochs=1,
        pretrain_epochs=0,
        pooling="mean",
        batch_size=16,
        device="cpu",
        random_state=1,
        missing_values="interpolate",
    ),
)


def store_params(obj, sklearn_class, params: dict, **own_defaults) -> None:
    """Set every hyperparameter of ``sklearn_class`` on ``obj``: ``params``, else ``own_defaults``, else the
    class's default, checked by the scikit-learn class itself (an unknown name is its TypeError)."""
    for name, value in sklearn_class(**{**own_defaults, **params}).get_params(deep=False).items():
        setattr(obj, name, value)


def delegated_signature(sklearn_class, **own_defaults) -> inspect.Signature:
    """The ``__init__`` signature of ``sklearn_class`` with ``own_defaults`` replacing its defaults."""
    sig = inspect.signature(sklearn_class.__init__)
    return sig.replace(
        parameters=[p.replace(default=own_defaults.get(n, p.default)) for n, p in sig.parameters.items()]
    )


class Delegating:
    """Mixin of an sktime or aeon estimator around ``_sklearn_class``: ``__init__`` stores the hyperparameters
    (``_own_defaults`` first), ``_fit`` fits one scikit-learn estimator in ``estimator_`` and the predictions
    ask it. The missing-values tag follows ``missing_values`` per instance.

    A subclass that sets ``_sklearn_class`` gets its ``__init__`` here, with that class's signature (the
    frameworks read the hyperparameter names from it)."""

    _sklearn_class: type
    _own_defaults: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_sklearn_class" not in cls.__dict__:
            return

        def __init__(self, **params):
            self._store(params)
            super().__init__()  # the framework's base class, next in the MRO
            self._finish_init()

        __init__.__signature__ = delegated_signature(cls._sklearn_class, **cls._own_defaults)
        __init__.__qualname__ = f"{cls.__qualname__}.__init__"
        cls.__init__ = __init__

    def get_params(self, deep=True):
        params = super().get_params(deep=deep)
        return {**params, **self._sklearn_class._deep_options(self)} if deep else params

    def set_params(self, **params):
        return super().set_params(**self._sklearn_class._with_options(self, params))

    def _store(self, params: dict) -> None:
        store_params(self, self._sklearn_class, params, **self._own_defaults)

    def _finish_init(self) -> None:
        self.set_tags(**{"capability:missing_values": self.missing_values == "interpolate"})

    def _fit(self, X, y):
        self.estimator_ = self._sklearn_class(**self.get_params(deep=False)).fit(X, y)
        return self

    def _predict(self, X):
        return self.estimator_.predict(X)
