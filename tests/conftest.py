"""Fixtures shared by every test package: personas, the catalogue, private media, inline scoring.

Data is set up through the real services (`tests/personas.py`), never by hand-made rows.
"""

import io
import json
import signal
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.utils import translation

from core.cache import CACHE_ERRORS
from core.outbound import parse_networks
from questionnaires.models import QuestionnaireVersion
from scoring.models import Framework, Ruleset
from tests import parallel
from tests.personas import Personas, make_personas
from tests.site_pages import World, build_world

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
LOGS = ROOT / "tests" / "fixtures" / "logs"
QUESTIONNAIRE = "ai-inference-isolation@1"


def pytest_configure(config: pytest.Config) -> None:
    # scripts/test.sh stops its background PostgreSQL pass with SIGTERM: handled as Ctrl-C is,
    # so pytest still tears its fixtures down and the Celery workers it started stop with it.
    signal.signal(signal.SIGTERM, _interrupted)
    # pytest-xdist's controller (`-n 2`, scripts/test.sh): a Redis and media folder per worker.
    if config.getoption("dist", "no") != "no" and not hasattr(config, "workerinput"):
        config.pluginmanager.register(parallel.Controller(), "avia-parallel")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # In a worker of `--dist loadgroup` (xdist sets `loadgroup` there; its `dist` is "no"): the
    # controller deals the packages out in the order the workers collected them.
    if hasattr(config, "workerinput") and getattr(config.option, "loadgroup", False):
        parallel.slowest_first(items)


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def launch_answer_file() -> dict:
    """The answer file of the incident vendor at launch (complete, valid)."""
    return json.loads((EXAMPLES / "incident-2026-launch.json").read_text(encoding="utf-8"))


@pytest.fixture
def personas(db) -> Personas:
    """alice (owner), ava (assessor), rex (reviewer), vic (viewer) of Acme; oscar of Other Org."""
    return make_personas()


@pytest.fixture(scope="package")
def _catalog_once(django_db_setup, django_db_blocker):
    """`load_catalog`, run once per test package rather than once per test (it compiles and
    type-checks every rule). The rows are committed outside the tests' transactions, so they are
    deleted again when the package is done: other packages start from the database they expect.
    """
    with django_db_blocker.unblock():
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
    """The questionnaire, ruleset and framework catalogue, as `load_catalog` loads it.

    A transactional test (live server, browser) empties every table when it ends, the
    package-wide copy included: load it again then."""
    if not QuestionnaireVersion.objects.exists():
        call_command("load_catalog", stdout=io.StringIO())


@pytest.fixture(autouse=True)
def private_media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture(autouse=True)
def default_language():
    """Each test ends in the site's default language: one that activated another (a page
    rendered in zh-Hant outside a request) must not change the words the next one reads."""
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def fresh_cache():
    """Every test starts and ends with an empty cache. The counters kept there (failed
    vendor-link attempts, reset requests, login failures) are per client address, and every
    test's client is 127.0.0.1: which tests ran before in the same process (the order differs
    between the SQLite and the PostgreSQL pass) must not turn this one's link into a 429. A
    cache that is away (no Redis in `make test-fast`) has nothing to empty."""
    _empty_cache()
    yield
    _empty_cache()


def _empty_cache() -> None:
    try:
        cache.clear()
    except CACHE_ERRORS:
        pass


LOOPBACK = "127.0.0.0/8"
# A Redis that is not there: the port is reserved (tcpmux) and nothing listens on it.
DEAD_REDIS = "redis://127.0.0.1:1/0"


@pytest.fixture
def dead_cache(settings):
    """The cache on a Redis that does not answer, as in an outage."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": DEAD_REDIS,
        }
    }


@pytest.fixture(autouse=True)
def probe_reaches_loopback(settings):
    """The reference vendors listen on loopback, which the outbound-address policy refuses
    unless the operator lists it (scripts/test.sh and make run do; so does this, for pytest run
    by hand). Tests of the policy itself set their own."""
    settings.PROBE_ALLOWED_NETWORKS = parse_networks([LOOPBACK])


@pytest.fixture
def inline_scoring(settings, django_capture_on_commit_callbacks):
    """`with inline_scoring(): ...` runs the scoring queued inside the block, in this process.

    Tests run inside a transaction that never commits, and the services queue scoring on
    commit: the block captures those callbacks and runs them (eagerly) when it ends. Only for
    unit tests; the integration tests run a real worker.
    """
    settings.CELERY_TASK_ALWAYS_EAGER = True
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture(scope="module")
def launch_day_vendor(tmp_path_factory):
    """A launch-day reference vendor (probes/reference_vendor.py) as a real process on a
    loopback port, shared by a module's tests."""
    from tests.probes.vendor import reference_vendor

    with reference_vendor(tmp_path_factory.mktemp("vendor"), "launch-day") as vendor:
        yield vendor


@pytest.fixture
def world(catalog, personas, settings) -> World:
    """Every kind of object a page shows, for the tests that walk every page (scoring inline)."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    return build_world(personas)
