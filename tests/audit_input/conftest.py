"""The input audit's tests reuse the probe tests' fixtures (a v2 assessment whose vendor
consented to the probe, reached by its link; the two test tenants' keys)."""

from tests.probes.conftest import keys  # noqa: F401 (fixtures)
from tests.probes.test_portal import consented, unconsented  # noqa: F401
