"""Debian's Chromium driven by Playwright against a live server, with the real Celery worker of
the integration tests scoring what the vendor submits.

The worker fixtures are those of `tests/integration/conftest.py`, reused as they are: a real
Redis broker and a `celery -A config worker` process reading the same (file) test database.
Tests here that need the worker carry the `integration` marker too, so `-m "not integration"`
keeps a quick run free of Redis.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from assessments import factories
from assessments.models import Assessment, Channel
from assessments.services.vendor_links import vendor_link_issue
from tests.integration import conftest as integration
from tests.integration.conftest import (  # noqa: F401  (fixtures, reused)
    celery_worker_process,
    redis_url,
    worker,
)
from tests.personas import PASSWORD, Personas, make_personas, member_of

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The worker process must see the test database: a file, as for the integration tests
    # (their conftest does the same when it is loaded; doing it twice is harmless).
    here = Path(__file__).parent
    if any(item.get_closest_marker("integration") and here in item.path.parents for item in items):
        integration._use_a_test_database_file()


@pytest.fixture
def personas(worker, settings) -> Personas:  # noqa: F811  (the reused worker fixture)
    """Acme's members, who sign in through the real login page: with a quick password hasher,
    as Django advises for tests (the default one's million iterations cost seconds here)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cast = make_personas()
    for user in (cast.alice, cast.ava, cast.rex, cast.vic, cast.oscar):
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])
    return cast


@pytest.fixture(autouse=True)
def private_media() -> None:
    """Overrides the per-test media folder of tests/conftest.py: the worker process reads
    evidence from the folder its fixture set up for the session."""


@pytest.fixture
def chromium(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api")
    # Playwright's sync API runs an event loop in this thread; the test's own ORM reads are
    # still plain synchronous calls.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def open_assessment(personas, language: str) -> tuple[Assessment, str]:
    """The launch-day vendor's assessment, not submitted (PRF-07 "yes", so PRF-08 is asked;
    INC-01 "no", so INC-02 is not), and a private link in `language`."""
    ava = member_of(personas.ava)
    assessment = factories.incident_assessment(member=ava, submit=False)
    _link, token = vendor_link_issue(
        assessment=assessment,
        contact_email="vendor@launch.test",
        member=ava,
        channel=Channel.WEB,
        language=language,
    )
    return assessment, token
