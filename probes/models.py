"""The probe's set-up per assessment (the vendor's endpoint, its two test keys and its signed
authorisation) and the probe runs made under it.

The keys are stored only as Fernet ciphertext (`probes.keystore`), are never readable back
through the API or a serializer, and are destroyed (overwritten, then nulled) when a probe
finishes or fails. The vendor enters them again to allow another run.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.models import Organization
from assessments.models import Assessment, Channel, EvidenceFile, VendorLink

from .result import result_outcomes


class ProbeSetup(models.Model):
    organization = models.ForeignKey(
        Organization, on_delete=models.CASCADE, related_name="probe_setups"
    )
    assessment = models.OneToOneField(
        Assessment, on_delete=models.CASCADE, related_name="probe_setup"
    )
    base_url = models.CharField(_("endpoint base URL"), max_length=2000)
    model_name = models.CharField(_("model name"), max_length=200)
    declared_context = models.PositiveBigIntegerField(_("declared context (tokens)"))
    # The signed authorisation: who signed for the vendor, what may be spent, and when.
    signer_name = models.CharField(_("signed by"), max_length=200)
    spend_ceiling_tokens = models.PositiveBigIntegerField(_("spend ceiling (prompt tokens)"))
    window_starts_at = models.DateTimeField(_("authorised from"))
    window_ends_at = models.DateTimeField(_("authorised until"))
    entered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    entered_by_link = models.ForeignKey(
        VendorLink, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    entered_via = models.CharField(max_length=20, choices=Channel.choices)
    entered_at = models.DateTimeField()
    # Fernet tokens; NULL once destroyed. Never part of any serializer or form output.
    key_a_ciphertext = models.TextField(null=True, editable=False)
    key_b_ciphertext = models.TextField(null=True, editable=False)
    keys_destroyed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(window_ends_at__gt=models.F("window_starts_at")),
                name="probes_window_ends_after_start",
            ),
            models.CheckConstraint(
                condition=models.Q(spend_ceiling_tokens__gt=0), name="probes_ceiling_positive"
            ),
            # Both keys or none: a probe needs two tenants.
            models.CheckConstraint(
                condition=models.Q(key_a_ciphertext__isnull=True, key_b_ciphertext__isnull=True)
                | models.Q(key_a_ciphertext__isnull=False, key_b_ciphertext__isnull=False),
                name="probes_keys_together",
            ),
        ]

    def __str__(self) -> str:
        return f"probe set-up of assessment {self.assessment_id}"

    @property
    def keys_present(self) -> bool:
        return self.key_a_ciphertext is not None and self.key_b_ciphertext is not None


class ProbeRunStatus(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")


class ProbeRun(models.Model):
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="+")
    assessment = models.ForeignKey(Assessment, on_delete=models.CASCADE, related_name="probe_runs")
    setup = models.ForeignKey(ProbeSetup, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(
        _("status"), max_length=10, choices=ProbeRunStatus.choices, default=ProbeRunStatus.QUEUED
    )
    # How the probe was asked to run (the budget is already capped by the authorisation).
    checks = models.JSONField(default=list)
    samples = models.PositiveIntegerField()
    prefix_tokens = models.PositiveIntegerField()
    budget_tokens = models.PositiveBigIntegerField()
    # For a page to poll: {"percent", "check", "requests_sent", "requests_planned",
    # "tokens_spent", "checks_done"}.
    progress = models.JSONField(default=dict)
    # The probe's result JSON (probes.result.ProbeResult.to_dict()) once done.
    result = models.JSONField(null=True, blank=True)
    tokens_spent = models.PositiveBigIntegerField(default=0)
    requests_sent = models.PositiveIntegerField(default=0)
    # Set before the first request goes out: from then on the run is never retried.
    first_request_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # The result attached to the assessment as PRB-02 evidence when the run finished (None when
    # the questionnaire has no probe question, e.g. version 1).
    evidence = models.OneToOneField(
        EvidenceFile, on_delete=models.SET_NULL, null=True, blank=True, related_name="probe_run"
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=ProbeRunStatus.values), name="probes_status_valid"
            ),
            models.CheckConstraint(
                condition=~models.Q(status=ProbeRunStatus.DONE) | models.Q(result__isnull=False),
                name="probes_done_has_result",
            ),
        ]

    def __str__(self) -> str:
        return f"probe run {self.pk} ({self.status})"

    @property
    def is_pending(self) -> bool:
        return self.status in (ProbeRunStatus.QUEUED, ProbeRunStatus.RUNNING)

    @property
    def outcomes(self) -> dict[str, str]:
        """`{check: result}` of a finished run (what ruleset v2 reads as probe.<check>)."""
        return result_outcomes(self.result)
