"""Every error leaves the API as `{"errors": {key: [messages]}}` with the right status, and bad
input of any kind is a 4xx, never a 500."""

import pytest
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions
from rest_framework.test import APIClient

from assessments.lifecycle import IllegalTransition
from assessments.models import Assessment, Vendor
from core.api.base import exception_handler
from core.errors import ConflictError, ServiceError
from questionnaires.validation import AnswerValidationError

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]


def handle(exc):
    response = exception_handler(exc, {"view": None, "request": None})
    return response.status_code, response.data


# -- the handler itself --------------------------------------------------------------------


def test_a_service_error_is_a_400_keyed_by_field():
    assert handle(ServiceError({"name": ["Taken."]})) == (400, {"errors": {"name": ["Taken."]}})


def test_a_conflict_is_a_409():
    status, data = handle(ConflictError({"status": ["Not now."]}))
    assert (status, data) == (409, {"errors": {"status": ["Not now."]}})


def test_an_illegal_transition_that_escapes_the_services_is_a_409():
    status, data = handle(IllegalTransition("submit", "approved"))
    assert status == 409
    assert list(data["errors"]) == ["status"]


def test_answer_validation_errors_are_keyed_by_question_code():
    status, data = handle(AnswerValidationError({"CTX-01": ["Enter a whole number."]}))
    assert (status, data) == (400, {"errors": {"CTX-01": ["Enter a whole number."]}})


def test_a_django_validation_error_keeps_its_fields():
    status, data = handle(DjangoValidationError({"email": ["Enter a valid email address."]}))
    assert (status, data) == (400, {"errors": {"email": ["Enter a valid email address."]}})


def test_a_django_validation_error_without_a_field_is_a_non_field_error():
    status, data = handle(DjangoValidationError("Something is off."))
    assert (status, data) == (400, {"errors": {"non_field_errors": ["Something is off."]}})


def test_http404_says_not_found_without_naming_the_model():
    status, data = handle(Http404("No Assessment matches the given query."))
    assert (status, data) == (404, {"errors": {"not_found": ["Not found."]}})


def test_djangos_permission_denied_is_a_403():
    status, data = handle(DjangoPermissionDenied())
    assert status == 403
    assert list(data["errors"]) == ["permission_denied"]


def test_nested_validation_errors_are_flattened_with_dots():
    exc = exceptions.ValidationError(
        {"reopen_codes": {1: ["Not a valid string."]}, "answers": {"X": ["Bad."]}}
    )
    assert handle(exc)[1] == {
        "errors": {"reopen_codes.1": ["Not a valid string."], "answers.X": ["Bad."]}
    }


def test_a_list_validation_error_is_a_non_field_error():
    assert handle(exceptions.ValidationError(["One.", "Two."]))[1] == {
        "errors": {"non_field_errors": ["One.", "Two."]}
    }


def test_throttling_keeps_its_retry_after_header():
    response = exception_handler(exceptions.Throttled(wait=7), {})
    assert response.status_code == 429
    assert response["Retry-After"] == "7"
    assert list(response.data["errors"]) == ["throttled"]


def test_an_unexpected_exception_is_left_to_django():
    assert exception_handler(RuntimeError("bug"), {}) is None


# -- through the API -----------------------------------------------------------------------


def test_a_request_without_credentials_is_a_401_with_an_errors_body(personas):
    response = APIClient().get("/api/v1/vendors/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json() == {
        "errors": {"not_authenticated": ["Authentication credentials were not provided."]}
    }


def test_an_unknown_token_is_a_401_with_an_errors_body(personas):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token avia_nonsense")
    response = client.get("/api/v1/vendors/")
    assert response.status_code == 401
    assert response.json() == {"errors": {"authentication_failed": ["Invalid or revoked token."]}}


def test_malformed_json_is_a_400(personas, client_as):
    response = client_as(personas.alice).generic(
        "POST", "/api/v1/vendors/", '{"name": "Broken', content_type="application/json"
    )
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["parse_error"]
    assert not Vendor.objects.exists()


def test_a_body_that_is_not_json_is_a_415(personas, client_as):
    response = client_as(personas.alice).generic(
        "POST", "/api/v1/vendors/", "name=Form", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 415
    assert list(response.json()["errors"]) == ["unsupported_media_type"]


@pytest.mark.parametrize("body", ['"a string"', "[1, 2]", "42", "null"])
def test_a_json_body_that_is_not_an_object_is_a_400(personas, client_as, body):
    response = client_as(personas.alice).generic(
        "POST", "/api/v1/vendors/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert "errors" in response.json()
    assert not Vendor.objects.exists()


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/assessments/99999999999999999999/",
        "/api/v1/assessments/99999999999999999999/audit/",
        "/api/v1/assessments/1/runs/99999999999999999999/",
        "/api/v1/vendors/99999999999999999999/",
        "/api/v1/vendors/0/",
        "/api/v1/assessments/abc/",
        "/api/v1/assessments/-1/",
        "/api/v1/questionnaires/no-such-thing/",
        "/api/v1/no-such-endpoint/",
        "/api/nothing-here",
    ],
)
def test_unknown_and_absurd_addresses_are_json_404s(personas, client_as, path):
    response = client_as(personas.alice).get(path)
    assert response.status_code == 404
    assert response.json() == {"errors": {"not_found": ["Not found."]}}


def test_a_write_to_a_huge_id_is_a_404(personas, client_as):
    response = client_as(personas.alice).patch(
        "/api/v1/assessments/99999999999999999999/answers/",
        {"answers": {"PRF-01": "x"}},
        format="json",
    )
    assert response.status_code == 404


def test_huge_ids_in_a_body_are_a_400(personas, client_as, catalog):
    response = client_as(personas.alice).post(
        "/api/v1/assessments/",
        {"vendor": 99999999999999999999, "questionnaire": "ai-inference-isolation@1"},
        format="json",
    )
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["vendor"]
    assert not Assessment.objects.exists()


def test_a_method_an_endpoint_does_not_offer_is_a_405(personas, client_as):
    response = client_as(personas.alice).delete("/api/v1/vendors/")
    assert response.status_code == 405
    assert list(response.json()["errors"]) == ["method_not_allowed"]
