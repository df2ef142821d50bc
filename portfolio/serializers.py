"""Shapes of the rescore-batch endpoints (`api.md` of the shared spec, "Added in version 2 of the
catalogue")."""

from __future__ import annotations

from rest_framework import serializers

from core.api.base import InputSerializer
from core.ids import MAX_ID

from .models import BatchStatus


class RescoreBatchInputSerializer(InputSerializer):
    ruleset = serializers.CharField(help_text="The ruleset to score with, `slug@version`.")
    assessments = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
        required=False,
        max_length=100_000,
        help_text="Ids of the assessments to rescore. Default: every scored assessment of the "
        "organization whose latest run used another ruleset version.",
    )


class RescoreBatchQueuedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=BatchStatus.choices)


class ResultSerializer(serializers.Serializer):
    ruleset = serializers.CharField()
    risk_score = serializers.IntegerField(allow_null=True)
    risk_tier = serializers.CharField()


class ChangeSerializer(serializers.Serializer):
    assessment = serializers.IntegerField(source="assessment_id")
    vendor = serializers.CharField()
    before = ResultSerializer()
    after = ResultSerializer()
    added = serializers.ListField(child=serializers.CharField(), help_text="Rule ids.")
    removed = serializers.ListField(child=serializers.CharField(), help_text="Rule ids.")


class FailureSerializer(serializers.Serializer):
    assessment = serializers.IntegerField(source="assessment_id")
    vendor = serializers.CharField()
    error = serializers.CharField()


class RescoreBatchSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    ruleset = serializers.CharField(source="ruleset.key")
    status = serializers.ChoiceField(choices=BatchStatus.choices)
    total = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class RescoreBatchSerializer(RescoreBatchSummarySerializer):
    done = serializers.IntegerField(help_text="Assessments finished: rescored or failed.")
    failed = serializers.IntegerField()
    changes = ChangeSerializer(many=True, help_text="Who got worse first.")
    failures = FailureSerializer(many=True)
