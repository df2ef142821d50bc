"""The permission matrix: every URL pattern of the project, every persona.

`test_every_url_pattern_is_in_the_matrix` walks the URL resolver, so a new page or API route
fails the suite until someone states here who may use it. Then each (pattern, persona) pair is
requested for real: owner, assessor, reviewer and viewer of Acme, the owner of another
organization (an outsider: Acme's objects are 404 to him, everywhere), a vendor link, and an
anonymous visitor.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from PIL import Image

from accounts.models import ApiToken, Membership, Organization, OrganizationKind
from accounts.services import (
    api_token_create,
    membership_add,
    organization_create,
    organization_update_branding,
)
from accounts.tenancy import OrgContext
from assessments.models import Channel
from assessments.services.answers import assessment_create
from assessments.services.clients import client_open
from assessments.services.evidence import evidence_add
from assessments.services.scoring_runs import scoring_run_execute
from assessments.services.submission import assessment_submit
from assessments.services.threads import thread_ask
from assessments.services.vendor_links import vendor_link_issue
from assessments.services.vendors import vendor_create
from core.outbound import parse_networks
from notifications.models import Notification
from notifications.services import notify
from portfolio.services import rescore_batch_create
from probes.services.runs import probe_run_request
from probes.services.setup import probe_setup_save
from reports.services import portfolio_report_request, report_request
from scoring.models import RulesetTestCase
from scoring.services import (
    catalogue_publish,
    catalogue_share,
    catalogue_upload,
    ruleset_test_case_save,
)
from tests.catalogues.conftest import EXAMPLE as CATALOGUE_EXAMPLE
from tests.conftest import LOGS, LOOPBACK, QUESTIONNAIRE, launch_answer_file
from tests.personas import make_personas, member_of
from tests.probes.conftest import QUESTIONNAIRE_V2, setup_fields
from tests.probes.vendor import closed_loopback_port
from webhooks.services import endpoint_create

# The question of Other Org's thread (Acme's threads are about KV-01).
OTHER_THREAD_CODE = "KV-02"
PERSONAS = ("owner", "assessor", "reviewer", "viewer", "outsider", "anonymous")
ACME_ROLES = ("owner", "assessor", "reviewer", "viewer")
LOGIN_REDIRECT = 302
OK = {200}
WRITE_DONE = {200, 201, 202, 204, 302}  # allowed: done, or bounced back with a message
WRITE_REFUSED_INPUT = {400, 409, 415}  # allowed, but this empty request is not acceptable


@dataclass(frozen=True)
class Rule:
    """Who may use one URL pattern, and how to call it."""

    method: str = "GET"
    kind: str = "web"  # web | api | portal | public
    # The Acme roles allowed; the others get 403. `None`: every member (the page is not
    # about a role-restricted action).
    roles: tuple[str, ...] | None = None
    # Whether the URL names an object of Acme (then the outsider gets 404).
    acme_object: bool = True
    # Statuses that count as "allowed" for this URL.
    allowed: frozenset[int] = field(
        default_factory=lambda: frozenset(WRITE_DONE | WRITE_REFUSED_INPUT | OK)
    )
    # Acme roles that see 404 instead of 403 (objects that are personal, like another's token).
    hidden_from: tuple[str, ...] = ()
    # The form or JSON body to send, built from the world (default: an empty one).
    data: Callable[[World], dict] | None = None


R = Rule
MATRIX: dict[str, Rule] = {
    # member web pages
    "assessments:dashboard": R(acme_object=False),
    "assessments:detail": R(),
    "assessments:evidence_download": R(),
    "assessments:invite": R("POST", roles=("owner", "assessor")),
    "assessments:rescore": R("POST", roles=("owner", "assessor")),
    "assessments:link_revoke": R("POST", roles=("owner", "assessor")),
    "assessments:link_reinvite": R("POST", roles=("owner", "assessor")),
    "accounts:set_language": R("POST", kind="public"),
    "assessments:vendor_list": R(acme_object=False),
    "assessments:vendor_create": R(roles=("owner", "assessor"), acme_object=False),
    "assessments:vendor_edit": R(roles=("owner", "assessor")),
    "assessments:create": R(roles=("owner", "assessor"), acme_object=False),
    "assessments:compare": R(acme_object=False),
    "scoring:kvsize": R(acme_object=False),
    "assessments:edit": R(roles=("owner", "assessor")),
    "assessments:edit_autosave": R("POST", roles=("owner", "assessor")),
    "assessments:progress": R(),
    "assessments:findings": R(),
    "assessments:risk_decision": R("POST", roles=("owner", "assessor")),
    "assessments:review": R("POST", roles=("owner", "reviewer")),
    "assessments:thread": R("POST", roles=("owner", "assessor")),
    "assessments:thread_status": R("POST", roles=("owner", "assessor")),
    # consultancies (Acme is one in this world): its clients, copying, a client ending access
    "assessments:clients": R(),
    "assessments:client_copy": R(roles=("owner",)),
    "assessments:client_engagement_end": R("POST", roles=("owner",)),
    # accounts
    "accounts:login": R(kind="public"),
    "accounts:logout": R("POST", kind="public"),
    "accounts:password_reset": R(kind="public"),
    "accounts:password_reset_done": R(kind="public"),
    "accounts:password_reset_confirm": R(kind="public"),
    "accounts:invitation_accept": R(kind="public"),
    "accounts:password_set_done": R(kind="public"),
    "accounts:organizations": R(acme_object=False),
    # Other Org's invitation to Vic: only Vic answers it; to anyone else it does not exist.
    "accounts:invitation_respond": R(
        "POST", roles=("viewer",), hidden_from=("owner", "assessor", "reviewer")
    ),
    "accounts:switch_organization": R(
        "POST", data=lambda world: {"organization_id": world.personas.acme.pk}
    ),
    "accounts:current_page": R(acme_object=False),
    "accounts:tokens": R(),
    "accounts:token_revoke": R(
        "POST", roles=("owner",), hidden_from=("assessor", "reviewer", "viewer")
    ),
    "accounts:members": R(roles=("owner",)),
    "accounts:member_change_role": R("POST", roles=("owner",)),
    "accounts:member_remove": R("POST", roles=("owner",)),
    "accounts:branding": R(roles=("owner",)),
    "accounts:logo": R(),
    "accounts:two_factor": R(acme_object=False),
    "accounts:two_factor_verify": R(acme_object=False),
    "accounts:two_factor_disable": R(acme_object=False),
    "accounts:organization_two_factor": R("POST", roles=("owner",)),
    # for load balancers: no sign-in; 503 while a part (here: the worker) is missing
    "healthz": R(kind="public", allowed=frozenset({200, 503})),
    "set_language": R("POST", kind="public"),
    # REST API
    "api:questionnaire-list": R(kind="api", acme_object=False),
    "api:questionnaire-detail": R(kind="api", acme_object=False),
    "api:vendor-list": R(kind="api", acme_object=False),
    "api:vendor-detail": R(kind="api"),
    "api:assessment-list": R(kind="api", acme_object=False),
    "api:assessment-detail": R(kind="api"),
    "api:assessment-answers": R("PATCH", kind="api", roles=("owner", "assessor")),
    "api:assessment-evidence": R("POST", kind="api", roles=("owner", "assessor")),
    "api:assessment-submit": R("POST", kind="api", roles=("owner", "assessor")),
    "api:assessment-rescore": R("POST", kind="api", roles=("owner", "assessor")),
    "api:assessment-run": R(kind="api"),
    "api:assessment-review": R("POST", kind="api", roles=("owner", "reviewer")),
    "api:assessment-audit": R(kind="api"),
    "api:schema": R(kind="public"),  # the API's documentation is public; its data is not
    "api:docs": R(kind="public"),
    # reports
    "reports:assessment_reports": R(),
    "reports:verify": R(acme_object=False),
    "reports:status": R(),
    "reports:download": R(),
    "reports:portfolio_reports": R(acme_object=False),
    "reports:portfolio_report_status": R(),
    "reports:portfolio_report_download": R(),
    # a consultancy's overview across its clients: every member of Acme (a consultancy in this
    # world) reads it; Other Org is no consultancy, so its owner (the outsider) finds none (404)
    "reports:client_overview": R(),
    "api:assessment-reports": R("POST", kind="api", roles=("owner", "assessor", "reviewer")),
    "api:report-detail": R(kind="api"),
    "api:report-download": R(kind="api"),
    "api:portfolio-reports": R("POST", kind="api", acme_object=False),
    "api:portfolio-report-detail": R(kind="api"),
    "api:portfolio-report-download": R(kind="api"),
    # the isolation probe
    "api:assessment-probe": R(kind="api"),
    "api:assessment-probe-runs": R("POST", kind="api", roles=("owner", "assessor")),
    "api:probe-run-detail": R(kind="api"),
    # the portfolio
    "portfolio:rescore": R(acme_object=False),
    "portfolio:batch": R(),
    "portfolio:batch_changes_csv": R(),
    "portfolio:policy": R(roles=("owner",), acme_object=False),
    "portfolio:reassess": R("POST", roles=("owner", "assessor")),
    "portfolio:outbox": R(roles=("owner",), acme_object=False),
    # the rule workbench of Acme's own ruleset, and Acme's test case on it
    "portfolio:workbench": R(),
    "portfolio:workbench_impact": R(),
    "portfolio:workbench_case_save": R("POST", roles=("owner", "assessor")),
    "portfolio:workbench_case_delete": R(
        "POST", roles=("owner", "assessor"), data=lambda world: acme_test_case(world)
    ),
    # the organization's own questionnaires (catalogues): the owner's
    "portfolio:catalogues": R(roles=("owner",), acme_object=False),
    "portfolio:catalogue": R(roles=("owner",)),
    "portfolio:catalogue_publish": R("POST", roles=("owner",)),
    "portfolio:catalogue_delete": R("POST", roles=("owner",)),
    "portfolio:catalogue_share": R("POST", roles=("owner",)),
    "portfolio:catalogue_share_revoke": R("POST", roles=("owner",)),
    # notifications: every member's own
    "notifications:list": R(acme_object=False),
    "notifications:read_all": R("POST", acme_object=False),
    "notifications:settings": R(acme_object=False),
    "notifications:open": R(roles=("assessor",), hidden_from=("owner", "reviewer", "viewer")),
    # webhooks: the owner's
    "webhooks:endpoints": R(roles=("owner",), acme_object=False),
    "webhooks:endpoint": R(roles=("owner",)),
    "webhooks:endpoint_test": R("POST", roles=("owner",)),
    "webhooks:endpoint_remove": R("POST", roles=("owner",)),
    # single sign-on: the owner's settings; the sign-in itself is public
    "sso:settings": R(roles=("owner",), acme_object=False),
    "sso:start": R(kind="public"),
    "sso:callback": R(kind="public"),
    "api:rescore-batch-list": R("POST", kind="api", roles=("owner", "assessor"), acme_object=False),
    "api:rescore-batch-detail": R(kind="api"),
    "api:rescore-batch-changes": R(kind="api"),
    # spreadsheets: the questionnaire workbook (answering: owner, assessor) and the exports
    "spreadsheets:workbook": R(roles=("owner", "assessor")),
    "spreadsheets:workbook_download": R(roles=("owner", "assessor")),
    "spreadsheets:findings_export": R(),
    "spreadsheets:portfolio_export": R(acme_object=False),
    # a questionnaire imported from a spreadsheet: whoever writes the organization's catalogues
    # (manage_catalogues); an upload is kept for its member only: another's address bounces to
    # the upload page
    "spreadsheets:catalogue_import": R(roles=("owner",), acme_object=False),
    "spreadsheets:catalogue_import_mapping": R(roles=("owner",), acme_object=False),
    "api:findings-export": R(kind="api"),
    "api:portfolio-export": R(kind="api", acme_object=False),
    "portal_workbook:page": R(kind="portal"),
    "portal_workbook:download": R(kind="portal"),
    "probes:assessment_probe": R(),
    "probes:run_start": R("POST", roles=("owner", "assessor")),
    "probes:run_progress": R(),
    "probes:portal_setup": R(kind="portal"),
    # vendor portal (a private link; members' sessions play no part)
    "portal:landing": R(kind="portal"),
    "portal:section": R(kind="portal"),
    "portal:autosave": R("POST", kind="portal"),
    "portal:review": R(kind="portal"),
    "portal:thanks": R(kind="portal"),
    "portal:brand_stylesheet": R(kind="portal"),
    "portal:logo": R(kind="portal"),
    "portal:language": R("POST", kind="portal"),
    "portal:configuration_change": R("POST", kind="portal"),
    "portal:thread": R(kind="portal"),
}


def acme_test_case(world: World) -> dict:
    """Acme's test case, as the world made it (again, when an earlier persona deleted it)."""
    RulesetTestCase.objects.get_or_create(
        pk=world.kwargs["case_id"],
        defaults={
            "organization": world.personas.acme,
            "ruleset_id": world.kwargs["ruleset_id"],
            "name": "Matrix",
            "risk_score": 0,
            "risk_tier": "low",
        },
    )
    return {}


# Patterns without a name that only answer 404 (the API's catch-all for unknown addresses).
UNNAMED_CATCH_ALLS = {"api/^"}


def url_patterns(patterns=None, prefix: str = "", namespace: str = ""):
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        if isinstance(pattern, URLResolver):
            inner = (
                f"{namespace}:{pattern.namespace}"
                if namespace and pattern.namespace
                else (pattern.namespace or namespace)
            )
            yield from url_patterns(pattern.url_patterns, prefix + str(pattern.pattern), inner)
        elif isinstance(pattern, URLPattern):
            name = f"{namespace}:{pattern.name}" if namespace and pattern.name else pattern.name
            yield prefix + str(pattern.pattern), name


def test_every_url_pattern_is_in_the_matrix():
    named = {name for route, name in url_patterns() if name}
    unnamed = {route for route, name in url_patterns() if not name}
    assert named - set(MATRIX) == set(), "add the new URL patterns to MATRIX"
    assert set(MATRIX) - named == set(), "remove patterns that no longer exist from MATRIX"
    assert unnamed == UNNAMED_CATCH_ALLS


@dataclass
class World:
    personas: object
    assessment: object
    other_assessment: object
    token: str
    other_token: str
    kwargs: dict
    users: dict


@pytest.fixture(scope="module")
def world_media(tmp_path_factory):
    return tmp_path_factory.mktemp("matrix-media")


@pytest.fixture(autouse=True)
def private_media(settings, world_media):
    """The world's evidence files live in one media folder for the whole module."""
    settings.MEDIA_ROOT = world_media


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, world_media):
    """Acme with a scored assessment, evidence, a vendor link, a token and a logo; Other Org with
    the same. Built once (through the services), removed when the module is done."""
    with (
        django_db_blocker.unblock(),
        override_settings(CELERY_TASK_ALWAYS_EAGER=True, MEDIA_ROOT=world_media),
    ):
        call_command("flush", interactive=False, verbosity=0)
        call_command("load_catalog", stdout=io.StringIO())
        personas = make_personas()
        acme, other = personas.acme, personas.other
        # Acme is a consultancy: its clients' pages are walked too.
        Organization.objects.filter(pk=acme.pk).update(kind=OrganizationKind.CONSULTANCY)
        answers = launch_answer_file()["answers"]

        def scored_assessment(organization, actor, thread_code):
            vendor = vendor_create(
                organization=organization, actor=actor, channel=Channel.WEB, name="Inferno AI"
            )
            assessment = assessment_create(
                organization=organization,
                vendor=vendor,
                questionnaire_key=QUESTIONNAIRE,
                actor=actor,
                channel=Channel.WEB,
                answers=answers,
            )
            upload = SimpleUploadedFile(
                "prefill.log", (LOGS / "sglang-prefill-glm53-launch.log").read_bytes()
            )
            evidence = evidence_add(
                assessment=assessment,
                question_code="CTX-08",
                upload=upload,
                actor=actor,
                channel=Channel.WEB,
            )
            link, token = vendor_link_issue(
                assessment=assessment,
                contact_email="sec@vendor.test",
                member=member_of(actor),
                channel=Channel.WEB,
            )
            run = assessment_submit(assessment=assessment, actor=actor, channel=Channel.WEB)
            scoring_run_execute(run_id=run.pk)
            # A second, still editable assessment for the portal's evidence pages; it answers
            # questionnaire v2 and consents to the probe (PRB-01), so the probe page opens.
            editable = assessment_create(
                organization=organization,
                vendor=vendor,
                questionnaire_key=QUESTIONNAIRE_V2,
                actor=actor,
                channel=Channel.WEB,
                answers={**answers, "PRB-01": "yes"},
            )
            evidence_add(
                assessment=editable,
                question_code="CTX-08",
                upload=SimpleUploadedFile("p.log", b"not a log"),
                actor=actor,
                channel=Channel.WEB,
            )
            _link, editable_token = vendor_link_issue(
                assessment=editable,
                contact_email="sec@vendor.test",
                member=member_of(actor),
                channel=Channel.WEB,
            )
            # A clarification thread on each, about `thread_code`.
            for asked in (assessment, editable):
                thread_ask(
                    assessment=asked,
                    member=member_of(actor),
                    question_code=thread_code,
                    body="Which memory fraction?",
                    channel=Channel.WEB,
                )
            return assessment, evidence, link, run, vendor, editable, editable_token

        acme_assessment, evidence, link, run, vendor, editable, token = scored_assessment(
            acme, personas.ava, "KV-01"
        )
        other_assessment, *_rest, other_token = scored_assessment(
            other, personas.oscar, OTHER_THREAD_CODE
        )
        png = io.BytesIO()
        Image.new("RGB", (4, 4), "navy").save(png, "PNG")
        organization_update_branding(
            organization=acme,
            actor=personas.alice,
            report_display_name="Acme",
            brand_colour="#123456",
            logo=png.getvalue(),
        )
        api_token_create(user=personas.alice, organization=acme, name="alice's")
        acme_assessment.refresh_from_db()  # scored since it was created
        report = report_request(
            assessment=acme_assessment,
            language="en",
            member=member_of(personas.ava),
            channel=Channel.WEB,
        )
        portfolio_report = portfolio_report_request(
            member=member_of(personas.vic), language="en", channel=Channel.WEB
        )
        # A probe set up by the vendor and run once (its endpoint is unreachable: it fails
        # at once and its keys are destroyed). Loopback is allowed here, not only where the
        # environment allows it (scripts/test.sh): the autouse `probe_reaches_loopback` is
        # per test, set up after this module's world.
        with override_settings(PROBE_ALLOWED_NETWORKS=parse_networks([LOOPBACK])):
            probe_setup_save(
                assessment=acme_assessment,
                actor=personas.ava,
                **setup_fields(
                    {"key_a": "sk-matrix-a", "key_b": "sk-matrix-b"},
                    base_url=f"http://127.0.0.1:{closed_loopback_port()}",
                ),
            )
            probe_run = probe_run_request(
                assessment=acme_assessment, actor=personas.ava, channel=Channel.WEB
            )
        # A rescore batch of Acme (with v1: its assessment is scored with the newest, v2).
        batch = rescore_batch_create(
            member=OrgContext(
                user=personas.ava,
                organization=acme,
                membership=Membership.objects.get(user=personas.ava, organization=acme),
            ),
            ruleset_key="incident-2026-kv@1",
            assessment_ids=[acme_assessment.pk],
            channel=Channel.WEB,
        )
        # A webhook endpoint of Acme (at a closed loopback port: a test event fails at once).
        with override_settings(WEBHOOK_ALLOWED_NETWORKS=["127.0.0.0/8"]):
            webhook, _secret = endpoint_create(
                organization=acme,
                actor=personas.alice,
                url=f"http://127.0.0.1:{closed_loopback_port()}/hook",
                events=["assessment.scored"],
            )
        # A notification of Ava's (the others, and the outsider, cannot open it).
        notify(
            organization=acme,
            event="submitted",
            key="submitted:matrix",
            recipients=[personas.ava],
            words={"vendor": "Inferno AI"},
            path=f"/assessments/{acme_assessment.pk}/",
        )
        # Acme's own questionnaire, published and shared with a client workspace of Alice's.
        alice = member_of(personas.alice, acme)
        catalogue = catalogue_upload(
            context=alice, data=CATALOGUE_EXAMPLE.read_bytes(), source_name="dd.yaml"
        )
        catalogue_publish(context=alice, ruleset=catalogue.ruleset)
        client_workspace = organization_create(name="Client Co", owner_email=personas.alice.email)
        share = catalogue_share(context=alice, slug="vendor-dd", organization=client_workspace)
        invitation = membership_add(
            organization=other, email=personas.vic.email, role="viewer", actor=personas.oscar
        )
        # A test case of Acme's on its own ruleset, in the rule workbench.
        test_case = ruleset_test_case_save(
            member=member_of(personas.ava),
            ruleset=catalogue.ruleset,
            name="Abroad",
            answers={"GOV-02": "abroad"},
            as_of=acme.local_date(),
        )
        kwargs = {
            "case_id": test_case.pk,
            "invitation_id": invitation.pk,
            "answer": "accept",
            "notification_id": Notification.objects.get(recipient=personas.ava).pk,
            "endpoint_id": webhook.pk,
            "batch_id": batch.pk,
            "ruleset_id": catalogue.ruleset.pk,
            "share_id": share.pk,
            "assessment_id": acme_assessment.pk,
            "probe_run_id": probe_run.pk,
            "evidence_id": evidence.pk,
            "link_id": link.pk,
            "run_id": run.pk,
            "vendor_id": vendor.pk,
            "organization_slug": acme.slug,
            "token_id": ApiToken.objects.get(user=personas.alice).pk,
            "membership_id": Membership.objects.get(user=personas.vic, organization=acme).pk,
            "page": "tokens",
            "slug": "ai-inference-isolation",
            "section_code": "PRF",
            "question_code": "KV-01",
            "rule_id": "KV-POOL-BELOW-CONTEXT",
            "report_id": report.pk,
            "portfolio_report_id": portfolio_report.pk,
            "token": token,
            "uidb64": "MQ",  # a password link that is not valid: the page says so
            "language": "en",
            "file_format": "csv",
        }
        users = {
            "owner": personas.alice,
            "assessor": personas.ava,
            "reviewer": personas.rex,
            "viewer": personas.vic,
            "outsider": personas.oscar,
            "anonymous": None,
        }
        yield World(
            personas,
            acme_assessment,
            other_assessment,
            token,
            other_token,
            kwargs,
            users,
        )
        call_command("flush", interactive=False, verbosity=0)


def url_for(name: str, world: World) -> str:
    kwargs = dict(world.kwargs)
    needed = _kwargs_of(name)
    missing = [key for key in needed if key not in kwargs]
    assert not missing, f"the matrix has no value for URL argument(s) {missing} of {name}"
    return reverse(name, kwargs={key: kwargs[key] for key in needed})


def _kwargs_of(name: str) -> list[str]:
    for route, pattern_name in url_patterns():
        if pattern_name == name:
            return re.findall(r"<(?:\w+:)?(\w+)>", route)
    raise KeyError(name)


def request(client: Client, name: str, url: str, world: World):
    rule = MATRIX[name]
    data = rule.data(world) if rule.data else {}
    if rule.method == "GET":
        return client.get(url)
    if rule.kind == "api" and rule.method != "POST":
        return client.generic(
            rule.method, url, data=json.dumps(data), content_type="application/json"
        )
    return client.post(url, data)


CASES = [
    (name, persona)
    for name, rule in MATRIX.items()
    if rule.kind != "portal"
    for persona in PERSONAS
]


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "persona"), CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_each_persona_gets_what_it_should(world, name, persona, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    rule = MATRIX[name]
    client = Client()
    user = world.users[persona]
    if user is not None:
        client.force_login(user)
    url = url_for(name, world)
    response = request(client, name, url, world)
    status = response.status_code
    assert status < 500 or status in rule.allowed, f"{name} gave {status} to {persona}"
    if rule.kind == "public":
        return
    if persona == "anonymous":
        if rule.kind == "api":
            assert status in {401, 403}, f"{name}: anonymous got {status}"
        else:
            assert status == LOGIN_REDIRECT and "/accounts/login/" in response["Location"], name
        return
    if persona == "outsider":
        if rule.acme_object:
            assert status == 404, f"{name}: the outsider got {status} for Acme's object"
        else:
            assert status in rule.allowed | {403}, f"{name}: outsider got {status}"
        return
    allowed_roles = rule.roles if rule.roles is not None else ACME_ROLES
    if persona in allowed_roles:
        assert status in rule.allowed, f"{name}: {persona} is allowed but got {status}"
    elif persona in rule.hidden_from:
        assert status == 404, f"{name}: {persona} should not see it ({status})"
    else:
        assert status == 403, f"{name}: {persona} should be refused with 403, got {status}"


@pytest.mark.django_db
def test_api_tokens_act_only_within_their_organization(world):
    _token, key = api_token_create(
        user=world.personas.oscar, organization=world.personas.other, name="oscar's"
    )
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    for name in ("api:assessment-detail", "api:assessment-audit", "api:vendor-detail"):
        assert client.get(url_for(name, world)).status_code == 404, name
    assert (
        client.get(reverse("api:assessment-detail", args=[world.other_assessment.pk])).status_code
        == 200
    )


@pytest.mark.django_db
def test_a_consultancys_member_reaches_only_the_clients_they_belong_to(world):
    """Acme (a consultancy) opens a client: Alice, who opened it, reaches every page of the
    client; Ava, Acme's assessor who is no member of the client, gets a 404 on each of them."""
    client_org = client_open(
        member=member_of(world.personas.alice, world.personas.acme),
        name="Matrix Client",
        channel=Channel.WEB,
    )
    slug_pages = [
        name
        for name, rule in MATRIX.items()
        if rule.kind == "web" and "organization_slug" in _kwargs_of(name)
    ]
    assert "assessments:client_copy" in slug_pages
    for persona in ("assessor", "owner"):
        browser = Client()
        browser.force_login(world.users[persona])
        for name in slug_pages:
            needed = _kwargs_of(name)
            if persona == "owner" and (
                set(needed) - {"organization_slug"} or name == "accounts:logo"
            ):
                continue  # Acme's objects (a member, a token) are not the client's; no logo
            kwargs = {**world.kwargs, "organization_slug": client_org.slug}
            url = reverse(name, kwargs={key: kwargs[key] for key in needed})
            status = request(browser, name, url, world).status_code
            if persona == "assessor":
                assert status == 404, f"{name}: Acme's assessor got {status} in the client"
            else:
                assert status != 404 and status < 500, f"{name}: its owner got {status}"
        linked = browser.get(f"/?org={client_org.slug}").status_code
        assert linked == (404 if persona == "assessor" else 200)


@pytest.mark.django_db
def test_another_organizations_questionnaire_is_not_found(world):
    """Acme's own questionnaire: 200 to Acme's members, 404 to the outsider, through the API
    (the new assessment form and the services ask the same selector:
    tests/catalogues/test_scoping.py)."""
    url = reverse("api:questionnaire-detail", kwargs={"slug": "vendor-dd"})
    for persona, status in (("viewer", 200), ("outsider", 404)):
        client = Client()
        client.force_login(world.users[persona])
        assert client.get(url).status_code == status, persona


PORTAL = [name for name, rule in MATRIX.items() if rule.kind == "portal"]


@pytest.mark.django_db
@pytest.mark.parametrize("name", PORTAL)
def test_a_vendor_link_reaches_its_own_assessment_only(world, name):
    client = Client()
    url = url_for(name, world)
    response = request(client, name, url, world)
    assert response.status_code < 500 and response.status_code not in {401, 403, 404}, (
        f"{name}: the link's own page gave {response.status_code}"
    )
    # The same page with the link of another organization's assessment: the other assessment's
    # objects (evidence ids) are unknown to it.
    if "evidence_id" in _kwargs_of(name):
        other = url.replace(world.token, world.other_token)
        assert request(Client(), name, other, world).status_code == 404
    # A question whose thread is another assessment's: not found through this link.
    if "question_code" in _kwargs_of(name):
        other = url.replace("/KV-01/", f"/{OTHER_THREAD_CODE}/")
        assert other != url
        assert request(Client(), name, other, world).status_code == 404
    # A made-up token reaches nothing.
    forged = url.replace(world.token, "x" * len(world.token))
    assert request(Client(), name, forged, world).status_code == 404


@pytest.mark.django_db
def test_the_vendor_link_never_reaches_the_buyers_section(world):
    url = reverse("portal:section", args=[world.token, "USE"])
    assert Client().get(url).status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize("persona", ACME_ROLES + ("outsider",))
def test_a_member_session_does_not_open_the_vendor_portal_without_the_token(world, persona):
    client = Client()
    client.force_login(world.users[persona])
    forged = reverse("portal:landing", args=["not-a-token"])
    assert client.get(forged).status_code == 404
