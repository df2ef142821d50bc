"""`load_catalog` publishes questionnaire and ruleset v2 beside v1, and still refuses a published
version whose content changed (changing nothing)."""

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


def test_v2_is_published_beside_v1():
    first = load()  # published now, or earlier in this test session (then "unchanged")

    for item in ("questionnaire ai-inference-isolation@1", "questionnaire ai-inference-isolation@2",
                 "ruleset incident-2026-kv@1", "ruleset incident-2026-kv@2"):  # fmt: skip
        assert f"published {item}" in first or f"unchanged {item}" in first
    v1, v2 = QuestionnaireVersion.objects.order_by("version")
    ruleset_v1, ruleset_v2 = Ruleset.objects.order_by("version")
    assert set(ruleset_v1.applies_to.all()) == {v1}
    assert set(ruleset_v2.applies_to.all()) == {v1, v2}
    assert ruleset_v2.questionnaire == v2
    assert ruleset_v2.rules.count() == 50
    # What is published is the full version, not "v1 plus": it never depends on v1's row.
    assert [s["code"] for s in v2.content["sections"]][-2:] == ["PRB", "USE"]
    probe = v2.spec.questions["PRB-02"]
    assert (probe.parser, probe.produced_by_avia) == ("probe_result", True)
    assert v2.spec.questions["PRF-10"].parser == "model_config"
    assert v1.spec.questions["CTX-08"].parser == "startup_log"
    assert "unchanged ruleset incident-2026-kv@2" in load()


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
