from __future__ import annotations

import pytest

from webhooks.events import SUBSCRIBABLE
from webhooks.services import endpoint_create

from .receiver import start_receiver


@pytest.fixture
def receiver():
    receiver, server = start_receiver()
    yield receiver
    server.shutdown()
    server.server_close()


@pytest.fixture
def loopback_allowed(settings):
    """Webhooks to 127.0.0.0/8, as the demo and the tests allow (never production's default)."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]


@pytest.fixture
def endpoint(personas, receiver, loopback_allowed):
    """Acme's endpoint at the receiver, subscribed to every event; (endpoint, secret)."""
    return endpoint_create(
        organization=personas.acme,
        actor=personas.alice,
        url=receiver.url,
        events=list(SUBSCRIBABLE),
    )
