"""Seeds the live server of the schemathesis run: two organizations with a vendor, a draft and a
scored assessment each, and an API token of Acme's owner. Prints what the run needs as JSON.

Run as `python -m tests.contract.seed` with the server's environment (its own database), after
`migrate` and `load_catalog`; scoring runs inline here (CELERY_TASK_ALWAYS_EAGER=true).
"""

import json

import django

django.setup()

from accounts.services import api_token_create  # noqa: E402
from assessments.models import Channel  # noqa: E402
from assessments.services import (  # noqa: E402
    answers_save,
    assessment_create,
    assessment_submit,
    vendor_create,
)
from tests.conftest import QUESTIONNAIRE, launch_answer_file  # noqa: E402
from tests.personas import make_personas  # noqa: E402


def seed_organization(organization, owner) -> dict[str, list[int]]:
    """A vendor, a draft and a scored assessment of `organization`; their ids."""
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
    scored = assessment_create(
        organization=organization,
        vendor=vendor,
        questionnaire_key=QUESTIONNAIRE,
        actor=owner,
        channel=Channel.API,
    )
    answers = launch_answer_file()
    answers_save(
        assessment=scored,
        answers=answers["answers"],
        comments=answers["comments"],
        actor=owner,
        channel=Channel.API,
    )
    assessment_submit(assessment=scored, actor=owner, channel=Channel.API)
    return {"vendor_id": [vendor.pk], "assessment_id": [draft.pk, scored.pk]}


personas = make_personas()
ours = seed_organization(personas.acme, personas.alice)
foreign = seed_organization(personas.other, personas.oscar)
_token, key = api_token_create(user=personas.alice, organization=personas.acme, name="fuzzing")
print(json.dumps({"token": key, "ours": ours, "foreign": foreign}))
