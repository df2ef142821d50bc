"""The base of every REST endpoint that acts in an organization (Sentry's organization endpoint).

It is the API's side of tenancy, as `@member_page` (`decorators.py`) is the pages': the request's
organization is resolved once (`tenancy.py`), the role's capability checked (`roles.py`), and the
handler gets the `OrgContext`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpResponseBase
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request

from core.api.bounded_json import BoundedJSONParser

from .roles import Capability
from .tenancy import OrgContext, org_context_for_request

CapabilityRule = str | tuple[str, ...]
_HANDLED_METHODS = ("get", "post", "put", "patch", "delete")


class OrganizationAPIView(GenericAPIView):
    """Base of every endpoint that acts in an organization (Sentry's organization endpoint).

    After DRF's authentication, the request's organization is resolved once, the capability
    that `required_capability` names for the HTTP method is checked (a tuple: any one of
    them), and the `OrgContext` reaches the handler as the keyword argument `org`::

        class VendorList(OrganizationAPIView):
            required_capability = {"GET": Capability.VIEW, "POST": Capability.EDIT_ASSESSMENT}

            def get(self, request, org): ...

    Objects are always looked up through the selectors with `org.organization`, so another
    organization's object is a 404.
    """

    required_capability: ClassVar[Mapping[str, CapabilityRule]] = {}
    # JSON bodies only (the evidence upload takes multipart): anything else is a 415.
    parser_classes: ClassVar[list[type]] = [BoundedJSONParser]
    # Lists that filter opt in (the list of assessments); the others take no query filters.
    filter_backends: ClassVar[list[type]] = []
    # DRF's OPTIONS metadata would build serializers outside the organization; not offered.
    metadata_class = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for method in _HANDLED_METHODS:
            if hasattr(cls, method) and method.upper() not in cls.required_capability:
                raise ImproperlyConfigured(
                    f"{cls.__name__}.required_capability names no capability for {method.upper()}"
                )
        for rule in cls.required_capability.values():
            for capability in (rule,) if isinstance(rule, str) else rule:
                if capability not in Capability.values:
                    raise ImproperlyConfigured(f"{cls.__name__}: unknown capability {capability!r}")

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> HttpResponseBase:
        # `initial` switches to the organization's clock; whatever was active before is back
        # once the response is made.
        with timezone.override(timezone.get_current_timezone()):
            return super().dispatch(request, *args, **kwargs)

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # authentication, IsAuthenticated, throttling
        org = org_context_for_request(request)
        if org is None:
            raise exceptions.PermissionDenied(
                {"organization": [_("You are not a member of any organization.")]}
            )
        self._check_capability(org, request.method or "GET")
        # The organization's clock, as on its pages (`member_page`): "today", "overdue" and
        # the times the API shows are read on it.
        timezone.activate(org.organization.time_zone)
        # DRF calls the handler with this very dict (`handler(request, *args, **kwargs)` after
        # `self.kwargs = kwargs`), so the context arrives as an argument, like a URL parameter.
        self.kwargs["org"] = org

    def _check_capability(self, org: OrgContext, method: str) -> None:
        method = "GET" if method == "HEAD" else method
        rule = self.required_capability.get(method)
        if rule is None:
            return  # no handler for this method: DRF answers 405
        capabilities = (rule,) if isinstance(rule, str) else rule
        if not any(org.can(capability) for capability in capabilities):
            raise exceptions.PermissionDenied(
                _("Your role in this organization does not allow this.")
            )
