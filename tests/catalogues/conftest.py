"""An organization's own catalogue: the example file and helpers to upload it."""

from pathlib import Path

import pytest

from scoring.services import CatalogueDraft, catalogue_publish, catalogue_upload
from tests.personas import Personas, member_of

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "catalogues" / "vendor-dd-v1.yaml"


def example_bytes(**replace: str) -> bytes:
    """The example catalogue, with text replaced (`{old: new}`)."""
    text = EXAMPLE.read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text.encode("utf-8")


def upload(personas: Personas, data: bytes | None = None, name: str = "dd.yaml") -> CatalogueDraft:
    return catalogue_upload(
        context=member_of(personas.alice, personas.acme),
        data=example_bytes() if data is None else data,
        source_name=name,
    )


@pytest.fixture
def published(catalog, personas) -> CatalogueDraft:
    """Acme's example catalogue, uploaded and published."""
    draft = upload(personas)
    catalogue_publish(context=member_of(personas.alice, personas.acme), ruleset=draft.ruleset)
    draft.ruleset.refresh_from_db()
    draft.questionnaire.refresh_from_db()
    return draft
