"""The organization endpoint base: one organization per request, a capability per method,
another organization's objects are 404 everywhere."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.response import Response
from rest_framework.test import APIClient

from accounts.api import OrganizationAPIView
from accounts.models import User
from accounts.roles import Capability
from assessments.models import (
    Answer,
    Assessment,
    AuditEvent,
    Channel,
    EvidenceFile,
    Review,
    Vendor,
)
from assessments.services.answers import assessment_create
from tests.personas import join

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def acme_urls(assessment, run_id, vendor_id):
    """(method, path, body) of every Acme object URL, reads and writes."""
    base = f"/api/v1/assessments/{assessment.pk}"
    return [
        ("get", f"/api/v1/vendors/{vendor_id}/", None),
        ("patch", f"/api/v1/vendors/{vendor_id}/", {"name": "Taken over"}),
        ("get", f"{base}/", None),
        ("patch", f"{base}/answers/", {"answers": {"PRF-01": "Taken over"}}),
        ("post", f"{base}/submit/", None),
        ("post", f"{base}/rescore/", None),
        ("get", f"{base}/runs/{run_id}/", None),
        ("post", f"{base}/review/", {"decision": "approved"}),
        ("get", f"{base}/audit/", None),
    ]


def test_an_outsider_gets_404_on_every_acme_object(personas, scored, client_as):
    client = client_as(personas.oscar)
    run_id = scored.latest_run_id
    events = AuditEvent.objects.count()

    for method, path, body in acme_urls(scored, run_id, scored.vendor_id):
        response = getattr(client, method)(path, body, format="json")
        assert response.status_code == 404, (method, path)
        assert response.json() == {"errors": {"not_found": ["Not found."]}}
    response = client.post(
        f"/api/v1/assessments/{scored.pk}/evidence/",
        {"question": "CTX-08", "file": SimpleUploadedFile("log.txt", b"hello")},
        format="multipart",
    )
    assert response.status_code == 404

    scored.refresh_from_db()
    assert scored.status == "scored"
    assert Vendor.objects.get().name == "Inferno AI"
    assert Answer.objects.get(assessment=scored, question_code="PRF-01").value == "Workers AI"
    assert not Review.objects.exists() and not EvidenceFile.objects.exists()
    assert AuditEvent.objects.count() == events


def test_an_outsider_sees_none_of_acmes_lists(personas, scored, client_as):
    client = client_as(personas.oscar)
    assert client.get("/api/v1/vendors/").json()["count"] == 0
    assert client.get("/api/v1/assessments/").json()["count"] == 0


def test_a_run_of_another_assessment_is_not_found_under_this_one(
    personas, scored, vendor, client_as
):
    other = assessment_create(
        organization=personas.acme,
        vendor=vendor,
        questionnaire_key="ai-inference-isolation@1",
        actor=personas.ava,
        channel=Channel.WEB,
    )
    response = client_as(personas.alice).get(
        f"/api/v1/assessments/{other.pk}/runs/{scored.latest_run_id}/"
    )
    assert response.status_code == 404


def test_a_viewer_is_refused_every_write_with_403(personas, scored, client_as):
    client = client_as(personas.vic)
    writes = [
        (m, p, b)
        for m, p, b in acme_urls(scored, scored.latest_run_id, scored.vendor_id)
        if m != "get"
    ]
    writes += [
        ("post", "/api/v1/vendors/", {"name": "New"}),
        ("post", "/api/v1/assessments/", {"vendor": scored.vendor_id, "questionnaire": "x@1"}),
    ]
    for method, path, body in writes:
        response = getattr(client, method)(path, body, format="json")
        assert response.status_code == 403, (method, path)
        assert list(response.json()["errors"]) == ["permission_denied"]
    assert Vendor.objects.count() == 1 and Assessment.objects.count() == 1
    scored.refresh_from_db()
    assert scored.status == "scored"


def test_a_viewer_reads_everything_the_audit_trail_included(personas, scored, client_as):
    client = client_as(personas.vic)
    for method, path, _body in acme_urls(scored, scored.latest_run_id, scored.vendor_id):
        if method == "get":
            assert client.get(path).status_code == 200, path


@pytest.mark.parametrize(
    ("role", "expected"),
    [("alice", 201), ("ava", 201), ("rex", 403), ("vic", 403), ("oscar", 201)],
)
def test_creating_a_vendor_walks_the_permission_matrix(personas, client_as, role, expected):
    response = client_as(getattr(personas, role)).post(
        "/api/v1/vendors/", {"name": f"Vendor of {role}"}, format="json"
    )
    assert response.status_code == expected


def test_a_user_without_any_organization_is_refused_with_403(db, client_as):
    loner = User.objects.create_user(email="loner@nowhere.test")
    response = client_as(loner).get("/api/v1/vendors/")
    assert response.status_code == 403
    assert response.json() == {
        "errors": {"organization": ["You are not a member of any organization."]}
    }


def test_a_token_authenticates_and_acts_in_its_organization(personas, vendor, token_client):
    response = token_client(personas.ava, personas.acme).get("/api/v1/vendors/")
    assert response.status_code == 200
    assert [v["name"] for v in response.json()["results"]] == ["Inferno AI"]


def test_a_token_for_another_organization_sees_none_of_acme(personas, vendor, token_client):
    join(personas.other, personas.ava, "viewer", personas.oscar)
    client = token_client(personas.ava, personas.other)
    assert client.get("/api/v1/vendors/").json()["count"] == 0
    assert client.get(f"/api/v1/vendors/{vendor.pk}/").status_code == 404
    # ...and a viewer's token there cannot write, whatever her role at Acme.
    assert client.post("/api/v1/vendors/", {"name": "X"}, format="json").status_code == 403


def test_a_session_acts_in_the_organization_switched_to(personas, vendor, client_as):
    join(personas.other, personas.ava, "viewer", personas.oscar)
    client = client_as(personas.ava)
    assert client.get("/api/v1/vendors/").json()["count"] == 1  # Acme: her first membership
    session = client.session
    session["current_org_id"] = personas.other.pk
    session.save()
    assert client.get("/api/v1/vendors/").json()["count"] == 0


def test_a_view_must_name_a_capability_for_every_method_it_handles():
    with pytest.raises(ImproperlyConfigured, match="POST"):

        class Careless(OrganizationAPIView):
            required_capability = {"GET": Capability.VIEW}

            def get(self, request, org):
                return Response()

            def post(self, request, org):
                return Response()


def test_a_view_cannot_name_an_unknown_capability():
    with pytest.raises(ImproperlyConfigured, match="unknown capability"):

        class Typo(OrganizationAPIView):
            required_capability = {"GET": "veiw"}

            def get(self, request, org):
                return Response()


def test_the_detail_view_reads_a_bounded_number_of_queries(
    personas, scored, client_as, django_assert_max_num_queries
):
    client = client_as(personas.alice)
    # session, user, two-factor requirement, membership, assessment, answers, evidence, runs,
    # rulesets, findings, titles
    with django_assert_max_num_queries(11):
        assert client.get(f"/api/v1/assessments/{scored.pk}/").status_code == 200


def test_the_list_does_not_query_per_assessment(
    personas, vendor, catalog, client_as, django_assert_num_queries
):
    client = client_as(personas.alice)

    def create():
        assessment_create(
            organization=personas.acme,
            vendor=vendor,
            questionnaire_key="ai-inference-isolation@1",
            actor=personas.ava,
            channel=Channel.WEB,
        )

    create()
    with CaptureQueriesContext(connection) as one:
        client.get("/api/v1/assessments/")
    for _ in range(5):
        create()
    with django_assert_num_queries(len(one.captured_queries)):
        assert client.get("/api/v1/assessments/").json()["count"] == 6


def test_a_session_write_without_the_csrf_token_is_refused(personas):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(personas.ava)

    response = client.post("/api/v1/vendors/", {"name": "Forged"}, format="json")

    assert response.status_code == 403
    assert "CSRF" in response.json()["errors"]["permission_denied"][0]
    assert not Vendor.objects.exists()


def test_a_token_write_needs_no_csrf_token(personas, token_client):
    response = token_client(personas.ava, personas.acme).post(
        "/api/v1/vendors/", {"name": "Scripted"}, format="json"
    )
    assert response.status_code == 201


def test_head_is_checked_like_get(personas, vendor, client_as):
    assert client_as(personas.vic).head("/api/v1/vendors/").status_code == 200
    assert client_as(personas.vic).head(f"/api/v1/assessments/{10**6}/audit/").status_code == 404
    loner = User.objects.create_user(email="loner@nowhere.test")  # a member of nothing
    assert client_as(loner).head("/api/v1/vendors/").status_code == 403
