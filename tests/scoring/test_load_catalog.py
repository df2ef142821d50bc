"""`load_catalog` publishes questionnaire and ruleset v2 and v3 beside v1, and still refuses a
published version whose content changed (changing nothing)."""

import io
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from questionnaires.models import QuestionnaireVersion
from questionnaires.spec import CATALOG_DIR as QUESTIONNAIRE_DIR
from questionnaires.spec import CatalogError
from scoring.models import Ruleset
from scoring.registry import load_catalog_files
from scoring.services import catalog_load
from scoring.spec import CATALOG_DIR as RULESET_DIR

pytestmark = pytest.mark.django_db


def load() -> str:
    out = io.StringIO()
    call_command("load_catalog", stdout=out)
    return out.getvalue()


# Ruleset version → (its questionnaire version, the questionnaire versions whose answers it
# scores, its number of rules as the contracts state it: v2.md 50, v3.md 54).
PUBLISHED = {
    "1": ("1", {"1"}, None),
    "2": ("2", {"1", "2"}, 50),
    "3": ("3", {"1", "2", "3"}, 54),
}


def test_every_version_is_published_beside_the_older_ones():
    first = load()  # published now, or earlier in this test session (then "unchanged")

    for version in PUBLISHED:
        for item in (f"questionnaire ai-inference-isolation@{version}",
                     f"ruleset incident-2026-kv@{version}"):  # fmt: skip
            assert f"published {item}" in first or f"unchanged {item}" in first
    questionnaires = {q.version: q for q in QuestionnaireVersion.objects.all()}
    for version, (written_for, applies_to, rule_count) in PUBLISHED.items():
        ruleset = Ruleset.objects.get(version=version)
        assert ruleset.questionnaire == questionnaires[written_for]
        assert {q.version for q in ruleset.applies_to.all()} == applies_to
        if rule_count is not None:
            assert ruleset.rules.count() == rule_count
    # What is published is the full version, not "v1 plus": it never depends on v1's row.
    v1, v2, v3 = (questionnaires[v] for v in ("1", "2", "3"))
    assert [s["code"] for s in v2.content["sections"]][-2:] == ["PRB", "USE"]
    assert [s["code"] for s in v3.content["sections"]] == [
        s["code"] for s in v2.content["sections"]
    ]
    probe = v2.spec.questions["PRB-02"]
    assert (probe.parser, probe.produced_by_avia) == ("probe_result", True)
    assert v2.spec.questions["PRF-10"].parser == "model_config"
    assert v1.spec.questions["CTX-08"].parser == "startup_log"
    assert set(v3.spec.questions) - set(v2.spec.questions) == {"KV-10", "KV-11", "KV-12"}
    assert "unchanged ruleset incident-2026-kv@3" in load()


def test_ruleset_v3_holds_every_v2_rule_unchanged_and_54_in_all():
    files = load_catalog_files()  # read from the YAML files, not from the database
    v2, v3 = files.ruleset("incident-2026-kv@2"), files.ruleset("incident-2026-kv@3")

    assert len(v3.rules) == 54
    assert v3.rules[: len(v2.rules)] == v2.rules
    new = {rule.id: rule.severity for rule in v3.rules[len(v2.rules) :]}
    assert new == {
        "CACHE-SALT-FROM-REQUEST": "high",
        "CACHE-OFFLOAD-KEY-WITHOUT-SALT": "high",
        "CACHE-OFFLOAD-SALT-UNTESTED": "low",
        "PROBE-CONTEXT-OVERCLAIMED": "high",
    }


def test_a_changed_published_version_is_refused_and_nothing_changes(tmp_path: Path):
    load()
    questionnaires = tmp_path / "questionnaires"
    rulesets = tmp_path / "rulesets"
    shutil.copytree(QUESTIONNAIRE_DIR, questionnaires)
    shutil.copytree(RULESET_DIR, rulesets)
    changed = rulesets / "incident-2026-kv-v2.yaml"
    text = changed.read_text(encoding="utf-8")
    changed.write_text(text.replace("severity: low", "severity: medium", 1), encoding="utf-8")
    stored = Ruleset.objects.get(version="2").content_hash

    catalog = load_catalog_files(
        questionnaire_files=sorted(questionnaires.glob("*.yaml")),
        ruleset_files=sorted(p for p in rulesets.glob("*.yaml") if p.name != "frameworks.yaml"),
    )
    with pytest.raises(CatalogError) as caught:
        catalog_load(catalog=catalog)

    assert "incident-2026-kv@2" in str(caught.value)
    assert Ruleset.objects.get(version="2").content_hash == stored


def test_a_v1_file_changed_under_a_v2_that_extends_it_is_refused_too(tmp_path: Path):
    load()
    questionnaires = tmp_path / "questionnaires"
    shutil.copytree(QUESTIONNAIRE_DIR, questionnaires)
    v1 = questionnaires / "ai-inference-isolation-v1.yaml"
    v1.write_text(v1.read_text(encoding="utf-8").replace("Service profile", "Profile", 1), "utf-8")
    catalog = load_catalog_files(questionnaire_files=sorted(questionnaires.glob("*.yaml")))

    with pytest.raises(CatalogError) as caught:
        catalog_load(catalog=catalog)

    assert "ai-inference-isolation@1" in str(caught.value)
