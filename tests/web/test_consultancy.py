"""Consultancies (issue 27, item 1): a consultancy's owner opens client workspaces from the web,
invites the client's people, copies between clients (a copy, never a link), and the client ends
the consultancy's access; each step is in the audit trail."""

import io
from pathlib import Path

import pytest
from django.urls import reverse
from PIL import Image

from accounts.models import ClientEngagement, Membership, Organization, OrganizationKind
from accounts.selectors import clients_of, preparing_consultancy
from accounts.services import organization_create, organization_update_branding
from accounts.tenancy import org_context_of
from assessments.models import AuditEvent, Channel, Vendor
from assessments.services.clients import client_copy, client_engagement_end, client_open
from assessments.services.reassessment import reassessment_policy_for, reassessment_policy_update
from assessments.services.vendors import vendor_create
from core.errors import ConflictError, ForbiddenError, ServiceError
from questionnaires.models import QuestionnaireVersion
from tests.personas import join

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def helix(personas):
    """Helix Advisory, a consultancy: Hana its owner, Cole its assessor (no client's member)."""
    consultancy = organization_create(
        name="Helix Advisory", owner_email="hana@helix.test", kind=OrganizationKind.CONSULTANCY
    )
    hana = consultancy.memberships.get().user
    join(consultancy, personas.ava, "assessor", hana)  # Ava of Acme also works for Helix
    cole = join(consultancy, organization_create_user("cole@helix.test"), "assessor", hana).user
    return consultancy, hana, cole


def organization_create_user(email):
    from accounts.models import User

    return User.objects.create_user(email=email, password="x")


def opened(helix, name):
    consultancy, hana, _cole = helix
    return client_open(
        member=org_context_of(user=hana, organization=consultancy), name=name, channel=Channel.WEB
    )


def copy_from(source, target, *, vendor_ids=(), policy=False, branding=False, catalogue_ids=()):
    """`client_copy` from the web, copying only what the test names."""
    return client_copy(
        source=source,
        target=target,
        vendor_ids=list(vendor_ids),
        policy=policy,
        branding=branding,
        catalogue_ids=list(catalogue_ids),
        channel=Channel.WEB,
    )


def test_the_owner_opens_a_client_and_becomes_its_owner(helix):
    consultancy, hana, _cole = helix
    client = opened(helix, "Blue Bank")

    assert Membership.objects.get(organization=client, user=hana).role == "owner"
    assert [e.client for e in clients_of(consultancy=consultancy)] == [client]
    assert preparing_consultancy(organization=client) == consultancy
    assert client.time_zone == consultancy.time_zone
    for organization in (client, consultancy):
        event = AuditEvent.objects.get(organization=organization, action="client.opened")
        assert event.detail == {"consultancy": "Helix Advisory", "client": "Blue Bank"}


def test_only_a_consultancys_owner_opens_clients(helix, personas):
    consultancy, _hana, cole = helix
    with pytest.raises(ForbiddenError):
        client_open(
            member=org_context_of(user=cole, organization=consultancy), name="X", channel="web"
        )
    with pytest.raises(ForbiddenError):  # an owner, but not of a consultancy
        client_open(
            member=org_context_of(user=personas.alice, organization=personas.acme),
            name="X",
            channel="web",
        )
    assert not Organization.objects.filter(name="X").exists()


def test_a_copy_is_new_rows_of_the_target_and_only_a_member_of_both_copies(helix):
    consultancy, hana, cole = helix
    blue, green = opened(helix, "Blue Bank"), opened(helix, "Green Grocer")
    in_blue = org_context_of(user=hana, organization=blue)
    in_green = org_context_of(user=hana, organization=green)
    inferno = vendor_create(
        organization=blue, actor=hana, channel="web", name="Inferno AI", website="https://i.test"
    )
    vendor_create(organization=blue, actor=hana, channel="web", name="Not copied")
    reassessment_policy_update(
        member=in_blue, days={"critical": 30, "high": 60, "medium": 90, "low": 120}, channel="web"
    )
    png = io.BytesIO()
    Image.new("RGB", (4, 4), "navy").save(png, "PNG")
    organization_update_branding(
        organization=blue,
        actor=hana,
        report_display_name="Blue Bank plc",
        brand_colour="#123456",
        logo=png.getvalue(),
        time_zone="Europe/London",
    )

    result = copy_from(in_blue, in_green, vendor_ids=[inferno.pk], policy=True, branding=True)

    assert result.vendors == ["Inferno AI"]
    copy = Vendor.objects.get(organization=green)
    assert (copy.name, copy.website) == ("Inferno AI", "https://i.test")
    assert copy.pk != inferno.pk
    assert reassessment_policy_for(organization=green).critical_days == 30
    green.refresh_from_db()
    assert (green.brand_colour, green.time_zone, green.has_logo) == (
        "#123456",
        "Europe/London",
        True,
    )
    assert green.report_display_name == ""  # names stay the target's own
    event = AuditEvent.objects.get(organization=green, action="organization.copied_from")
    assert event.detail["from_organization"] == blue.pk
    assert event.detail["vendors"] == ["Inferno AI"]
    # A copy, not a link: a later change in Blue does not show in Green.
    inferno.website = "https://changed.test"
    inferno.save()
    copy.refresh_from_db()
    assert copy.website == "https://i.test"
    # Again: the vendor is there already, left as it is.
    again = copy_from(in_blue, in_green, vendor_ids=[inferno.pk])
    assert (again.vendors, again.vendors_skipped) == ([], ["Inferno AI"])
    # Another organization's vendor id is refused.
    other = vendor_create(organization=consultancy, actor=hana, channel="web", name="Helix's")
    with pytest.raises(ServiceError):
        copy_from(in_blue, in_green, vendor_ids=[other.pk])
    # Cole belongs to neither: he has no context there to copy with.
    assert not Membership.objects.filter(user=cole, organization__in=[blue, green]).exists()


def test_the_client_ends_the_consultancys_access(helix, personas):
    consultancy, hana, _cole = helix
    client = opened(helix, "Blue Bank")
    in_client = org_context_of(user=hana, organization=client)
    join(client, personas.ava, "assessor", hana)  # a consultancy member working in the client
    # Nobody of the client's own is an owner yet: ending would leave it without one.
    with pytest.raises(ServiceError, match="must keep an owner"):
        client_engagement_end(member=in_client, channel="web")
    bo = join(client, organization_create_user("bo@blue.test"), "owner", hana).user

    engagement = client_engagement_end(
        member=org_context_of(user=bo, organization=client), channel="web"
    )

    assert engagement.ended_at is not None and engagement.ended_by == bo
    assert list(client.memberships.values_list("user__email", flat=True)) == ["bo@blue.test"]
    assert preparing_consultancy(organization=client) is None
    assert list(clients_of(consultancy=consultancy)) == []
    assert ClientEngagement.objects.get(client=client).consultancy == consultancy  # kept
    event = AuditEvent.objects.get(organization=client, action="client.engagement_ended")
    assert sorted(event.detail["memberships_ended"]) == ["ava@acme.test", "hana@helix.test"]
    assert AuditEvent.objects.filter(
        organization=consultancy, action="client.engagement_ended"
    ).exists()
    with pytest.raises(ConflictError):
        client_engagement_end(member=org_context_of(user=bo, organization=client), channel="web")


# -- pages ---------------------------------------------------------------------------------


def test_the_owner_opens_a_client_from_the_web_and_lands_on_its_members(client, helix):
    consultancy, hana, _cole = helix
    client.force_login(hana)

    response = client.post(
        reverse("assessments:clients", args=[consultancy.slug]), {"name": "Blue Bank"}
    )

    blue = Organization.objects.get(name="Blue Bank")
    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:members", args=[blue.slug])
    page = client.get(response["Location"]).content.decode()
    assert "Helix Advisory opened this organization" in page
    # The list links each client's workspace with ?org=, and the header names the client.
    listing = client.get(reverse("assessments:clients", args=[consultancy.slug])).content.decode()
    assert f"/?org={blue.slug}" in listing
    dashboard = client.get(f"/?org={blue.slug}").content.decode()
    assert "selected>Blue Bank</option>" in dashboard
    organizations = client.get(reverse("accounts:organizations")).content.decode()
    assert 'Helix Advisory <span class="badge">Consultancy</span>' in organizations


def test_a_bad_name_is_a_400_naming_the_field(client, helix):
    consultancy, hana, _cole = helix
    client.force_login(hana)
    response = client.post(reverse("assessments:clients", args=[consultancy.slug]), {"name": ""})
    assert response.status_code == 400
    assert "name" in response.context["form"].errors
    assert Organization.objects.count() == 3


def test_the_consultancys_assessor_reads_the_list_but_opens_nothing(client, helix):
    consultancy, _hana, cole = helix
    blue = opened(helix, "Blue Bank")
    client.force_login(cole)
    page = client.get(reverse("assessments:clients", args=[consultancy.slug]))
    assert page.status_code == 200
    assert "You are not a member of this client." in page.content.decode()
    assert (
        client.post(
            reverse("assessments:clients", args=[consultancy.slug]), {"name": "X"}
        ).status_code
        == 403
    )
    # Not a member of Blue Bank: its pages are a 404 to him.
    assert client.get(f"/?org={blue.slug}").status_code == 404
    assert client.get(reverse("assessments:client_copy", args=[blue.slug])).status_code == 404
    assert (
        client.get(
            reverse("assessments:client_copy", args=[consultancy.slug]) + f"?from={blue.slug}"
        ).status_code
        == 403  # not an owner of Helix either
    )


def test_copy_pages_from_a_source_the_member_does_not_belong_to_are_404(client, helix, personas):
    _consultancy, hana, _cole = helix
    blue = opened(helix, "Blue Bank")
    client.force_login(hana)
    url = reverse("assessments:client_copy", args=[blue.slug])
    assert client.get(f"{url}?from={personas.acme.slug}").status_code == 404
    assert client.post(url, {"source": personas.acme.slug, "policy": "on"}).status_code == 404


def test_copying_from_the_web(client, helix):
    _consultancy, hana, _cole = helix
    blue, green = opened(helix, "Blue Bank"), opened(helix, "Green Grocer")
    inferno = vendor_create(organization=blue, actor=hana, channel="web", name="Inferno AI")
    client.force_login(hana)
    url = reverse("assessments:client_copy", args=[green.slug])
    assert "Blue Bank" in client.get(url).content.decode()
    form = client.get(f"{url}?from={blue.slug}").content.decode()
    assert "Inferno AI" in form

    response = client.post(
        url,
        {
            "source": blue.slug,
            "vendors": [inferno.pk],
            "policy": "on",
            "page_organization": green.pk,
        },
    )

    assert response.status_code == 302
    assert Vendor.objects.filter(organization=green, name="Inferno AI").exists()
    page = client.get(response.url).content.decode()
    assert "Vendors copied from Blue Bank to Green Grocer: Inferno AI." in page
    again = client.post(
        url, {"source": blue.slug, "vendors": [inferno.pk], "page_organization": green.pk}
    )
    assert (
        "Green Grocer already has Inferno AI: left as it is."
        in client.get(again.url).content.decode()
    )
    nothing = client.post(url, {"source": blue.slug, "page_organization": green.pk})
    assert nothing.status_code == 400
    assert "Choose at least one thing to copy." in nothing.content.decode()


def test_the_client_ends_access_from_its_members_page(client, helix):
    _consultancy, hana, _cole = helix
    blue = opened(helix, "Blue Bank")
    bo = join(blue, organization_create_user("bo@blue.test"), "owner", hana).user
    client.force_login(bo)
    end = reverse("assessments:client_engagement_end", args=[blue.slug])
    assert end in client.get(reverse("accounts:members", args=[blue.slug])).content.decode()
    assert "End access" in client.get(end).content.decode()

    response = client.post(end, {"page_organization": blue.pk})

    assert response.status_code == 302
    assert not Membership.objects.filter(user=hana, organization=blue).exists()
    assert client.get(end).status_code == 404  # nothing left to end
    client.force_login(hana)
    assert client.get(f"/?org={blue.slug}").status_code == 404


def _published_catalogue(member, name="vendor-dd-v1.yaml"):
    from scoring.services import catalogue_publish, catalogue_upload

    data = (ROOT / "tests" / "fixtures" / "catalogues" / name).read_bytes()
    draft = catalogue_upload(context=member, data=data, source_name=name)
    return catalogue_publish(context=member, ruleset=draft.ruleset)


def test_a_published_questionnaire_is_copied_as_the_targets_own(helix):
    """Catalogue choices carry over as a copy: the client gets its own published version (same
    content, its own rows), usable there after the source's is gone; copying again skips it."""
    from questionnaires.selectors import questionnaire_visible
    from scoring.models import Ruleset

    _consultancy, hana, _cole = helix
    blue, green = opened(helix, "Blue Bank"), opened(helix, "Green Grocer")
    source = org_context_of(user=hana, organization=blue)
    target = org_context_of(user=hana, organization=green)
    ruleset = _published_catalogue(source)

    result = copy_from(source, target, catalogue_ids=[ruleset.pk])

    copy = Ruleset.objects.get(organization=green, slug=ruleset.slug, version=ruleset.version)
    assert result.catalogues == [ruleset.key]
    assert copy.pk != ruleset.pk and copy.content_hash == ruleset.content_hash
    assert copy.questionnaire.organization_id == green.pk
    assert copy.questionnaire.content_hash == ruleset.questionnaire.content_hash
    questionnaire = ruleset.questionnaire
    assert (
        questionnaire_visible(
            organization=green, slug=questionnaire.slug, version=questionnaire.version
        )
        == copy.questionnaire
    )
    event = AuditEvent.objects.get(organization=green, action="organization.copied_from")
    assert event.detail["catalogues"] == [ruleset.key]

    again = copy_from(source, target, catalogue_ids=[ruleset.pk])
    assert (again.catalogues, again.catalogues_skipped) == ([], [ruleset.key])


def test_only_a_published_catalogue_of_the_source_is_copied(helix, personas):
    from scoring.services import catalogue_upload

    _consultancy, hana, _cole = helix
    blue, green = opened(helix, "Blue Bank"), opened(helix, "Green Grocer")
    source = org_context_of(user=hana, organization=blue)
    target = org_context_of(user=hana, organization=green)
    data = (ROOT / "tests" / "fixtures" / "catalogues" / "vendor-dd-v1.yaml").read_bytes()
    draft = catalogue_upload(context=source, data=data, source_name="dd.yaml")

    with pytest.raises(ServiceError) as refused:
        copy_from(source, target, catalogue_ids=[draft.ruleset.pk])
    assert "catalogues" in refused.value.errors
    assert not QuestionnaireVersion.objects.filter(organization=green).exists()


def test_copying_a_questionnaire_from_the_web(client, helix):
    from scoring.models import Ruleset

    _consultancy, hana, _cole = helix
    blue, green = opened(helix, "Blue Bank"), opened(helix, "Green Grocer")
    ruleset = _published_catalogue(org_context_of(user=hana, organization=blue))
    client.force_login(hana)
    url = reverse("assessments:client_copy", args=[green.slug])
    form = client.get(f"{url}?from={blue.slug}").content.decode()
    assert ruleset.key in form
    # The messages say what was copied in the reader's language (the same two as for vendors).
    client.cookies["django_language"] = "zh-hant"

    response = client.post(
        url, {"source": blue.slug, "catalogues": [ruleset.pk], "page_organization": green.pk}
    )

    assert response.status_code == 302
    assert Ruleset.objects.filter(organization=green, slug=ruleset.slug).exists()
    page = client.get(response.url).content.decode()
    assert f"已由 Blue Bank 複製問卷到 Green Grocer：{ruleset.key}。" in page
    again = client.post(
        url, {"source": blue.slug, "catalogues": [ruleset.pk], "page_organization": green.pk}
    )
    assert f"Green Grocer 已有 {ruleset.key}：保持不變。" in client.get(again.url).content.decode()
