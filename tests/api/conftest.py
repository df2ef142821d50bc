"""Fixtures of the REST API tests: personas, the catalogue, clients, and data built through the
real services."""

import json
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from accounts.services import api_token_create
from assessments.models import Channel
from assessments.services.answers import answers_save, assessment_create
from assessments.services.submission import assessment_submit
from assessments.services.vendors import vendor_create

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
QUESTIONNAIRE = "ai-inference-isolation@1"


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
