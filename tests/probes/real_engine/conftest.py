"""Fixtures of the real-engine tests: the built engine (or the build's failure, loudly)."""

from __future__ import annotations

import pytest

from .engine import Engine, engine_find


@pytest.fixture(scope="session")
def engine() -> Engine:
    try:
        return engine_find()
    except RuntimeError as problem:
        pytest.fail(f"the real engine is not available: {problem}", pytrace=False)
