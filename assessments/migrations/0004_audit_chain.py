# The audit trail becomes tamper-evident: hash-chained, append-only (triggers), kept when what it
# names is deleted (PROTECT). Existing events are chained in id order per organization.

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def chain_existing_events(apps, schema_editor):
    from assessments.audit import audit_event_content, audit_event_hash

    AuditEvent = apps.get_model("assessments", "AuditEvent")
    AuditChainHead = apps.get_model("assessments", "AuditChainHead")
    organization_ids = AuditEvent.objects.values_list("organization_id", flat=True).distinct()
    for organization_id in organization_ids:
        previous, last_id = "", None
        events = AuditEvent.objects.filter(organization_id=organization_id).order_by("id")
        for event in events:
            digest = audit_event_hash(audit_event_content(event), previous)
            AuditEvent.objects.filter(pk=event.pk).update(previous_hash=previous, hash=digest)
            previous, last_id = digest, event.pk
        AuditChainHead.objects.create(
            organization_id=organization_id, last_event_id=last_id, hash=previous
        )


def install_triggers(apps, schema_editor):
    from assessments.audit_protection import audit_triggers_install

    audit_triggers_install(schema_editor.connection)


def remove_triggers(apps, schema_editor):
    from assessments.audit_protection import audit_triggers_remove

    audit_triggers_remove(schema_editor.connection)


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0002_organization_require_two_factor"),
        ("assessments", "0003_token_failure_count"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="auditevent",
            name="organization",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="audit_events",
                to="accounts.organization",
            ),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="assessment",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="audit_events",
                to="assessments.assessment",
            ),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="actor",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="auditevent",
            name="created_at",
            field=models.DateTimeField(db_index=True, default=django.utils.timezone.now),
        ),
        migrations.AddField(
            model_name="auditevent",
            name="previous_hash",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name="auditevent",
            name="hash",
            field=models.CharField(default="", max_length=64),
            preserve_default=False,
        ),
        migrations.CreateModel(
            name="AuditChainHead",
            fields=[
                (
                    "organization",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.PROTECT,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="accounts.organization",
                    ),
                ),
                ("last_event_id", models.PositiveBigIntegerField(null=True)),
                ("hash", models.CharField(blank=True, max_length=64)),
            ],
        ),
        migrations.RunPython(chain_existing_events, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="auditevent",
            constraint=models.UniqueConstraint(
                fields=("organization", "previous_hash"), name="audit_chain_no_fork"
            ),
        ),
        migrations.RunPython(install_triggers, remove_triggers),
    ]
