"""What the integration tests do through the REST API, as an outside client would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rest_framework.test import APIClient

from scoring.registry import builtin_catalog

from .worker import Worker, eventually

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_ANSWERS = ROOT / "examples" / "incident-2026-launch.json"
LAUNCH_LOG = ROOT / "tests" / "fixtures" / "logs" / "sglang-prefill-glm53-launch.log"
QUESTIONNAIRE = "ai-inference-isolation@1"
RULESET = "incident-2026-kv@3"  # the newest ruleset that scores v1 answers (the one choice)
LOG_QUESTION = "CTX-08"
SCORING_TIMEOUT = 60


def launch_answers() -> dict[str, Any]:
    return json.loads(LAUNCH_ANSWERS.read_text(encoding="utf-8"))["answers"]


def answered_assessment(api: APIClient, *, vendor_name: str = "Workers AI") -> dict[str, Any]:
    """An assessment of the incident vendor at launch: every answer, and the prefill engine's
    startup log as evidence. Returns the evidence upload's response body, with
    `assessment` (the assessment's id) added."""
    document = json.loads(LAUNCH_ANSWERS.read_text(encoding="utf-8"))
    vendor = api.post("/api/v1/vendors/", {"name": vendor_name}, format="json")
    assert vendor.status_code == 201, vendor.content
    created = api.post(
        "/api/v1/assessments/",
        {"vendor": vendor.json()["id"], "questionnaire": QUESTIONNAIRE},
        format="json",
    )
    assert created.status_code == 201, created.content
    assessment_id = created.json()["id"]
    saved = api.patch(
        f"/api/v1/assessments/{assessment_id}/answers/",
        {"answers": document["answers"], "comments": document["comments"]},
        format="json",
    )
    assert saved.status_code == 200, saved.content
    with LAUNCH_LOG.open("rb") as log:
        uploaded = api.post(
            f"/api/v1/assessments/{assessment_id}/evidence/",
            {"question": LOG_QUESTION, "file": log},
            format="multipart",
        )
    assert uploaded.status_code == 201, uploaded.content
    assert uploaded.json()["parsed"] is True
    return {**uploaded.json(), "assessment": assessment_id}


def queue_scoring(api: APIClient, assessment_id: int, action: str = "submit") -> int:
    """POST submit/ or rescore/; returns the queued run's id."""
    response = api.post(f"/api/v1/assessments/{assessment_id}/{action}/")
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "submitted"
    return response.json()["run"]


def assessment_detail(api: APIClient, assessment_id: int) -> dict[str, Any]:
    response = api.get(f"/api/v1/assessments/{assessment_id}/")
    assert response.status_code == 200, response.content
    return response.json()


def run_detail(api: APIClient, assessment_id: int, run_id: int) -> dict[str, Any]:
    response = api.get(f"/api/v1/assessments/{assessment_id}/runs/{run_id}/")
    assert response.status_code == 200, response.content
    return response.json()


def wait_for_run(
    api: APIClient,
    worker: Worker,
    assessment_id: int,
    run_id: int,
    *,
    run_status: str,
    timeout: float = SCORING_TIMEOUT,
) -> dict[str, Any]:
    """Poll the API until the run is finished with `run_status`; returns the assessment's
    detail as it is then. A run that ends otherwise fails the test at once."""

    def finished() -> dict[str, Any] | None:
        run = run_detail(api, assessment_id, run_id)
        if run["status"] in ("queued", "running"):
            return None
        assert run["status"] == run_status, (
            f"run {run_id} ended {run['status']}, not {run_status} (error: {run['error']!r})"
        )
        return assessment_detail(api, assessment_id)

    return eventually(
        finished,
        timeout=timeout,
        what=f"run {run_id} of assessment {assessment_id} is {run_status}",
        interval=0.25,
        worker=worker,
    )


def expected_score(findings: list[dict[str, Any]]) -> int:
    """The score the ruleset's own data gives these findings (never a hard-coded number)."""
    points = builtin_catalog().ruleset(RULESET).points
    return min(100, sum(points[finding["severity"]] for finding in findings))
