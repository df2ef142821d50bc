"""Report numbers run per organization (issue 27): a sequence per organization and year
replaces the global one, and a number is unique within its organization.

No report is renumbered. Each organization's sequence starts after the highest number its own
reports already carry in that year, so a new number never repeats one of its old ones."""

import re

import django.db.models.deletion
from django.db import migrations, models

OLD_NUMBER = re.compile(r"^AVIA-(\d{4})-(\d+)$")


def seed_sequences(apps, schema_editor):
    Report = apps.get_model("reports", "Report")
    ReportNumberSequence = apps.get_model("reports", "ReportNumberSequence")
    highest: dict[tuple[int, int], int] = {}
    for organization_id, number in Report.objects.values_list("organization_id", "number"):
        match = OLD_NUMBER.match(number)
        if match is None:
            continue
        key = (organization_id, int(match.group(1)))
        highest[key] = max(highest.get(key, 0), int(match.group(2)))
    ReportNumberSequence.objects.bulk_create(
        ReportNumberSequence(organization_id=organization_id, year=year, last=last)
        for (organization_id, year), last in sorted(highest.items())
    )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0005_consultancy_and_client_engagements"),
        ("reports", "0003_report_include_threads"),
    ]

    operations = [
        migrations.DeleteModel(name="ReportNumberSequence"),
        migrations.CreateModel(
            name="ReportNumberSequence",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("year", models.PositiveIntegerField()),
                ("last", models.PositiveIntegerField(default=0)),
                (
                    "organization",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="report_number_sequences",
                        to="accounts.organization",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("organization", "year"),
                        name="reports_sequence_one_per_org_and_year",
                    )
                ],
            },
        ),
        migrations.AlterField(
            model_name="report",
            name="number",
            field=models.CharField(max_length=32, verbose_name="report number"),
        ),
        migrations.AddConstraint(
            model_name="report",
            constraint=models.UniqueConstraint(
                fields=("organization", "number"), name="reports_number_unique_per_org"
            ),
        ),
        migrations.RunPython(seed_sequences, migrations.RunPython.noop),
    ]
