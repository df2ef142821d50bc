import pytest

from tests.personas import Personas, make_personas


@pytest.fixture
def personas(db) -> Personas:
    return make_personas()
