"""The site as a reader meets it: a world with something on every page (a scored and approved
assessment with a risk acceptance, a remediated one, a draft sent to its vendor with a draft
answer, an API token), and the address of every member page and every page of the vendor
portal. Used by the tests that walk every page: the zh-Hant completeness test, the content
security policy crawl, and the browser matrix (desktop and phone, both languages, axe-core).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from accounts.services import api_token_create
from assessments import factories
from assessments.models import Assessment, Channel
from assessments.services.drafts import drafts_save
from assessments.services.reviews import review_record, risk_decision_record
from assessments.services.vendor_links import vendor_link_issue
from tests.personas import Personas, member_of


@dataclass(frozen=True)
class World:
    scored: Assessment  # approved with conditions, a risk acceptance recorded, reached by a link
    remediated: Assessment
    draft: Assessment  # sent to its vendor, who left a draft answer
    token: str  # the draft's vendor link
    names: list[str]  # the names of this world (vendors, people, organizations, typed text)


def build_world(personas: Personas) -> World:
    """Built through the real services; scoring runs in the process (CELERY_TASK_ALWAYS_EAGER
    must be on)."""
    ava = member_of(personas.ava)
    scored = factories.incident_assessment(member=ava, through_link=True)
    risk_decision_record(
        assessment=scored,
        rule_id="KV-POOL-BELOW-CONTEXT",
        kind="acceptance",
        justification="Prompts capped at 200,000 tokens.",
        owner="Head of Procurement",
        expires_on=scored.latest_run.as_of.replace(year=scored.latest_run.as_of.year + 2),
        member=ava,
        channel=Channel.WEB,
    )
    review_record(
        assessment=scored,
        member=member_of(personas.rex),
        decision="approved_with_conditions",
        conditions="Short prompts only.",
        acknowledged_findings=factories.critical_rule_ids(scored),
        channel=Channel.WEB,
    )
    remediated = factories.incident_assessment(
        member=ava,
        vendor=factories.incident_vendor(member=ava, name="Remediated Inference Ltd"),
        answers_from=factories.REMEDIATED,
        evidence=factories.logs(factories.REMEDIATED_LOG),
    )
    draft = factories.incident_assessment(
        member=ava,
        vendor=factories.incident_vendor(member=ava, name="Draft Vendor Ltd"),
        submit=False,
    )
    link, token = vendor_link_issue(
        assessment=draft, contact_email="vendor@draft.test", member=ava, channel=Channel.WEB
    )
    drafts_save(assessment=draft, values={"CTX-01": "1M"}, vendor_link=link)
    api_token_create(user=personas.alice, organization=personas.acme, name="reports")
    names = [
        "Acme Procurement",
        "Cloud Inference Co",
        "Remediated Inference Ltd",
        "Draft Vendor Ltd",
        "Workers AI",
        "Head of Procurement",
        "Prompts capped at 200,000 tokens.",
        "Short prompts only.",
        "reports",
        *(user.email for user in personas.acme_members.values()),
        "kv-team@cloud-inference.test",
        "vendor@draft.test",
    ]
    return World(scored=scored, remediated=remediated, draft=draft, token=token, names=names)


def member_pages(world: World, personas: Personas) -> list[str]:
    """Every member page, as the owner reaches them (other roles get 403 on some)."""
    scored, draft = world.scored, world.draft
    slug = personas.acme.slug
    pages = [
        reverse("assessments:dashboard"),
        reverse("assessments:vendor_list"),
        reverse("assessments:vendor_create"),
        reverse("assessments:vendor_edit", args=[scored.vendor_id]),
        reverse("assessments:create"),
        reverse("assessments:compare")
        + f"?assessments={scored.pk}&assessments={world.remediated.pk}",
        reverse("reports:verify"),
        reverse("reports:portfolio_reports"),
        reverse("scoring:kvsize"),
        reverse("accounts:organizations"),
        reverse("accounts:tokens", args=[slug]),
        reverse("accounts:members", args=[slug]),
        reverse("accounts:branding", args=[slug]),
        reverse("assessments:client_copy", args=[slug]),
        reverse("accounts:two_factor"),
        reverse("assessments:link_revoke", args=[draft.vendor_links.get().pk]),  # a confirm step
        reverse("portfolio:rescore"),
        reverse("portfolio:policy"),
        reverse("portfolio:outbox"),
        reverse("webhooks:endpoints"),
        reverse("portfolio:workbench", args=[scored.latest_run.ruleset_id]),
        reverse("portfolio:workbench_impact", args=[scored.latest_run.ruleset_id]),
    ]
    for assessment in (scored, draft):
        pages += [
            reverse(f"assessments:{name}", args=[assessment.pk])
            for name in ("detail", "edit", "findings", "review")
        ]
        pages.append(reverse("reports:assessment_reports", args=[assessment.pk]))
        pages.append(reverse("spreadsheets:workbook", args=[assessment.pk]))
        pages.append(reverse("probes:assessment_probe", args=[assessment.pk]))
    return pages


def portal_pages(world: World) -> list[str]:
    """Every page of the draft's vendor portal: the landing page, each vendor section, the
    review, the workbook."""
    token = world.token
    spec = world.draft.questionnaire.spec
    pages = [
        reverse("portal:landing", args=[token]),
        reverse("portal:review", args=[token]),
        reverse("portal_workbook:page", args=[token]),
    ]
    pages += [
        reverse("portal:section", args=[token, s.code]) for s in spec.sections if s.vendor_facing
    ]
    return pages


def visitor_pages() -> list[str]:
    """The pages of someone not signed in: sign in, and asking for a password reset."""
    return [
        reverse("accounts:login"),
        reverse("accounts:password_reset"),
        reverse("accounts:password_reset_done"),
    ]


@dataclass(frozen=True)
class ProbeWorld:
    """Questionnaire v2 with the isolation probe: an assessment probed against a reference
    vendor (its result attached as PRB-02 and scored), and a draft whose vendor set a probe up
    through its link."""

    probed: Assessment
    draft: Assessment
    token: str  # the draft's vendor link
    names: list[str]


def build_probe_world(personas: Personas, base_url: str) -> ProbeWorld:
    """`base_url` is a running reference vendor's; scoring and the probe run in the process."""
    from probes.services.setup import probe_setup_save
    from tests.probes.conftest import probed, setup_fields

    ava = member_of(personas.ava)
    probed_v2 = factories.incident_assessment(
        member=ava,
        vendor=factories.incident_vendor(member=ava, name="Probed Inference Ltd"),
        answers_from=factories.LAUNCH_V2,
        evidence=factories.logs(factories.LAUNCH_LOG),
        submit=False,
    )
    probed(probed_v2, personas.ava, base_url)
    probed_v2 = factories.submit_and_score(probed_v2, actor=personas.ava, channel=Channel.WEB)
    draft = factories.incident_assessment(
        member=ava,
        vendor=factories.incident_vendor(member=ava, name="Consenting Vendor Ltd"),
        answers_from=factories.LAUNCH_V2,
        evidence=factories.logs(factories.LAUNCH_LOG),
        submit=False,
    )
    link, token = vendor_link_issue(
        assessment=draft, contact_email="vendor@consenting.test", member=ava, channel=Channel.WEB
    )
    probe_setup_save(
        assessment=draft,
        vendor_link=link,
        **setup_fields(
            {"key_a": "sk-zh-a-0123456789", "key_b": "sk-zh-b-0123456789"},
            channel=Channel.VENDOR_LINK,
        ),
    )
    names = [
        "Acme Procurement",
        "Probed Inference Ltd",
        "Consenting Vendor Ltd",
        "Wei Chan, CISO of Inferno AI",
        "Cloud Inference Co",
        *(user.email for user in personas.acme_members.values()),
        "kv-team@cloud-inference.test",
        "vendor@consenting.test",
    ]
    return ProbeWorld(probed=probed_v2, draft=draft, token=token, names=names)


def probe_pages(world: ProbeWorld) -> tuple[list[str], list[str]]:
    """The member pages of the probed assessment and of the consenting draft, and the draft's
    vendor portal (every section of v2 with the vendor's probe page)."""
    member = []
    for assessment in (world.probed, world.draft):
        member += [
            reverse(f"assessments:{name}", args=[assessment.pk])
            for name in ("detail", "findings", "review")
        ]
        member += [
            reverse("reports:assessment_reports", args=[assessment.pk]),
            reverse("probes:assessment_probe", args=[assessment.pk]),
        ]
    spec = world.draft.questionnaire.spec
    portal = [
        reverse("portal:section", args=[world.token, s.code])
        for s in spec.sections
        if s.vendor_facing
    ]
    portal += [
        reverse("portal:landing", args=[world.token]),
        reverse("probes:portal_setup", args=[world.token]),
    ]
    return member, portal
