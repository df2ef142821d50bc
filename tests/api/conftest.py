"""Fixtures of the REST API tests: personas, the catalogue, clients, and data built through the
real services."""

import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.services import api_token_create
from assessments.models import Channel
from assessments.services import (
    answers_save,
    assessment_create,
    assessment_submit,
    vendor_create,
)
from questionnaires.models import QuestionnaireVersion
from scoring.models import Framework, Ruleset
from tests.personas import Personas, make_personas

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
QUESTIONNAIRE = "ai-inference-isolation@1"


@pytest.fixture
def personas(db) -> Personas:
    return make_personas()


@pytest.fixture(scope="package")
def _catalog_once(django_db_setup, django_db_blocker):
    """`load_catalog`, run once for this package rather than once per test (it compiles and
    type-checks every rule). The rows are committed outside the tests' transactions, so they are
    deleted again when the package is done: other packages start from the database they expect.
    """
    with django_db_blocker.unblock():
        # Loaded already by someone else, who then cleans up.
        ours = not (QuestionnaireVersion.objects.exists() or Ruleset.objects.exists())
        if ours:
            call_command("load_catalog", stdout=io.StringIO())
    yield
    if ours:
        with django_db_blocker.unblock():
            Ruleset.objects.all().delete()
            QuestionnaireVersion.objects.all().delete()
            Framework.objects.all().delete()


@pytest.fixture
def catalog(_catalog_once, db):
    """The questionnaire, ruleset and framework catalogue, as `load_catalog` loads it."""


@pytest.fixture(autouse=True)
def private_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def inline_scoring(settings, django_capture_on_commit_callbacks):
    """`with inline_scoring(): ...` runs the scoring queued inside the block, in this process.

    Tests run inside a transaction that never commits, and the services queue scoring on
    commit: the block captures those callbacks and runs them (eagerly) when it ends. Only for
    these unit tests; the integration tests run a real worker.
    """
    settings.CELERY_TASK_ALWAYS_EAGER = True
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def client_as():
    """`client_as(user)`: an API client with a session of that user."""

    def make(user) -> APIClient:
        client = APIClient()
        client.force_login(user)
        return client

    return make


@pytest.fixture
def token_client():
    """`token_client(user, organization)`: an API client sending a personal token."""

    def make(user, organization) -> APIClient:
        _token, key = api_token_create(user=user, organization=organization, name="tests")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        return client

    return make


@pytest.fixture
def vendor(personas):
    return vendor_create(
        organization=personas.acme, actor=personas.alice, channel=Channel.WEB, name="Inferno AI"
    )


@pytest.fixture
def launch_file() -> dict:
    """The answer file of the launch-day configuration of the incident (complete)."""
    return json.loads((EXAMPLES / "incident-2026-launch.json").read_text())


@pytest.fixture
def assessment(catalog, personas, vendor):
    """A draft assessment of Acme, created by ava, with no answers yet."""
    return assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key=QUESTIONNAIRE,
        actor=personas.ava,
        channel=Channel.WEB,
    )


@pytest.fixture
def answered(assessment, launch_file, personas):
    """The draft assessment with every answer of the launch-day answer file."""
    answers_save(
        assessment=assessment,
        answers=launch_file["answers"],
        comments=launch_file["comments"],
        actor=personas.ava,
        channel=Channel.WEB,
    )
    return assessment


@pytest.fixture
def scored(answered, personas, inline_scoring):
    """The launch-day assessment, submitted by ava and scored inline."""
    with inline_scoring():
        assessment_submit(assessment=answered, actor=personas.ava, channel=Channel.WEB)
    answered.refresh_from_db()
    assert answered.status == "scored"
    return answered
