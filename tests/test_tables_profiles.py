"""The tables' profiles: the paper's reproduce the paper configuration, the defaults' the estimators'
defaults (``eadct.tables._config``)."""

from __future__ import annotations

from eadct import PAPER_CONFIGURATION, EADCTClassifier, EADCTRegressor
from eadct.tables._config import load_table


def test_paper_profiles_use_the_paper_configuration_and_defaults_the_estimators():
    # the tables keep flat settings: the paper configuration's options are fields beside its parameters
    paper = {k: v for k, v in PAPER_CONFIGURATION.items() if k != "options"} | PAPER_CONFIGURATION["options"]
    table = load_table("accuracy")
    assert table.profile("defaults").base_params() == {
        k: v for k, v in EADCTClassifier()._settings().items() if k in paper
    }
    assert load_table("table2").profile("quick").base_params() == paper
    epochs = ("max_epochs", "pretrain_epochs", "n_iter_no_change")
    for task, estimator in (("classification", EADCTClassifier()), ("regression", EADCTRegressor())):
        assert table.profile("defaults").epochs(task) == {k: estimator.get_params()[k] for k in epochs}
    assert table.compare == ("EA-DC (defaults)", "Transformer (defaults)")
