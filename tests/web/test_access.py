"""Every member page per persona: members read (200), only the right roles write (403 otherwise),
an outsider gets 404 for Acme's objects, and anonymous visitors are sent to sign in."""

import pytest
from django.urls import reverse

from assessments.models import Assessment, RiskDecision, VendorLink

from .conftest import make_scored

ROLES = ["alice", "ava", "rex", "vic"]

# page name → the personas who may open it (everyone else among Acme's members gets 403)
READ_PAGES = {
    "dashboard": ROLES,
    "vendor_list": ROLES,
    "compare": ROLES,
    "vendor_create": ["alice", "ava"],
    "create": ["alice", "ava"],
}
OBJECT_PAGES = {
    "detail": ROLES,
    "findings": ROLES,
    "review": ROLES,
    "edit": ["alice", "ava"],
}


@pytest.fixture
def world(catalog, personas, vendor, settings):
    """A scored assessment with an evidence file and a vendor link, at Acme."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    assessment = make_scored(personas, vendor)
    return {
        "assessment": assessment,
        "vendor": vendor,
        "link": VendorLink.objects.get(assessment=assessment),
        "evidence": assessment.evidence.get(),
    }


def object_url(name, world):
    if name == "vendor_edit":
        return reverse("assessments:vendor_edit", args=[world["vendor"].pk])
    return reverse(f"assessments:{name}", args=[world["assessment"].pk])


@pytest.mark.parametrize("persona", ROLES)
def test_each_member_gets_each_page_their_role_allows(client, personas, world, persona):
    client.force_login(getattr(personas, persona))
    for name, allowed in READ_PAGES.items():
        expected = 200 if persona in allowed else 403
        assert client.get(reverse(f"assessments:{name}")).status_code == expected, name
    for name, allowed in {**OBJECT_PAGES, "vendor_edit": ["alice", "ava"]}.items():
        expected = 200 if persona in allowed else 403
        assert client.get(object_url(name, world)).status_code == expected, name
    download = reverse("assessments:evidence_download", args=[world["evidence"].pk])
    response = client.get(download)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/octet-stream"
    assert response["Content-Disposition"].startswith("attachment")


@pytest.mark.parametrize("persona", ["rex", "vic"])
def test_readers_cannot_write(client, personas, world, persona):
    client.force_login(getattr(personas, persona))
    assessment, link = world["assessment"], world["link"]
    posts = [
        (reverse("assessments:vendor_create"), {"name": "Sneaky Vendor"}),
        (reverse("assessments:vendor_edit", args=[world["vendor"].pk]), {"name": "Renamed"}),
        (reverse("assessments:invite", args=[assessment.pk]), {"contact_email": "x@y.test"}),
        (reverse("assessments:link_reinvite", args=[link.pk]), {}),
        (reverse("assessments:link_revoke", args=[link.pk]), {}),
        (reverse("assessments:rescore", args=[assessment.pk]), {}),
        (
            reverse("assessments:risk_decision", args=[assessment.pk, "KV-POOL-BELOW-CONTEXT"]),
            {
                "kind": "acceptance",
                "justification": "x",
                "owner": "y",
                "expires_on": "2099-01-01",
            },
        ),
    ]
    for url, data in posts:
        assert client.post(url, data).status_code == 403, url
    assessment.refresh_from_db()
    link.refresh_from_db()
    assert assessment.vendor.name == "Cloud Inference Co"
    assert link.revoked_at is None
    assert VendorLink.objects.count() == 1
    assert not RiskDecision.objects.exists()
    assert assessment.status == "scored" and assessment.runs.count() == 1


def test_a_viewer_cannot_sign_off(client, personas, world):
    client.force_login(personas.vic)
    url = reverse("assessments:review", args=[world["assessment"].pk])
    assert client.post(url, {"decision": "approved"}).status_code == 403
    assert not world["assessment"].reviews.exists()


def test_an_outsider_gets_404_for_every_acme_object(client, personas, world):
    client.force_login(personas.oscar)
    assessment, link = world["assessment"], world["link"]
    for name in [*OBJECT_PAGES, "vendor_edit", "progress"]:
        assert client.get(object_url(name, world)).status_code == 404, name
    assert (
        client.get(
            reverse("assessments:evidence_download", args=[world["evidence"].pk])
        ).status_code
        == 404
    )
    posts = [
        reverse("assessments:vendor_edit", args=[world["vendor"].pk]),
        reverse("assessments:invite", args=[assessment.pk]),
        reverse("assessments:link_reinvite", args=[link.pk]),
        reverse("assessments:link_revoke", args=[link.pk]),
        reverse("assessments:rescore", args=[assessment.pk]),
        reverse("assessments:review", args=[assessment.pk]),
        reverse("assessments:risk_decision", args=[assessment.pk, "KV-POOL-BELOW-CONTEXT"]),
    ]
    for url in posts:
        assert client.post(url, {"decision": "approved", "name": "x"}).status_code == 404, url
    link.refresh_from_db()
    assert link.revoked_at is None
    assert not assessment.reviews.exists()


def test_an_outsider_sees_only_their_own_organization(client, personas, world):
    client.force_login(personas.oscar)
    for name in ("dashboard", "vendor_list", "compare"):
        body = client.get(reverse(f"assessments:{name}")).content.decode()
        assert "Cloud Inference Co" not in body, name
    # Acme's ids in a comparison are not choices for him.
    response = client.get(reverse("assessments:compare"), {"assessments": [world["assessment"].pk]})
    assert response.status_code == 200
    assert "Cloud Inference Co" not in response.content.decode()
    # Nor is Acme's vendor a choice for his new assessment.
    response = client.post(
        reverse("assessments:create"),
        {
            "vendor": world["vendor"].pk,
            "questionnaire": "ai-inference-isolation@1",
            "rendered_for": "ai-inference-isolation@1",
        },
    )
    assert response.status_code == 400
    assert Assessment.objects.filter(organization=personas.other).count() == 0


def test_anonymous_visitors_are_sent_to_sign_in(client, world):
    for name in READ_PAGES:
        response = client.get(reverse(f"assessments:{name}"))
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    for name in OBJECT_PAGES:
        response = client.get(object_url(name, world))
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_signed_in_user_without_an_organization_gets_403(client, world, django_user_model):
    loner = django_user_model.objects.create_user(email="loner@nowhere.test", password="x")
    client.force_login(loner)
    assert client.get(reverse("assessments:dashboard")).status_code == 403
    assert client.get(object_url("detail", world)).status_code == 403
