"""The layering the apps rely on: one error hierarchy, services that check the caller's role,
the scoring task's stable name, the public catalogue version order."""

import pytest

from assessments import factories
from assessments.models import Channel
from assessments.services.reviews import review_record
from assessments.tasks import score_assessment_run
from core.errors import ForbiddenError, ServiceError
from questionnaires.spec import version_key
from questionnaires.validation import AnswerValidationError
from reports.services import report_request
from tests.personas import member_of


def test_the_scoring_task_keeps_the_name_queued_messages_carry():
    assert score_assessment_run.name == "scoring.tasks.score_assessment_run"


def test_catalogue_versions_sort_in_pep_440_order_with_other_text_first():
    assert sorted(["2", "1.10", "draft", "1.2"], key=version_key) == ["draft", "1.2", "1.10", "2"]


def test_every_refusal_is_one_service_error_and_a_forbidden_one_is_a_403():
    from django.core.exceptions import PermissionDenied

    assert issubclass(AnswerValidationError, ServiceError)
    assert issubclass(ForbiddenError, PermissionDenied)
    assert ForbiddenError({"x": ["no"]}).status_code == 403


@pytest.fixture
def scored(catalog, personas):
    return factories.incident_assessment(member=member_of(personas.ava))


def test_review_record_refuses_a_member_whose_role_does_not_review(scored, personas):
    with pytest.raises(ForbiddenError):
        review_record(
            assessment=scored,
            member=member_of(personas.vic),
            decision="approved",
            channel=Channel.WEB,
        )
    scored.refresh_from_db()
    assert scored.status == "scored"


def test_review_record_refuses_another_organizations_reviewer(scored, personas):
    with pytest.raises(ServiceError) as raised:
        review_record(
            assessment=scored,
            member=member_of(personas.oscar),
            decision="approved",
            channel=Channel.WEB,
        )
    assert "assessment" in raised.value.errors


def test_a_report_request_needs_a_role_that_prepares_or_decides(scored, personas):
    with pytest.raises(ForbiddenError):
        report_request(
            assessment=scored, language="en", member=member_of(personas.vic), channel="web"
        )
    assert not scored.reports.exists()


def test_config_tops_the_layers_and_every_app_has_its_own_layers_contract():
    """`config` composes the apps (no app imports it), and the layers inside each app are
    enforced by a contract of their own (pyproject.toml, checked by `lint-imports`)."""
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    linter = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]
    contracts = linter["contracts"]
    between_apps = next(c for c in contracts if c["type"] == "layers" and "containers" not in c)
    assert between_apps["layers"][0] == "config"
    inside = {c["containers"][0] for c in contracts if c.get("containers")}
    apps = set(linter["root_packages"]) - {"config"}
    assert apps <= inside, f"no layers contract inside {sorted(apps - inside)}"
