"""Fixtures of the probe's Django tests: an assessment of Acme and its probe set-up, built
through the real services."""

from __future__ import annotations

import datetime as dt
import re
import secrets

import pytest
from django.utils import timezone

from assessments.models import Channel
from assessments.services.answers import answers_save, assessment_create
from assessments.services.vendors import vendor_create
from probes.services.setup import probe_setup_save
from tests.personas import member_of
from tests.portal.conftest import make_assessment, use_answers

from .vendor import DECLARED_CONTEXT, MODEL


@pytest.fixture
def keys() -> dict[str, str]:
    """Fresh test-tenant keys, so that finding one anywhere means it leaked from this test."""
    return {
        "key_a": f"sk-tenant-a-{secrets.token_hex(16)}",
        "key_b": f"sk-tenant-b-{secrets.token_hex(16)}",
    }


QUESTIONNAIRE_V2 = "ai-inference-isolation@2"


@pytest.fixture
def assessment(catalog, personas):
    return make_assessment(personas.acme, personas.ava)


def make_v2_assessment(
    organization, actor, vendor_name: str = "Inferno AI", *, consent: str | None = "yes"
):
    """A questionnaire-v2 assessment with the buyer's answers and, unless `consent` is None,
    the vendor's answer to the probe's consent question (PRB-01), saved by `actor`."""
    vendor = vendor_create(
        organization=organization, actor=actor, channel=Channel.WEB, name=vendor_name
    )
    assessment = assessment_create(
        organization=organization,
        vendor=vendor,
        questionnaire_key=QUESTIONNAIRE_V2,
        actor=actor,
        channel=Channel.WEB,
        answers=use_answers(),
    )
    if consent is not None:
        answers_save(
            assessment=assessment,
            answers={"PRB-01": consent},
            actor=actor,
            member=member_of(actor),
            channel=Channel.WEB,
        )
    return assessment


def setup_fields(keys: dict[str, str], **overrides) -> dict:
    now = timezone.now()
    return {
        "base_url": "http://127.0.0.1:9",
        "model_name": MODEL,
        "declared_context": DECLARED_CONTEXT,
        **keys,
        "signer_name": "Wei Chan, CISO of Inferno AI",
        "spend_ceiling_tokens": 3_000_000,
        "window_starts_at": now - dt.timedelta(hours=1),
        "window_ends_at": now + dt.timedelta(days=7),
        "channel": Channel.WEB,
        **overrides,
    }


@pytest.fixture
def set_up_probe(personas, keys):
    """`set_up_probe(assessment, **fields)`: the vendor's set-up, entered by ava."""

    def make(assessment, **overrides):
        return probe_setup_save(
            assessment=assessment, actor=personas.ava, **setup_fields(keys, **overrides)
        )

    return make


def probed(assessment, actor, base_url: str, **options):
    """Set `assessment` up for a probe of `base_url` (entered by `actor` on the vendor's behalf,
    with fresh keys), then request and execute a run in this process (the service the Celery
    task calls): the finished run, its result attached as PRB-02 when the questionnaire asks.
    Callers raise PROBE_RATE_PER_KEY so that it takes a second or two."""
    from probes.services.runs import probe_run_execute, probe_run_request

    fresh = {
        "key_a": f"sk-tenant-a-{secrets.token_hex(16)}",
        "key_b": f"sk-tenant-b-{secrets.token_hex(16)}",
    }
    probe_setup_save(assessment=assessment, actor=actor, **setup_fields(fresh, base_url=base_url))
    run = probe_run_request(
        assessment=assessment,
        actor=actor,
        channel=Channel.WEB,
        samples=options.pop("samples", 5),
        prefix_tokens=options.pop("prefix_tokens", 1024),
        **options,
    )
    return probe_run_execute(probe_run_id=run.pk)


def rules_fired_by(outcomes: dict[str, str], ruleset: str = "incident-2026-kv@2") -> set[str]:
    """The rules of `ruleset` whose whole condition is one probe check's outcome
    (`probe_X == "outcome"`) and that these outcomes meet: read from the ruleset data itself,
    so a test never copies a rule's id next to its condition."""
    from scoring.models import Ruleset

    slug, version = ruleset.split("@")
    fired = set()
    for rule in Ruleset.objects.get(slug=slug, version=version).spec.rules:
        found = re.fullmatch(r'\s*probe_(\w+)\s*==\s*"(\w+)"\s*', rule.when)
        if found and outcomes.get(found.group(1)) == found.group(2):
            fired.add(rule.id)
    return fired
