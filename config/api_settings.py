"""The API's framework settings: Django REST framework (authentication, the one exception
handler, bounded JSON in and out, pagination) and the OpenAPI schema drf-spectacular writes.

Apart from `config.settings` because none of it comes from the environment: it is how the API
is built, not how a deployment is run. `config.settings` imports both dictionaries.
"""

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "EXCEPTION_HANDLER": "core.api.base.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "core.api.bounded_json.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # JSON only. DRF's browsable API needs a queryset and a serializer class on every view
    # (these views keep their queries in selectors) and inline scripts the content security
    # policy forbids; the API's documentation is the OpenAPI page (/api/docs/).
    "DEFAULT_RENDERER_CLASSES": ["core.api.bounded_json.SafeJSONRenderer"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "core.pagination.ListPagination",
    "PAGE_SIZE": 50,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "AVIA API",
    "DESCRIPTION": "AI Vendor Isolation Assessment: questionnaires, assessments, findings, reports.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Request and response components apart: a request body is closed (no unknown keys), a
    # response's read-only fields are not part of what a client may send.
    "COMPONENT_SPLIT_REQUEST": True,
    # `<id:…>` (core.ids.IdConverter): a row id, 1 to 2**63 - 1 (core.ids.MAX_ID).
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.api.schema.add_error_responses",
        "webhooks.schema.webhooks_as_extension",
    ],
    # The payload of every webhook event (webhooks/schema.py), under `x-webhooks`.
    "WEBHOOKS": [
        f"webhooks.schema.{event}"
        for event in (
            "assessment_submitted",
            "assessment_scored",
            "assessment_signed_off",
            "report_ready",
            "probe_finished",
            "risk_acceptance_expiring",
            "rescore_batch_finished",
            "test_event",
        )
    ],
    "ENUM_NAME_OVERRIDES": {
        "AssessmentStatusEnum": "assessments.models.AssessmentStatus",
        "ReportStatusEnum": "reports.models.ReportStatus",
        "ProbeRunStatusEnum": "probes.models.ProbeRunStatus",
        "ChannelEnum": "assessments.models.Channel",
        "RescoreBatchStatusEnum": "portfolio.models.BatchStatus",
        "PortfolioReportKindEnum": "reports.models.PortfolioKind",
        # The evidence kinds kept their first name when a second `kind` (portfolio reports') came.
        "KindEnum": "assessments.serializers.EVIDENCE_KINDS",
    },
}
