"""Output of the questionnaire endpoints, read from a published version's `QuestionnaireSpec`.

The spec (not the browsing tables) is the source: it is exactly what answers are validated
against, so what a client reads here is what the API will accept.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from .spec import ANSWER_TYPES, AUDIENCES, Text

TEXT_SCHEMA = {
    "type": "object",
    "properties": {"en": {"type": "string"}, "zh-hant": {"type": "string"}},
    "required": ["en", "zh-hant"],
}


@extend_schema_field(TEXT_SCHEMA)
class TextField(serializers.Field):
    """A text in every supported language: `{"en": "...", "zh-hant": "..."}`."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def to_representation(self, value: Text) -> dict[str, str]:
        return value.as_dict()


class OptionSerializer(serializers.Serializer):
    code = serializers.CharField()
    label = TextField()
    exclusive = serializers.BooleanField(
        help_text="Cannot be combined with other options of a multi_choice question."
    )


class QuestionSerializer(serializers.Serializer):
    code = serializers.CharField()
    type = serializers.ChoiceField(choices=ANSWER_TYPES)
    required = serializers.BooleanField(
        help_text="Submission is refused while this visible question is blank."
    )
    text = TextField()
    help = TextField()
    unit = serializers.CharField(allow_null=True, help_text="e.g. tokens, days, hours")
    unit_label = TextField(allow_null=True)
    show_if = serializers.CharField(
        allow_null=True,
        help_text="CEL condition over other answers (`PRF-05` is read as `PRF_05`); the "
        "question is asked only when it holds.",
    )
    options = OptionSerializer(
        many=True, help_text='Empty for yes_no questions, which take "yes", "no" or "unknown".'
    )


class SectionSerializer(serializers.Serializer):
    code = serializers.CharField()
    answered_by = serializers.ChoiceField(
        choices=AUDIENCES, help_text="vendor, or buyer (the assessor; never shown to the vendor)"
    )
    title = TextField()
    intro = TextField()
    questions = QuestionSerializer(many=True)


class QuestionnaireSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="slug@version, as assessments name it")
    slug = serializers.CharField()
    version = serializers.CharField()
    title = TextField()
    description = TextField()
    sections = SectionSerializer(many=True)
