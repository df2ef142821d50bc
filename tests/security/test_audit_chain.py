"""The audit trail is append-only and tamper-evident: the ORM and the database refuse changes,
and `verify_audit` finds the first broken link when rows are edited or deleted behind their
back (raw SQL with the triggers dropped, as someone with database access could)."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.db.models import ProtectedError

from assessments.audit import audit_chain_verify, audit_event_content, audit_event_hash
from assessments.audit_protection import audit_triggers_remove
from assessments.models import AppendOnlyError, AuditEvent, Channel
from assessments.services.vendors import vendor_create


def verify(*args):
    out = io.StringIO()
    try:
        call_command("verify_audit", *args, stdout=out)
    except SystemExit as exit_:
        return exit_.code, out.getvalue()
    return 0, out.getvalue()


def events_of(organization):
    return list(AuditEvent.objects.filter(organization=organization).order_by("id"))


def raw(sql, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


@pytest.fixture
def trail(scored, personas):
    """Acme's trail after creating, answering, submitting and scoring an assessment."""
    events = events_of(personas.acme)
    assert len(events) >= 4
    return events


@pytest.mark.django_db
def test_each_event_is_chained_to_the_one_before(trail, personas):
    assert trail[0].previous_hash == ""
    for before, after in zip(trail, trail[1:], strict=False):
        assert after.previous_hash == before.hash
    for event in trail:
        assert event.hash == audit_event_hash(audit_event_content(event), event.previous_hash)
    assert audit_chain_verify(organization=personas.acme).ok
    status, out = verify()
    assert status == 0
    assert f"OK acme-procurement: {len(trail)} events" in out
    assert "OK other-org: 0 events" in out


@pytest.mark.django_db
def test_the_orm_refuses_every_change(trail):
    event = trail[0]
    with pytest.raises(AppendOnlyError):
        AuditEvent.objects.filter(pk=event.pk).update(action="forged")
    with pytest.raises(AppendOnlyError):
        AuditEvent.objects.filter(pk=event.pk).delete()
    with pytest.raises(AppendOnlyError):
        event.delete()
    event.action = "forged"
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        AuditEvent.objects.bulk_update([event], ["action"])
    with pytest.raises(AppendOnlyError):
        AuditEvent.objects.bulk_create([AuditEvent(organization_id=event.organization_id)])
    assert AuditEvent.objects.get(pk=event.pk).action != "forged"


@pytest.mark.django_db
def test_the_database_refuses_raw_updates_and_deletes(trail):
    event = trail[0]
    for sql in (
        "UPDATE assessments_auditevent SET action = 'forged' WHERE id = %s",
        "DELETE FROM assessments_auditevent WHERE id = %s",
    ):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            raw(sql, [event.pk])
    assert AuditEvent.objects.filter(pk=event.pk, action=event.action).exists()


@pytest.mark.django_db
def test_events_outlive_nothing_they_name(trail, personas, scored):
    with pytest.raises(ProtectedError), transaction.atomic():
        personas.acme.delete()
    with pytest.raises(ProtectedError), transaction.atomic():
        scored.delete()
    with pytest.raises(ProtectedError), transaction.atomic():
        personas.ava.delete()
    assert len(events_of(personas.acme)) == len(trail)


@pytest.mark.django_db
def test_verify_audit_finds_an_edited_event(trail, personas):
    audit_triggers_remove(connection)
    edited = trail[2]
    raw(
        "UPDATE assessments_auditevent SET actor_label = %s WHERE id = %s",
        ["someone-else@acme.test", edited.pk],
    )
    status, out = verify("--organization", "acme-procurement")
    assert status == 1
    assert f"BROKEN acme-procurement: event {edited.pk}: its content does not match" in out
    assert "(2 events before it are intact)" in out


@pytest.mark.django_db
def test_verify_audit_finds_an_edit_that_recomputed_the_hash(trail):
    audit_triggers_remove(connection)
    edited, following = trail[1], trail[2]
    edited.detail = {"forged": True}
    forged_hash = audit_event_hash(audit_event_content(edited), edited.previous_hash)
    as_json = "%s::jsonb" if connection.vendor == "postgresql" else "%s"
    raw(
        f"UPDATE assessments_auditevent SET detail = {as_json}, hash = %s WHERE id = %s",
        ['{"forged": true}', forged_hash, edited.pk],
    )
    status, out = verify()
    assert status == 1
    assert f"event {following.pk}: it does not follow the event before it" in out


@pytest.mark.django_db
def test_verify_audit_finds_a_deleted_event(trail):
    audit_triggers_remove(connection)
    deleted, following = trail[1], trail[2]
    raw("DELETE FROM assessments_auditevent WHERE id = %s", [deleted.pk])
    status, out = verify()
    assert status == 1
    assert f"event {following.pk}: it does not follow the event before it" in out


@pytest.mark.django_db
def test_verify_audit_finds_deleted_newest_events(trail):
    audit_triggers_remove(connection)
    raw("DELETE FROM assessments_auditevent WHERE id = %s", [trail[-1].pk])
    status, out = verify()
    assert status == 1
    assert f"event {trail[-1].pk}: the newest events are missing" in out


@pytest.mark.django_db
def test_each_organization_has_its_own_chain(trail, personas):
    vendor_create(
        organization=personas.other, actor=personas.oscar, channel=Channel.WEB, name="Elsewhere"
    )
    (first,) = events_of(personas.other)
    assert first.previous_hash == ""
    # A new event of Acme still follows Acme's last one.
    vendor_create(organization=personas.acme, actor=personas.ava, channel=Channel.WEB, name="B")
    assert events_of(personas.acme)[-1].previous_hash == trail[-1].hash
    assert verify()[0] == 0


@pytest.mark.django_db
def test_an_unknown_organization_is_an_error(personas):
    with pytest.raises(CommandError, match="no organization"):
        call_command("verify_audit", "--organization", "nobody")
