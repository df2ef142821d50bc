from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_merge_two_factor_and_time_zone"),
        ("assessments", "0014_number_existing_assessments"),
    ]

    operations = [
        migrations.AlterField(
            model_name="assessment",
            name="number",
            field=models.PositiveIntegerField(verbose_name="number"),
        ),
        migrations.AddConstraint(
            model_name="assessment",
            constraint=models.UniqueConstraint(
                fields=("organization", "number"), name="unique_assessment_number_per_org"
            ),
        ),
    ]
