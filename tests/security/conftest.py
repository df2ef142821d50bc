"""The security tests reuse the API tests' fixtures (clients, an answered and a scored
assessment built through the services)."""

from tests.api.conftest import (  # noqa: F401 (fixtures)
    answered,
    assessment,
    client_as,
    launch_file,
    scored,
    token_client,
    vendor,
)
