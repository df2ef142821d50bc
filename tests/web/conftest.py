"""Assessments at every stage for the member pages, built through the real services (the
personas, the catalogue and private media come from tests/conftest.py).

Scoring runs in this process (`scoring_run_execute`, what the Celery task calls), so the member
pages can be tested without a worker.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from assessments import factories
from assessments.models import Assessment, Channel
from assessments.services.answers import assessment_create
from assessments.services.vendors import vendor_create
from tests.personas import Personas, member_of

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "fixtures" / "logs"
QUESTIONNAIRE = "ai-inference-isolation@1"


def example(name: str = "incident-2026-launch") -> dict:
    return json.loads((ROOT / "examples" / f"{name}.json").read_text(encoding="utf-8"))


def use_answers(name: str = "incident-2026-launch") -> dict:
    return {k: v for k, v in example(name)["answers"].items() if k.startswith("USE-")}


def vendor_answers(name: str = "incident-2026-launch") -> dict:
    return {k: v for k, v in example(name)["answers"].items() if not k.startswith("USE-")}


def make_vendor(personas: Personas, name: str = "Cloud Inference Co", organization=None):
    return vendor_create(
        organization=organization or personas.acme,
        actor=personas.ava,
        channel=Channel.WEB,
        name=name,
        contact_email="kv-team@cloud-inference.test",
    )


def make_draft(personas: Personas, vendor=None, *, due_date=dt.date(2030, 9, 30)) -> Assessment:
    vendor = vendor or make_vendor(personas)
    return assessment_create(
        organization=vendor.organization,
        vendor=vendor,
        questionnaire_key=QUESTIONNAIRE,
        actor=personas.ava if vendor.organization == personas.acme else personas.oscar,
        channel=Channel.WEB,
        due_date=due_date,
        answers=use_answers(),
    )


def make_scored(
    personas: Personas, vendor=None, *, fixture: str = "incident-2026-launch", log: bool = True
) -> Assessment:
    """An assessment the vendor answered through a link, submitted and scored."""
    vendor = vendor or make_vendor(personas)
    creator = personas.ava if vendor.organization == personas.acme else personas.oscar
    return factories.incident_assessment(
        member=member_of(creator, vendor.organization),
        vendor=vendor,
        answers_from=fixture,
        evidence=factories.logs(factories.LAUNCH_LOG) if log else (),
        through_link=True,
        due_date=dt.date(2030, 9, 30),
    )


@pytest.fixture
def vendor(catalog, personas):
    return make_vendor(personas)


@pytest.fixture
def draft(catalog, personas, vendor):
    return make_draft(personas, vendor)


@pytest.fixture
def scored(catalog, personas, vendor, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    return make_scored(personas, vendor)


def login(client, user):
    client.force_login(user)
    return client
