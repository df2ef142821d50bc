"""Seeds the live server of the schemathesis run: two organizations with the same kinds of objects
(a vendor, a draft and a scored assessment with its scoring run and a report, a v2 draft with a
probe set up and a probe run, a rescore batch), and an API token of Acme's owner. Prints the
ids of both organizations, by the path parameter that names them, and the token as JSON: every
operation that takes an id reaches a real object of each organization.

Run as `python -m tests.contract.seed` with the server's environment (its own database), after
`migrate` and `load_catalog`; scoring runs inline here (CELERY_TASK_ALWAYS_EAGER=true).
"""

import json

import django

django.setup()

from accounts.services import api_token_create  # noqa: E402
from accounts.tenancy import org_context_of  # noqa: E402
from assessments import factories  # noqa: E402
from assessments.models import Channel  # noqa: E402
from assessments.services.answers import assessment_create  # noqa: E402
from assessments.services.vendors import vendor_create  # noqa: E402
from portfolio.services import rescore_batch_create  # noqa: E402
from probes.services.runs import probe_run_request  # noqa: E402
from probes.services.setup import probe_setup_save  # noqa: E402
from reports.services import report_request  # noqa: E402
from tests.conftest import QUESTIONNAIRE  # noqa: E402
from tests.personas import make_personas  # noqa: E402
from tests.probes.conftest import setup_fields  # noqa: E402


def seed_organization(organization, owner, author) -> dict[str, list[int]]:
    """The objects of `organization` (see the module's docstring), by path parameter. `author`
    creates and submits the scored assessment, so that the owner (the token's user) may review
    it under the four-eyes rule."""
    vendor = vendor_create(
        organization=organization, actor=owner, channel=Channel.API, name="Inferno AI"
    )
    draft = assessment_create(
        organization=organization,
        vendor=vendor,
        questionnaire_key=QUESTIONNAIRE,
        actor=owner,
        channel=Channel.API,
    )
    # The launch-day answers, submitted and scored, without evidence.
    scored = factories.incident_assessment(
        member=org_context_of(user=author, organization=organization),
        vendor=vendor,
        evidence=[],
        channel=Channel.API,
    )
    member = org_context_of(user=owner, organization=organization)
    report = report_request(assessment=scored, language="en", member=member, channel=Channel.API)
    batch = rescore_batch_create(
        member=member,
        ruleset_key="incident-2026-kv@2",
        channel=Channel.API,
        assessment_ids=[scored.pk],
    )
    # A v2 draft whose vendor set a probe up; the endpoint (the discard port) refuses the
    # connection, so the run ends failed at once: a probe run all the same.
    probed = factories.incident_assessment(
        member=member, vendor=vendor, answers_from=factories.LAUNCH_V2, submit=False
    )
    keys = {
        "key_a": f"sk-a-{organization.pk}-0123456789",
        "key_b": f"sk-b-{organization.pk}-0123456",
    }
    probe_setup_save(assessment=probed, actor=owner, **setup_fields(keys))
    probe_run = probe_run_request(assessment=probed, actor=owner, channel=Channel.API)
    return {
        "vendor_id": [vendor.pk],
        "assessment_id": [draft.pk, scored.pk, probed.pk],
        "run_id": [scored.latest_run_id],
        "report_id": [report.pk],
        "batch_id": [batch.pk],
        "probe_run_id": [probe_run.pk],
    }


personas = make_personas()
ours = seed_organization(personas.acme, personas.alice, author=personas.ava)
foreign = seed_organization(personas.other, personas.oscar, author=personas.oscar)
_token, key = api_token_create(user=personas.alice, organization=personas.acme, name="fuzzing")
print(json.dumps({"token": key, "ours": ours, "foreign": foreign}))
