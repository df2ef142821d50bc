"""The shipped catalogue's v1 questionnaire, ruleset and compiled engine, for the table-driven
rule tests. Each module that uses them gives `catalog` (module-scoped, the built-in catalogue:
no database), which these fixtures read."""

import pytest

QUESTIONNAIRE = "ai-inference-isolation@1"
RULESET = "incident-2026-kv@1"


@pytest.fixture(scope="module")
def engine(catalog):
    return catalog.compiled(RULESET)


@pytest.fixture(scope="module")
def questionnaire(catalog):
    return catalog.questionnaire(QUESTIONNAIRE)


@pytest.fixture(scope="module")
def ruleset(catalog):
    return catalog.ruleset(RULESET)
