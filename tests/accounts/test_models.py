import pytest
from django.db import IntegrityError, transaction

from accounts.models import ApiToken, Membership, Organization


@pytest.mark.django_db
def test_the_database_refuses_a_second_membership_of_the_same_user(personas):
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(user=personas.ava, organization=personas.acme, role="viewer")


@pytest.mark.django_db
def test_the_database_refuses_an_unknown_role(personas):
    with pytest.raises(IntegrityError), transaction.atomic():
        Membership.objects.create(user=personas.oscar, organization=personas.acme, role="admin")


@pytest.mark.django_db
def test_the_database_refuses_organization_names_differing_only_in_case(personas):
    with pytest.raises(IntegrityError), transaction.atomic():
        Organization.objects.create(name="ACME PROCUREMENT", slug="acme-2")


@pytest.mark.django_db
def test_the_database_refuses_a_colour_that_is_not_hex(personas):
    with pytest.raises(IntegrityError), transaction.atomic():
        Organization.objects.filter(pk=personas.acme.pk).update(brand_colour="red")


@pytest.mark.django_db
def test_the_database_refuses_a_logo_without_content_type(personas):
    with pytest.raises(IntegrityError), transaction.atomic():
        Organization.objects.filter(pk=personas.acme.pk).update(logo=b"\x89PNG")


@pytest.mark.django_db
def test_the_database_refuses_a_logo_over_one_megabyte(personas):
    with pytest.raises(IntegrityError), transaction.atomic():
        Organization.objects.filter(pk=personas.acme.pk).update(
            logo=b"x" * (1024 * 1024 + 1), logo_content_type="image/png"
        )


@pytest.mark.django_db
def test_the_database_refuses_a_token_hash_that_is_not_sha256_hex(personas):
    with pytest.raises(IntegrityError), transaction.atomic():
        ApiToken.objects.create(
            user=personas.ava,
            organization=personas.acme,
            name="bad",
            key_prefix="avia_abc",
            key_hash="the-key-itself",
        )
