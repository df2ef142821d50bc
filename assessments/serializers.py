"""Shapes of the assessment endpoints' requests and responses. No logic: input serializers check
types and shapes, the services check meaning; output serializers only present rows."""

from __future__ import annotations

from typing import Any

from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.base import InputSerializer
from core.ids import MAX_ID
from core.text import READABLE_TEXT_PATTERN
from questionnaires.validation import (
    MAX_CODES_PER_REQUEST,
    TEXT_MAX_LENGTH,
    too_many_codes_message,
)
from scoring.results import EvidenceItem, EvidenceKind

from .models import (
    Assessment,
    AssessmentStatus,
    AuditEvent,
    EvidenceFile,
    Finding,
    Review,
    ReviewDecision,
    RiskTier,
    RunStatus,
    ScoringRun,
    Vendor,
)

# What a vendor's website may be, in the request schema and in the check alike: empty, or an
# http(s) address whose host is localhost, an IPv4 address or an ASCII domain name, with an
# optional port, path, query and fragment of RFC 3986's characters (percent-encoded otherwise).
# Both a subset of what the model's URLValidator takes and a valid "uri" (the response
# schema's format), so that a website the schema allows is never refused afterwards nor
# answered outside the response schema.
_OCTET = r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_HOST = (
    rf"(localhost|{_OCTET}(\.{_OCTET}){{3}}|"
    r"([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63})"
)
_PCHAR = r"([A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})"
# The address only: the empty website is the schema's other branch (allow_blank), and a pattern
# that matched "" too made the schema's oneOf refuse it (both branches matched).
WEBSITE_PATTERN = (
    rf"^https?://{_HOST}(:[0-9]{{1,5}})?(/({_PCHAR}|/)*)?"
    rf"(\?({_PCHAR}|[/?])*)?(#({_PCHAR}|[/?])*)?$"
)

# Every kind of a finding's evidence item (scoring.results.EvidenceKind), in the schema's enum.
EVIDENCE_KINDS = [value for name, value in vars(EvidenceKind).items() if name.isupper()]

ANSWER_MAP_SCHEMA = {"type": "object", "additionalProperties": {}}


# -- vendors -------------------------------------------------------------------------------


class VendorSerializer(serializers.ModelSerializer):
    # Blank when not given: the schema says "a URL / an address, or empty".
    website = serializers.URLField(read_only=True, allow_blank=True)
    contact_email = serializers.EmailField(read_only=True, allow_blank=True)

    class Meta:
        model = Vendor
        fields = ["id", "name", "website", "contact_name", "contact_email", "notes", "created_at"]
        read_only_fields = fields


class VendorInputSerializer(InputSerializer):
    """POST (name required) and PATCH (every field optional) of a vendor."""

    name = serializers.CharField(max_length=200)
    website = serializers.RegexField(
        WEBSITE_PATTERN,
        max_length=200,
        required=False,
        allow_blank=True,
        error_messages={"invalid": _("Enter an http:// or https:// address.")},
    )
    contact_name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    contact_email = serializers.EmailField(max_length=254, required=False, allow_blank=True)
    notes = serializers.CharField(max_length=4000, required=False, allow_blank=True)


# -- assessments: input --------------------------------------------------------------------


class AnswerMapField(serializers.DictField):
    """`{"CODE": value}`: any JSON value per code; the questionnaire's types are checked by the
    answer validation, which names the offending code."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=serializers.JSONField(allow_null=True), **kwargs)

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict) and len(data) > MAX_CODES_PER_REQUEST:
            raise serializers.ValidationError(
                too_many_codes_message(len(data), MAX_CODES_PER_REQUEST)
            )
        return super().to_internal_value(data)


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {
            "type": "string",
            "nullable": True,
            "maxLength": TEXT_MAX_LENGTH,
            "pattern": READABLE_TEXT_PATTERN,
        },
    }
)
class CommentMapField(AnswerMapField):
    """`{"CODE": "comment"}`: text, or null (or "") to clear it. The answer validation checks
    the values and names the offending code; the schema states what it accepts."""


class AssessmentCreateInputSerializer(InputSerializer):
    vendor = serializers.PrimaryKeyRelatedField(
        queryset=Vendor.objects.none(), help_text="Id of a vendor of your organization."
    )
    questionnaire = serializers.CharField(
        max_length=130, help_text='slug@version, e.g. "ai-inference-isolation@1"'
    )
    due_date = serializers.DateField(required=False, allow_null=True)
    label = serializers.CharField(
        max_length=80,
        required=False,
        allow_blank=True,
        default="",
        help_text="Optional words that tell this assessment apart from the vendor's others.",
    )
    answers = AnswerMapField(required=False, help_text="Initial answers by question code.")

    def __init__(self, *args: Any, vendors: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if vendors is not None:
            # The caller passes its organization's vendors (a selector's queryset): another
            # organization's vendor is "not found", like a missing one.
            self.fields["vendor"].queryset = vendors


class AnswersInputSerializer(InputSerializer):
    answers = AnswerMapField(
        required=False, help_text='Answers by question code; null or "" clears one.'
    )
    comments = CommentMapField(
        required=False, help_text='Comments by question code; null or "" clears one.'
    )

    empty_body_message = _("Send “answers”, “comments” or both.")


class EvidenceInputSerializer(InputSerializer):
    question = serializers.CharField(max_length=20, help_text="A file question, e.g. CTX-08.")
    file = serializers.FileField(max_length=255)


class ReviewInputSerializer(InputSerializer):
    decision = serializers.ChoiceField(choices=ReviewDecision.choices)
    conditions = serializers.CharField(
        max_length=4000, required=False, allow_blank=True, default=""
    )
    message = serializers.CharField(max_length=4000, required=False, allow_blank=True, default="")
    reopen_codes = serializers.ListField(
        child=serializers.CharField(max_length=20),
        required=False,
        default=list,
        help_text="With changes_requested: the vendor questions to answer again.",
    )
    run = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="Id of the scoring run the decision is about (the one the reviewer read). "
        "When the assessment was scored again since, the decision is refused with a 409.",
    )
    acknowledged_findings = serializers.ListField(
        child=serializers.CharField(max_length=60),
        required=False,
        default=list,
        max_length=200,
        help_text="Required to approve (approved, approved_with_conditions) an assessment whose "
        "run has critical findings: the rule id of each one, confirming the reviewer approves "
        "despite it. A critical finding left out is a 400 under `acknowledged_findings` that "
        "names it.",
    )


# -- assessments: output -------------------------------------------------------------------


class AssessmentSerializer(serializers.ModelSerializer):
    vendor_name = serializers.CharField(source="vendor.name", read_only=True)
    questionnaire = serializers.CharField(
        source="questionnaire.key", read_only=True, help_text="slug@version"
    )
    status = serializers.ChoiceField(choices=AssessmentStatus.choices, read_only=True)
    risk_tier = serializers.ChoiceField(
        choices=RiskTier.choices, allow_blank=True, read_only=True, help_text="Blank until scored."
    )
    scored_with = serializers.CharField(
        source="latest_run.ruleset.key",
        allow_null=True,
        read_only=True,
        help_text="The ruleset (slug@version) of the latest scoring run.",
    )
    is_overdue = serializers.BooleanField(read_only=True)
    number = serializers.IntegerField(
        read_only=True,
        help_text="The assessment's number in your organization (#1, #2, … in creation order, "
        "never reused): with `label`, it tells one vendor's assessments apart.",
    )
    label = serializers.CharField(
        read_only=True, help_text="Optional words the assessors gave it (may be blank)."
    )

    class Meta:
        model = Assessment
        fields = [
            "id",
            "number",
            "label",
            "vendor",
            "vendor_name",
            "questionnaire",
            "status",
            "due_date",
            "is_overdue",
            "risk_score",
            "risk_tier",
            "scored_with",
            "submitted_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class EvidenceItemSerializer(serializers.Serializer):
    """One reason a finding fired, as data (`scoring.results.EvidenceItem`)."""

    kind = serializers.ChoiceField(choices=EVIDENCE_KINDS)
    code = serializers.CharField(
        required=False, help_text="Question code (answer; the file question of a log line)."
    )
    name = serializers.CharField(required=False, help_text="Derived value name, e.g. `pool`.")
    value = serializers.JSONField(
        required=False, allow_null=True, help_text="The answer as stored, or the derived value."
    )
    file = serializers.CharField(required=False, help_text="Evidence file name (log lines).")
    line = serializers.IntegerField(required=False, help_text="Line number in that file.")
    text = serializers.CharField(required=False, help_text="The log line as read.")
    values = serializers.DictField(
        child=serializers.IntegerField(),
        required=False,
        help_text=(
            "Numbers read on the log line: `pool` and/or `context` (tokens); of a model file: "
            "`values_per_token`."
        ),
    )


class FindingSerializer(serializers.ModelSerializer):
    """A finding of one run. `title` is in the request's language; the view passes the titles
    of the run's ruleset as `context["rule_titles"]` (rule id → Text)."""

    rule = serializers.CharField(source="rule_id")
    # A plain string: the tiers' enum is already named after the assessment's risk_tier.
    severity = serializers.CharField(help_text=", ".join(RiskTier.values))
    title = serializers.SerializerMethodField()
    references = serializers.ListField(child=serializers.CharField())
    evidence = serializers.SerializerMethodField(
        help_text="Why it fired, one plain line per answer, derived value or log line."
    )
    evidence_items = EvidenceItemSerializer(
        source="evidence", many=True, help_text="The same evidence as data."
    )

    class Meta:
        model = Finding
        fields = [
            "rule",
            "severity",
            "points",
            "title",
            "section",
            "references",
            "evidence",
            "evidence_items",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_evidence(self, finding: Finding) -> list[str]:
        return [EvidenceItem.from_dict(item).as_text() for item in finding.evidence]

    def get_title(self, finding: Finding) -> str:
        title = self.context.get("rule_titles", {}).get(finding.rule_id)
        return title.get(get_language()) if title else finding.rule_id


class RunSerializer(serializers.ModelSerializer):
    ruleset = serializers.CharField(source="ruleset.key", help_text="slug@version")
    # Plain strings: an enum named "status" is already the assessment's status.
    status = serializers.CharField(help_text=", ".join(RunStatus.values))
    score = serializers.IntegerField(source="risk_score", allow_null=True)
    tier = serializers.CharField(
        source="risk_tier", help_text="critical, high, medium, low; blank until it succeeds"
    )

    class Meta:
        model = ScoringRun
        fields = ["id", "ruleset", "status", "score", "tier", "as_of", "created_at", "finished_at"]
        read_only_fields = fields


class RunDetailSerializer(RunSerializer):
    findings = FindingSerializer(many=True, read_only=True)
    sections = serializers.JSONField(help_text="Coverage by section.")
    answers = serializers.JSONField(
        source="answers_snapshot", help_text="The answers this run scored."
    )
    evidence = serializers.JSONField(
        source="evidence_snapshot", help_text="Parsed evidence this run used, by question code."
    )
    error = serializers.CharField(help_text="Why a failed run could not finish.")

    class Meta(RunSerializer.Meta):
        fields = [
            *RunSerializer.Meta.fields,
            "findings",
            "sections",
            "answers",
            "evidence",
            "error",
        ]
        read_only_fields = fields


class EvidenceSerializer(serializers.ModelSerializer):
    question = serializers.CharField(source="question_code")
    name = serializers.CharField(source="original_name")
    parse_result = serializers.JSONField(
        help_text="What the parser read: engine, KV pool, context length, the log lines..."
    )

    class Meta:
        model = EvidenceFile
        fields = [
            "id",
            "question",
            "name",
            "size",
            "sha256",
            "content_type",
            "parsed",
            "parse_result",
            "uploaded_at",
        ]
        read_only_fields = fields


class AssessmentDetailSerializer(AssessmentSerializer):
    """One assessment with its answers, the latest findings, its runs and its evidence.

    Expects the related rows prefetched (`answers`, `evidence`, `runs__ruleset`,
    `latest_run__findings`) and the latest run's rule titles in the context."""

    answers = serializers.SerializerMethodField()
    comments = serializers.SerializerMethodField()
    reopened = serializers.SerializerMethodField()
    findings = serializers.SerializerMethodField()
    runs = RunSerializer(many=True, read_only=True)
    evidence = EvidenceSerializer(many=True, read_only=True)

    class Meta(AssessmentSerializer.Meta):
        fields = [
            *AssessmentSerializer.Meta.fields,
            "answers",
            "comments",
            "reopened",
            "findings",
            "runs",
            "evidence",
        ]
        read_only_fields = fields

    @extend_schema_field(ANSWER_MAP_SCHEMA)
    def get_answers(self, assessment: Assessment) -> dict[str, Any]:
        return answers_by_code(assessment)

    def get_comments(self, assessment: Assessment) -> dict[str, str]:
        return comments_by_code(assessment)

    def get_reopened(self, assessment: Assessment) -> list[str]:
        """Codes a reviewer re-opened for the vendor."""
        return sorted(a.question_code for a in assessment.answers.all() if a.reopened)

    @extend_schema_field(FindingSerializer(many=True))
    def get_findings(self, assessment: Assessment) -> Any:
        run = assessment.latest_run
        findings = run.findings.all() if run is not None else []
        return FindingSerializer(findings, many=True, context=self.context).data


def answers_by_code(assessment: Assessment) -> dict[str, Any]:
    """Current answers as stored (JSON values), blank ones left out."""
    return {a.question_code: a.value for a in assessment.answers.all() if a.value is not None}


def comments_by_code(assessment: Assessment) -> dict[str, str]:
    return {a.question_code: a.comment for a in assessment.answers.all() if a.comment}


class AnswersSerializer(serializers.Serializer):
    """The answers of an assessment after a PATCH."""

    answers = serializers.DictField(child=serializers.JSONField())
    comments = serializers.DictField(child=serializers.CharField())
    changed = serializers.ListField(
        child=serializers.CharField(), help_text="Codes this request changed."
    )


class RunQueuedSerializer(serializers.Serializer):
    status = serializers.CharField(help_text="The assessment's status: submitted.")
    run = serializers.IntegerField(help_text="Id of the queued scoring run.")


class ReviewSerializer(serializers.ModelSerializer):
    reviewer = serializers.EmailField(source="reviewer.email")
    reopen_codes = serializers.ListField(source="reopened_codes", child=serializers.CharField())
    assessment_status = serializers.CharField(
        source="assessment.status", help_text="The assessment's status after the decision."
    )

    class Meta:
        model = Review
        fields = [
            "id",
            "decision",
            "conditions",
            "message",
            "reopen_codes",
            "run",
            "reviewer",
            "assessment_status",
            "created_at",
        ]
        read_only_fields = fields


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_label")
    assessment = serializers.PrimaryKeyRelatedField(read_only=True)
    detail = serializers.JSONField()

    class Meta:
        model = AuditEvent
        fields = ["id", "created_at", "actor", "channel", "action", "assessment", "detail"]
        read_only_fields = fields
