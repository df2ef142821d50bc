"""Vendors: created and edited by members, each name once per organization."""

from __future__ import annotations

from typing import Any

from django.db import models, transaction
from django.utils.translation import gettext as _

from accounts.models import Organization, User
from core.errors import ConflictError, ServiceError
from core.text import text_fields_errors

from ..audit import audit_record
from ..models import Vendor


@transaction.atomic
def vendor_create(
    *, organization: Organization, actor: User, channel: str, **fields: Any
) -> Vendor:
    vendor = Vendor(organization=organization, **fields)
    _full_clean(vendor)
    vendor.save()
    audit_record(
        organization=organization,
        action="vendor.created",
        actor=actor,
        channel=channel,
        detail={"vendor": vendor.name},
    )
    return vendor


@transaction.atomic
def vendor_update(*, vendor: Vendor, actor: User, channel: str, **fields: Any) -> Vendor:
    for name, value in fields.items():
        setattr(vendor, name, value)
    _full_clean(vendor)
    vendor.save()
    audit_record(
        organization=vendor.organization,
        action="vendor.updated",
        actor=actor,
        channel=channel,
        detail={"vendor": vendor.name, "fields": sorted(fields)},
    )
    return vendor


def _full_clean(instance: Any) -> None:
    from django.core.exceptions import ValidationError

    text_problems = text_fields_errors(
        {
            field.name: (getattr(instance, field.attname), field.max_length)
            for field in type(instance)._meta.concrete_fields
            if isinstance(field, models.CharField | models.TextField)
        }
    )
    if text_problems:
        raise ServiceError(text_problems)
    try:
        instance.full_clean(exclude=["organization"])
    except ValidationError as exc:
        raise ServiceError(exc.message_dict) from exc
    model = type(instance)
    if model is Vendor and (
        Vendor.objects.filter(organization=instance.organization, name=instance.name)
        .exclude(pk=instance.pk)
        .exists()
    ):
        raise ConflictError({"name": [_("A vendor with this name already exists.")]})
