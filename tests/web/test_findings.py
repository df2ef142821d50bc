"""The findings view: score, tier and formula; why each finding fired; the incident fact, the
remediation and the framework references; filters; risk acceptances and mitigations."""

import datetime as dt

import pytest
from django.contrib.humanize.templatetags.humanize import intcomma
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.html import escape

from assessments.models import AuditEvent, RiskDecision
from assessments.services.reviews import risk_decision_record
from assessments.services.submission import assessment_rescore
from scoring.models import Framework
from tests.personas import member_of

from .conftest import make_scored, make_vendor


def findings_url(assessment, **query):
    url = reverse("assessments:findings", args=[assessment.pk])
    return url if not query else f"{url}?{'&'.join(f'{k}={v}' for k, v in query.items())}"


def rule_ids(response) -> list[str]:
    return [item.rule_id for item in response.context["findings"]]


def test_it_shows_the_score_the_tier_and_the_formula_applied(client, personas, scored):
    client.force_login(personas.vic)
    response = client.get(findings_url(scored))
    assert response.status_code == 200
    body = response.content.decode()
    run = scored.latest_run
    assert run.risk_tier == "critical" and run.risk_score == 100
    assert "100/100" in body
    assert "Points per finding: critical 40, high 15, medium 5, low 1." in body
    explanation = response.context["explanation"]
    assert explanation.total == sum(f.points for f in run.findings.all())
    assert f"min(100, {explanation.total}) = <strong>100</strong>" in body
    assert "Critical, because at least one critical rule fired." in body


def test_each_finding_says_why_it_fired_what_it_rests_on_and_what_to_do(client, personas, scored):
    client.force_login(personas.vic)
    response = client.get(findings_url(scored))
    items = {item.rule_id: item.finding for item in response.context["findings"]}
    pool = items["KV-POOL-BELOW-CONTEXT"]
    rule = scored.latest_run.ruleset.spec.rules_by_id["KV-POOL-BELOW-CONTEXT"]
    answers = {line.code: line.value for line in pool.why if line.kind == "answer"}
    assert answers["CTX-01"] == "1,048,576 tokens"
    assert answers["CTX-02"] == "681,280 tokens"
    assert answers["PRF-07"] == "Yes"
    derived = [line for line in pool.why if line.kind == "derived"]
    assert derived and derived[0].value == "681,280 tokens"
    log = items["LOG-POOL-BELOW-CONTEXT"].why[0]
    assert log.kind == "log" and log.code == "CTX-08" and log.line == 42
    assert "max_total_num_tokens=681280" in log.value
    evidence = scored.evidence.get(pk=log.evidence_id)
    assert evidence.original_name == log.label
    assert (pool.rationale, pool.remediation) == (rule.rationale.en, rule.remediation.en)
    body = response.content.decode()
    assert escape(rule.rationale.en) in body and escape(rule.remediation.en) in body
    assert "Cloudflare disclosure, 2026-10-26" in body
    assert reverse("assessments:evidence_download", args=[evidence.pk]) in body


def test_references_show_bilingual_titles_and_mark_secondary_sources(client, personas, scored):
    client.force_login(personas.vic)
    response = client.get(findings_url(scored))
    pool = next(
        i.finding for i in response.context["findings"] if i.rule_id == "KV-POOL-BELOW-CONTEXT"
    )
    rule = scored.latest_run.ruleset.spec.rules_by_id["KV-POOL-BELOW-CONTEXT"]
    references = {ref.id: ref for ref in pool.references}
    dpp4 = Framework.objects.get(ref_id="HK-PDPO-DPP4-1")
    si10 = Framework.objects.get(ref_id="NIST-800-53-SI-10")
    assert not references["HK-PDPO-DPP4-1"].as_summarised
    assert references["NIST-800-53-SI-10"].as_summarised
    body = response.content.decode()
    assert dpp4.title_en in body and si10.title_en in body
    assert body.count("as summarised") >= 1
    client.cookies["django_language"] = "zh-hant"
    chinese = client.get(findings_url(scored)).content.decode()
    assert dpp4.title_zh_hant in chinese
    assert escape(rule.title.zh_hant) in chinese
    assert escape(rule.rationale.zh_hant) in chinese
    with translation.override("zh-hant"):
        assert f"{intcomma(1048576)} 詞元" in chinese  # CTX-01 with the Chinese unit


def test_token_counts_are_grouped_in_hong_kong_chinese_too():
    with translation.override("zh-hant"):
        assert intcomma(1048576) == "1,048,576"


@pytest.mark.parametrize(
    ("query", "check"),
    [
        ({"severity": "critical"}, lambda item: item.finding.severity == "critical"),
        (
            {"framework": "HK-PDPO-DPP4-1"},
            lambda item: "HK-PDPO-DPP4-1" in item.finding.framework_ids,
        ),
        ({"section": "CTX"}, lambda item: item.finding.section == "CTX"),
        (
            {"severity": "high", "framework": "OWASP-LLM02-2025"},
            lambda item: (
                item.finding.severity == "high" and "OWASP-LLM02-2025" in item.finding.framework_ids
            ),
        ),
    ],
)
def test_findings_filter_by_severity_section_and_framework(client, personas, scored, query, check):
    client.force_login(personas.vic)
    everything = client.get(findings_url(scored)).context["findings"]
    response = client.get(findings_url(scored, **query))
    shown = response.context["findings"]
    assert shown and len(shown) < len(everything)
    assert all(check(item) for item in shown)
    assert [i.rule_id for i in shown] == [i.rule_id for i in everything if check(i)]
    assert "Clear filters" in response.content.decode()


def test_the_framework_filter_names_the_clause(client, personas, scored):
    client.force_login(personas.vic)
    body = client.get(findings_url(scored, framework="HK-PDPO-DPP4-1")).content.decode()
    title = Framework.objects.get(ref_id="HK-PDPO-DPP4-1").title_en
    assert f"Citing HK-PDPO-DPP4-1: {title}" in body


@pytest.mark.parametrize(
    "query",
    [
        {"severity": "catastrophic"},
        {"framework": "NOT-A-FRAMEWORK"},
        {"section": "<b>"},
        {"run": "abc"},
    ],
)
def test_an_unknown_filter_shows_everything_instead_of_failing(client, personas, scored, query):
    client.force_login(personas.vic)
    everything = rule_ids(client.get(findings_url(scored)))
    response = client.get(findings_url(scored, **query))
    assert response.status_code == 200
    assert rule_ids(response) == everything


def test_an_unscored_assessment_says_so(client, personas, draft):
    client.force_login(personas.vic)
    response = client.get(findings_url(draft))
    assert response.status_code == 200
    assert "Not scored yet" in response.content.decode()


def test_an_earlier_run_stays_viewable_after_a_rescore(client, personas, scored, settings):
    from assessments.services.scoring_runs import scoring_run_execute

    first = scored.latest_run
    run = assessment_rescore(assessment=scored, member=member_of(personas.ava), channel="web")
    scoring_run_execute(run_id=run.pk)
    client.force_login(personas.vic)
    response = client.get(findings_url(scored, run=first.pk))
    assert response.context["run"] == first
    assert response.context["is_latest_run"] is False
    assert "an earlier scoring run" in response.content.decode()
    # another organization's run id is a 404, not a peek
    other = make_scored(personas, make_vendor(personas, "Else AI", organization=personas.other))
    client.force_login(personas.vic)
    assert client.get(findings_url(scored, run=other.latest_run_id)).status_code == 404


def decide(client, assessment, rule="KV-POOL-BELOW-CONTEXT", **data):
    payload = {
        "kind": "acceptance",
        "justification": "Prompts are capped at 200,000 tokens by our gateway.",
        "owner": "Head of Procurement",
        "expires_on": (timezone.localdate() + dt.timedelta(days=90)).isoformat(),
        **data,
    }
    return client.post(reverse("assessments:risk_decision", args=[assessment.pk, rule]), payload)


def test_an_assessor_records_a_risk_acceptance_that_never_hides_the_finding(
    client, personas, scored
):
    client.force_login(personas.ava)
    response = decide(client, scored)
    assert response.status_code == 302
    assert response["Location"].endswith("#finding-KV-POOL-BELOW-CONTEXT")
    decision = RiskDecision.objects.get()
    assert (decision.kind, decision.owner, decision.created_by) == (
        "acceptance",
        "Head of Procurement",
        personas.ava,
    )
    assert AuditEvent.objects.filter(action="risk_decision.acceptance").exists()
    page = client.get(findings_url(scored))
    item = next(i for i in page.context["findings"] if i.rule_id == "KV-POOL-BELOW-CONTEXT")
    (shown,) = item.finding.decisions
    assert (shown.kind, shown.owner, shown.recorded_by) == (
        "acceptance",
        "Head of Procurement",
        "ava@acme.test",
    )
    body = page.content.decode()
    assert "Risk acceptance" in body and "Head of Procurement" in body
    assert "the finding stays listed" in body
    # the score and the finding count are unchanged
    assert page.context["finding_count"] == scored.latest_run.findings.count()
    assert page.context["explanation"].score == 100


def test_a_mitigation_is_recorded_too(client, personas, scored):
    client.force_login(personas.alice)
    assert decide(client, scored, kind="mitigation").status_code == 302
    assert RiskDecision.objects.get().kind == "mitigation"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"justification": "   "}, "justification"),
        ({"owner": ""}, "owner"),
        ({"expires_on": "2001-01-01"}, "expires_on"),
        ({"expires_on": "someday"}, "expires_on"),
        ({"kind": "ignore"}, "kind"),
    ],
)
def test_a_bad_risk_decision_is_reported_beside_its_field_and_saves_nothing(
    client, personas, scored, data, field
):
    client.force_login(personas.ava)
    response = decide(client, scored, **data)
    assert response.status_code == 400
    item = next(i for i in response.context["findings"] if i.rule_id == "KV-POOL-BELOW-CONTEXT")
    assert field in item.form.errors and item.open_form
    body = response.content.decode()
    assert "The risk decision was not recorded" in body
    assert f"#id_KV-POOL-BELOW-CONTEXT_{field}" in body
    assert not RiskDecision.objects.exists()


def test_a_decision_on_a_rule_that_did_not_fire_is_refused(client, personas, scored):
    client.force_login(personas.ava)
    response = decide(client, scored, rule="NO-SUCH-RULE")
    assert response.status_code == 400
    assert "no finding in the latest scoring run" in response.content.decode()
    assert not RiskDecision.objects.exists()


def test_readers_see_decisions_but_no_form(client, personas, scored):
    risk_decision_record(
        assessment=scored,
        rule_id="KV-POOL-BELOW-CONTEXT",
        kind="mitigation",
        justification="Gateway cap.",
        owner="CISO",
        expires_on=timezone.localdate() + dt.timedelta(days=30),
        member=member_of(personas.ava),
        channel="web",
    )
    client.force_login(personas.rex)
    page = client.get(findings_url(scored))
    assert all(item.form is None for item in page.context["findings"])
    assert "Gateway cap." in page.content.decode()


def findings_queries(client, assessment) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(findings_url(assessment))
    assert response.status_code == 200
    return len(captured.captured_queries)


def test_the_findings_view_runs_as_many_queries_for_50_assessments_as_for_5(
    client, personas, catalog, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    client.force_login(personas.ava)
    assessments = [make_scored(personas, make_vendor(personas, f"V{i}")) for i in range(5)]
    watched = assessments[0]
    five = findings_queries(client, watched)
    for i in range(5, 50):
        make_scored(personas, make_vendor(personas, f"V{i}"), log=i % 2 == 0)
    for rule in ("KV-POOL-BELOW-CONTEXT", "NO-CONFIG-AUDIT", "ENGINE-NOT-PINNED"):
        risk_decision_record(
            assessment=watched,
            rule_id=rule,
            kind="mitigation",
            justification="x",
            owner="y",
            expires_on=timezone.localdate() + dt.timedelta(days=9),
            member=member_of(personas.ava),
            channel="web",
        ) if watched.latest_run.findings.filter(rule_id=rule).exists() else None
    assert findings_queries(client, watched) == five
    # an assessment with fewer findings costs the same
    remediated = make_scored(
        personas, make_vendor(personas, "Remediated"), fixture="incident-2026-remediated", log=False
    )
    assert remediated.latest_run.findings.count() < watched.latest_run.findings.count()
    assert findings_queries(client, remediated) == five
