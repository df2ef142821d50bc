from django.db import migrations


def number_in_creation_order(apps, schema_editor):
    """Each organization's assessments get #1, #2, … in the order they were created."""
    Assessment = apps.get_model("assessments", "Assessment")
    organization_ids = (
        Assessment.objects.order_by().values_list("organization_id", flat=True).distinct()
    )
    for organization_id in organization_ids:
        rows = list(
            Assessment.objects.filter(organization_id=organization_id)
            .order_by("created_at", "pk")
            .only("pk")
        )
        for number, row in enumerate(rows, start=1):
            row.number = number
        Assessment.objects.bulk_update(rows, ["number"], batch_size=1000)


class Migration(migrations.Migration):
    # Its own migration (and transaction): the next one alters the table these rows are in.
    dependencies = [
        ("assessments", "0013_assessment_number_and_label"),
    ]

    operations = [
        migrations.RunPython(number_in_creation_order, migrations.RunPython.noop),
    ]
