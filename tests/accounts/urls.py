"""A test-only URLconf: the accounts pages plus a tiny API view to authenticate against."""

from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView, exception_handler

from accounts.authentication import ApiTokenAuthentication
from accounts.tenancy import org_context_for_request


class WhoAmI(APIView):
    authentication_classes = [ApiTokenAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]

    def get_exception_handler(self):
        # Pinned to DRF's own handler: these tests are about authentication, not about
        # the project's error format (core/api/base.py, owned elsewhere).
        return exception_handler

    def get(self, request: Request) -> Response:
        context = org_context_for_request(request)
        return Response(
            {
                "user": request.user.email,
                "organization": context.organization.name if context else None,
                "role": context.role if context else None,
            }
        )


def home(request: HttpRequest) -> HttpResponse:
    return HttpResponse("home")


urlpatterns = [
    path("", home, name="home"),
    path("accounts/", include("accounts.urls")),
    path("api/whoami/", WhoAmI.as_view(), name="whoami"),
]
