"""The security tests reuse the API tests' fixtures (clients, an answered and a scored
assessment built through the services) and the probe tests' (a v2 assessment whose vendor did
or did not consent to the probe, reached by its link; the two test tenants' keys)."""

from tests.api.conftest import (  # noqa: F401 (fixtures)
    answered,
    assessment,
    client_as,
    launch_file,
    scored,
    token_client,
    vendor,
)
from tests.probes.conftest import keys  # noqa: F401 (a fixture)
from tests.probes.test_portal import consented, unconsented  # noqa: F401 (fixtures)
