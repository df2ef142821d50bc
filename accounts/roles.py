"""Who may do what: the one capability map every permission check goes through.

Kept free of the ORM so views, services, serializers and templates all ask the same
question the same way: ``role_can(membership.role, "review")``.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _


class Role(models.TextChoices):
    OWNER = "owner", _("Owner")
    ASSESSOR = "assessor", _("Assessor")
    REVIEWER = "reviewer", _("Reviewer")
    VIEWER = "viewer", _("Viewer")


class Capability(models.TextChoices):
    VIEW = "view", _("Read assessments, findings and reports")
    EDIT_ASSESSMENT = "edit_assessment", _("Create and edit assessments")
    ANSWER_USE_SECTION = "answer_use_section", _("Answer the USE section")
    INVITE_VENDOR = "invite_vendor", _("Invite vendors")
    # Separation of duties (a reviewer may not approve an assessment they submitted or
    # edited) depends on the assessment's history, so the assessments app checks it on
    # top of this capability.
    REVIEW = "review", _("Approve or reject assessments")
    MANAGE_MEMBERS = "manage_members", _("Manage members")
    MANAGE_BRANDING = "manage_branding", _("Manage branding")
    MANAGE_TOKENS = "manage_tokens", _("Manage one's own API tokens")
    # How often vendors are reassessed, and the outbox of the organization's emails.
    MANAGE_POLICY = "manage_policy", _("Set the reassessment policy and read the outbox")
    # Who did what to an assessment: every role reads the trail of its organization's
    # assessments (what it shows, each role can already read on the assessment's pages).
    READ_AUDIT = "read_audit", _("Read the audit trail of assessments")
    # Endpoints that other systems receive the organization's events at, signed.
    MANAGE_WEBHOOKS = "manage_webhooks", _("Manage webhooks")
    # The organization's own questionnaires and rulesets: upload, publish, share.
    MANAGE_CATALOGUES = "manage_catalogues", _("Upload, publish and share questionnaires")


# The owner holds every capability: a one-person consultancy has a single member, and
# a member has exactly one role.
ROLE_CAPABILITIES: dict[str, frozenset[str]] = {
    Role.OWNER: frozenset(Capability.values),
    Role.ASSESSOR: frozenset(
        {
            Capability.VIEW,
            Capability.EDIT_ASSESSMENT,
            Capability.ANSWER_USE_SECTION,
            Capability.INVITE_VENDOR,
            Capability.MANAGE_TOKENS,
            Capability.READ_AUDIT,
        }
    ),
    Role.REVIEWER: frozenset(
        {Capability.VIEW, Capability.REVIEW, Capability.MANAGE_TOKENS, Capability.READ_AUDIT}
    ),
    Role.VIEWER: frozenset({Capability.VIEW, Capability.MANAGE_TOKENS, Capability.READ_AUDIT}),
}


def role_can(role: str, capability: str) -> bool:
    """Whether ``role`` grants ``capability``.

    An unknown capability is a programming error (a typo would silently deny), so it
    raises; an unknown role grants nothing.
    """
    if capability not in Capability.values:
        raise ValueError(f"Unknown capability: {capability!r}")
    return capability in ROLE_CAPABILITIES.get(role, frozenset())
