"""The outside client of the two-host test, run on the services' host (its own network
namespace): drives the web host over the test subnet through the REST API, as a buyer's script
would. `python two_hosts_client.py upload|score|report BASE_URL TOKEN [ID]` prints JSON."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
ANSWERS = ROOT / "examples" / "incident-2026-launch.json"
LOG = ROOT / "tests" / "fixtures" / "logs" / "sglang-prefill-glm53-launch.log"
QUESTIONNAIRE = "ai-inference-isolation@1"
LOG_QUESTION = "CTX-08"
TIMEOUT = 120


def ok(response: requests.Response, status: int) -> dict:
    assert response.status_code == status, (response.status_code, response.text[:2000])
    return response.json()


def wait(fetch, done, what: str) -> dict:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        value = fetch()
        if done(value):
            return value
        time.sleep(0.5)
    raise TimeoutError(f"{what}: {value}")


def main(action: str, base: str, token: str, *rest: str) -> dict:
    api = requests.Session()
    api.headers["Authorization"] = f"Token {token}"
    url = f"{base}/api/v1"
    if action == "upload":
        document = json.loads(ANSWERS.read_text(encoding="utf-8"))
        vendor = ok(api.post(f"{url}/vendors/", json={"name": "Two Hosts Inc"}), 201)
        created = ok(
            api.post(
                f"{url}/assessments/",
                json={"vendor": vendor["id"], "questionnaire": QUESTIONNAIRE},
            ),
            201,
        )
        ok(
            api.patch(
                f"{url}/assessments/{created['id']}/answers/",
                json={"answers": document["answers"], "comments": document["comments"]},
            ),
            200,
        )
        with LOG.open("rb") as log:
            uploaded = ok(
                api.post(
                    f"{url}/assessments/{created['id']}/evidence/",
                    data={"question": LOG_QUESTION},
                    files={"file": (LOG.name, log, "text/plain")},
                ),
                201,
            )
        return {"assessment": created["id"], "evidence": uploaded}
    if action == "score":
        (assessment_id,) = rest
        run = ok(api.post(f"{url}/assessments/{assessment_id}/submit/"), 202)["run"]
        finished = wait(
            lambda: ok(api.get(f"{url}/assessments/{assessment_id}/runs/{run}/"), 200),
            lambda r: r["status"] not in ("queued", "running"),
            "scoring run",
        )
        return {"run": finished}
    if action == "report":
        (assessment_id,) = rest
        report = ok(
            api.post(f"{url}/assessments/{assessment_id}/reports/", json={"language": "en"}), 202
        )
        ready = wait(
            lambda: ok(api.get(f"{url}/reports/{report['id']}/"), 200),
            lambda r: r["status"] in ("ready", "failed"),
            "report",
        )
        pdf = api.get(f"{url}/reports/{report['id']}/download/")
        assert pdf.status_code == 200, pdf.text[:500]
        return {
            "report": ready,
            "downloaded_sha256": hashlib.sha256(pdf.content).hexdigest(),
            "downloaded_bytes": len(pdf.content),
            "starts": pdf.content[:5].decode("latin-1"),
        }
    raise SystemExit(f"unknown action {action}")


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:])))
