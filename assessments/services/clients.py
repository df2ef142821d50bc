"""A consultancy's client workspaces: opened by its owner, copied between, ended by the client.

A client workspace is an organization of its own: its data is reached only through its own
memberships, like any organization's (accounts.tenancy), so a consultancy's member who is not a
member of the client gets a 404 there. A `ClientEngagement` records which consultancy opened
it; while it is active, the client's outputs say "prepared by <consultancy>". Copying between
two organizations writes new rows in the target (a copy, never a link), and only a member of
both may copy. Opening, copying and ending are recorded in the audit trail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import ClientEngagement, Membership, Organization
from accounts.roles import Capability, Role
from accounts.services import (
    membership_remove,
    organization_create,
    organization_update_branding,
)
from accounts.tenancy import OrgContext
from core.db import lock_row
from core.errors import ConflictError, ForbiddenError, ServiceError
from questionnaires.models import CatalogStatus
from questionnaires.selectors import questionnaires_owned_by
from scoring.catalogue_files.problems import CatalogueInvalid
from scoring.models import Ruleset
from scoring.selectors import rulesets_owned_by
from scoring.services import catalogue_draft_create, catalogue_publish

from ..audit import audit_record
from ..models import RiskTier, Vendor
from .reassessment import reassessment_policy_for, reassessment_policy_update
from .vendors import vendor_create

# The vendor fields a copy carries (not the organization, nor the dates).
VENDOR_COPIED_FIELDS = ("name", "website", "contact_name", "contact_email", "notes")


@transaction.atomic
def client_open(*, member: OrgContext, name: str, channel: str) -> Organization:
    """Open a client workspace from a consultancy: a new organization, in the consultancy's
    time zone, whose owner is `member` (the consultancy's owner), recorded as the consultancy's
    client. The client's own people are then invited as members, like any organization's."""
    consultancy = member.organization
    if not consultancy.is_consultancy:
        raise ForbiddenError(
            {"permission_denied": [_("Only a consultancy opens client workspaces.")]}
        )
    member.require(Capability.MANAGE_MEMBERS)
    client = organization_create(name=name, owner_email=member.user.email)
    if client.time_zone != consultancy.time_zone:
        client.time_zone = consultancy.time_zone
        client.save(update_fields=["time_zone"])
    ClientEngagement.objects.create(consultancy=consultancy, client=client, opened_by=member.user)
    for organization in (client, consultancy):  # each trail tells its side
        audit_record(
            organization=organization,
            action="client.opened",
            actor=member.user,
            channel=channel,
            detail={"consultancy": consultancy.name, "client": client.name},
        )
    return client


@transaction.atomic
def client_engagement_end(*, member: OrgContext, channel: str) -> ClientEngagement:
    """End the access of the consultancy that opened `member`'s organization (an owner's
    decision): every membership in the client of a member of the consultancy ends (their
    tokens revoked), their pending invitations are withdrawn, and the client's outputs no
    longer name the consultancy. Refused while no owner of the client's own would remain."""
    member.require(Capability.MANAGE_MEMBERS)
    client = member.organization
    lock_row(Organization, client.pk)
    engagement = (
        ClientEngagement.objects.select_for_update()
        .select_related("consultancy")
        .filter(client=client, ended_at__isnull=True)
        .first()
    )
    if engagement is None:
        raise ConflictError({"engagement": [_("No consultancy has access to this organization.")]})
    consultancy = engagement.consultancy
    consultancy_people = Membership.objects.filter(organization=consultancy).values("user_id")
    leaving = list(
        Membership.objects.filter(organization=client, user_id__in=consultancy_people)
        .select_related("user")
        .order_by("pk")
    )
    staying_owners = (
        Membership.objects.filter(organization=client, role=Role.OWNER)
        .exclude(pk__in=[membership.pk for membership in leaving])
        .exists()
    )
    if not staying_owners:
        raise ServiceError(
            {
                "engagement": [
                    _(
                        "Invite an owner of %(client)s who is not a member of %(consultancy)s "
                        "first: the organization must keep an owner."
                    )
                    % {"client": client.name, "consultancy": consultancy.name}
                ]
            }
        )
    # The actor's own membership last: until then they may remove the others.
    leaving.sort(key=lambda membership: membership.user_id == member.user.pk)
    for membership in leaving:
        membership_remove(membership=membership, actor=member.user)
    client.invitations.filter(user_id__in=consultancy_people).delete()
    engagement.ended_at = timezone.now()
    engagement.ended_by = member.user
    engagement.save(update_fields=["ended_at", "ended_by"])
    detail = {
        "consultancy": consultancy.name,
        "client": client.name,
        "memberships_ended": [membership.user.email for membership in leaving],
    }
    for organization in (client, consultancy):
        audit_record(
            organization=organization,
            action="client.engagement_ended",
            actor=member.user,
            channel=channel,
            detail=detail,
        )
    return engagement


@dataclass
class CopyResult:
    vendors: list[str] = field(default_factory=list)
    vendors_skipped: list[str] = field(default_factory=list)  # the target has them already
    policy: bool = False
    branding: bool = False
    catalogues: list[str] = field(default_factory=list)  # "slug@version" of the rulesets
    catalogues_skipped: list[str] = field(default_factory=list)  # the target has them already


@transaction.atomic
def client_copy(
    *,
    source: OrgContext,
    target: OrgContext,
    vendor_ids: list[int],
    policy: bool,
    branding: bool,
    channel: str,
    catalogue_ids: Sequence[int] = (),
) -> CopyResult:
    """Copy vendors, the reassessment policy, branding (colour, logo, time zone: not the
    names) and published questionnaires with their rulesets (`catalogue_ids`: the source's
    ruleset versions) from `source` to `target`, both the same user's memberships. New rows in
    the target: later changes in one organization never show in the other."""
    if source.user.pk != target.user.pk:
        raise ForbiddenError({"permission_denied": [_("Only a member of both may copy.")]})
    if source.organization.pk == target.organization.pk:
        raise ServiceError({"source": [_("Choose another organization to copy from.")]})
    source.require(Capability.VIEW)
    if vendor_ids:
        target.require(Capability.EDIT_ASSESSMENT)
    if policy:
        target.require(Capability.MANAGE_POLICY)
    if branding:
        target.require(Capability.MANAGE_BRANDING)
    if catalogue_ids:
        target.require(Capability.MANAGE_CATALOGUES)
    if not (vendor_ids or policy or branding or catalogue_ids):
        raise ServiceError({"what": [_("Choose at least one thing to copy.")]})
    vendors = list(Vendor.objects.filter(organization=source.organization, pk__in=vendor_ids))
    if len(vendors) != len(set(vendor_ids)):
        raise ServiceError({"vendors": [_("Choose vendors of the organization you copy from.")]})
    result = CopyResult()
    existing = set(
        Vendor.objects.filter(
            organization=target.organization, name__in=[vendor.name for vendor in vendors]
        ).values_list("name", flat=True)
    )
    for vendor in sorted(vendors, key=lambda vendor: vendor.name):
        if vendor.name in existing:
            result.vendors_skipped.append(vendor.name)
            continue
        vendor_create(
            organization=target.organization,
            actor=target.user,
            channel=channel,
            **{name: getattr(vendor, name) for name in VENDOR_COPIED_FIELDS},
        )
        result.vendors.append(vendor.name)
    if policy:
        copied = reassessment_policy_for(organization=source.organization)
        reassessment_policy_update(
            member=target,
            days={tier: getattr(copied, f"{tier}_days") for tier in RiskTier.values},
            channel=channel,
        )
        result.policy = True
    if branding:
        _copy_branding(source=source.organization, target=target)
        result.branding = True
    _copy_catalogues(source=source, target=target, ruleset_ids=catalogue_ids, result=result)
    audit_record(
        organization=target.organization,
        action="organization.copied_from",
        actor=target.user,
        channel=channel,
        detail={
            "from_organization": source.organization.pk,
            "vendors": result.vendors,
            "vendors_skipped": result.vendors_skipped,
            "policy": result.policy,
            "branding": result.branding,
            "catalogues": result.catalogues,
        },
    )
    return result


def _copy_catalogues(
    *, source: OrgContext, target: OrgContext, ruleset_ids: Sequence[int], result: CopyResult
) -> None:
    """Each chosen published ruleset of the source, with its questionnaire unless the target
    has that version already, becomes the target's own published catalogue: uploaded and
    published through the same services as a file would be, so it is checked the same way."""
    if not ruleset_ids:
        return
    chosen = list(
        rulesets_owned_by(organization=source.organization)
        .filter(status=CatalogStatus.PUBLISHED, pk__in=ruleset_ids)
        .order_by("pk")  # in the order they were made: a questionnaire before its later rulesets
    )
    if len(chosen) != len(set(ruleset_ids)):
        raise ServiceError(
            {
                "catalogues": [
                    _("Choose published questionnaires of the organization you copy from.")
                ]
            }
        )
    for ruleset in chosen:
        owned = rulesets_owned_by(organization=target.organization)
        if owned.filter(slug=ruleset.slug, version=ruleset.version).exists():
            result.catalogues_skipped.append(ruleset.key)
            continue
        try:
            copied = catalogue_draft_create(
                context=target,
                document=_catalogue_document(ruleset, target),
                source_name=ruleset.key,
            )
            catalogue_publish(context=target, ruleset=copied.ruleset)
        except CatalogueInvalid as invalid:
            reasons = "; ".join(problem.text() for problem in invalid.problems[:3])
            raise ServiceError(
                {
                    "catalogues": [
                        _("%(key)s cannot be copied into this organization: %(reasons)s")
                        % {"key": ruleset.key, "reasons": reasons}
                    ]
                }
            ) from invalid
        result.catalogues.append(ruleset.key)


def _catalogue_document(ruleset: Ruleset, target: OrgContext) -> dict:
    """The upload document a ruleset version was published from: its content (its own
    framework references at the top, as a file has them) and its questionnaire's, unless the
    target published that questionnaire version already."""
    content = dict(ruleset.content)
    document: dict = {}
    frameworks = content.pop("frameworks", None)
    if frameworks:
        document["frameworks"] = frameworks
    questionnaire = ruleset.questionnaire
    has_questionnaire = (
        questionnaires_owned_by(organization=target.organization)
        .filter(
            slug=questionnaire.slug, version=questionnaire.version, status=CatalogStatus.PUBLISHED
        )
        .exists()
    )
    if not has_questionnaire:
        document["questionnaire"] = questionnaire.content
    document["ruleset"] = content
    return document


def _copy_branding(*, source: Organization, target: OrgContext) -> None:
    origin = Organization.objects.get(pk=source.pk)  # with its logo
    organization = Organization.objects.get(pk=target.organization.pk)
    organization_update_branding(
        organization=organization,
        actor=target.user,
        report_display_name=organization.report_display_name,
        brand_colour=origin.brand_colour,
        logo=bytes(origin.logo) if origin.has_logo and origin.logo else None,
        remove_logo=not origin.has_logo,
        time_zone=origin.time_zone,
    )
