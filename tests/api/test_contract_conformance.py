"""Conformance to the public contract (shared/spec/api.md, v2.md, probe.md): each test names
the statement of the contract it holds the implementation to."""

import csv
import io

import pytest

from tests.portfolio.conftest import V1, V2, scored_with

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


@pytest.fixture
def finished_batch(catalog, personas, token_client, settings, django_capture_on_commit_callbacks):
    """A rescore batch of Acme (one assessment scored with v1, rescored with v2), done."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    scored_with(
        V1,
        organization=personas.acme,
        actor=personas.ava,
        vendor_name="Inferno AI",
        fixture="incident-2026-launch",
    )
    client = token_client(personas.ava, personas.acme)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/api/v1/rescore-batches/", {"ruleset": V2}, format="json")
    assert response.status_code == 202
    return response.json()["id"]


@pytest.mark.parametrize("accept", ["text/csv", "text/csv, */*;q=0.1", "*/*"])
def test_the_changes_csv_is_served_to_a_client_that_asks_for_csv(
    finished_batch, personas, token_client, accept
):
    """api.md: `GET rescore-batches/{id}/changes.csv` is the same as CSV — also for a client
    that says it accepts CSV (the schema answers it as `text/csv`), as every other download
    of the API does (reports, findings and portfolio exports)."""
    client = token_client(personas.vic, personas.acme)
    response = client.get(
        f"/api/v1/rescore-batches/{finished_batch}/changes.csv", HTTP_ACCEPT=accept
    )
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert [row["after_ruleset"] for row in rows] == [V2]
