"""The owner's catalogue pages: upload, problems with their lines, preview, publish, share."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.roles import Role
from questionnaires.models import CatalogStatus, CatalogueShare
from scoring.models import Ruleset
from tests.catalogues.conftest import example_bytes
from tests.personas import join

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def post_file(client: Client, data: bytes, name: str = "dd.yaml"):
    return client.post(reverse("portfolio:catalogues"), {"file": SimpleUploadedFile(name, data)})


def test_an_owner_uploads_previews_in_both_languages_and_publishes(catalog, personas):
    client = signed_in(personas.alice)
    response = post_file(client, example_bytes())
    ruleset = Ruleset.objects.get(organization=personas.acme)
    assert response.status_code == 302 and response["Location"].endswith(f"/{ruleset.pk}/")
    page = client.get(response["Location"]).content.decode()
    assert "Do you keep an AI risk register?" in page and "你是否備存人工智能風險登記冊？" in page
    assert "English only" not in page
    assert client.post(reverse("portfolio:catalogue_publish", args=[ruleset.pk])).status_code == 302
    ruleset.refresh_from_db()
    assert ruleset.status == ruleset.questionnaire.status == CatalogStatus.PUBLISHED


def test_problems_are_listed_with_file_line_and_code_and_nothing_is_saved(catalog, personas):
    response = post_file(signed_in(personas.alice), example_bytes(**{'"abroad"': '"abraod"'}))
    assert response.status_code == 400
    page = response.content.decode()
    assert "dd.yaml" in page and "<td>47</td>" in page and "DD-DATA-ABROAD" in page
    assert not Ruleset.objects.filter(organization=personas.acme).exists()


def test_problems_read_in_the_members_language(catalog, personas):
    client = signed_in(personas.alice)
    client.post(reverse("accounts:set_language"), {"language": "zh-hant"})
    page = post_file(client, b"ruleset: [").content.decode()
    assert "檔案不是有效的 YAML" in page


def test_an_english_only_catalogue_is_marked(catalog, personas):
    client = signed_in(personas.alice)
    response = post_file(client, example_bytes(**{", zh-hant: 管治}": "}"}))
    assert 'id="english-only"' in client.get(response["Location"]).content.decode()


def test_a_draft_of_another_organization_is_not_found(catalog, personas):
    post_file(signed_in(personas.alice), example_bytes())
    ruleset = Ruleset.objects.get(organization=personas.acme)
    response = signed_in(personas.oscar).get(reverse("portfolio:catalogue", args=[ruleset.pk]))
    assert response.status_code == 404


def test_sharing_with_a_client_workspace_and_revoking(published, personas):
    join(personas.other, personas.alice, Role.OWNER, personas.oscar)
    client = signed_in(personas.alice)
    client.post(
        reverse("portfolio:catalogue_share", args=[published.ruleset.pk]),
        {"organization": personas.other.pk, "page_organization": personas.acme.pk},
    )
    share = CatalogueShare.objects.get(owner=personas.acme, shared_with=personas.other)
    client.post(reverse("portfolio:catalogue_share_revoke", args=[share.pk]))
    share.refresh_from_db()
    assert share.revoked_at is not None
