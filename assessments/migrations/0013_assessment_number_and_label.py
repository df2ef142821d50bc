from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("assessments", "0012_vendor_updated_at"),
    ]

    operations = [
        migrations.AddField(
            model_name="assessment",
            name="number",
            field=models.PositiveIntegerField(null=True, verbose_name="number"),
        ),
        migrations.AddField(
            model_name="assessment",
            name="label",
            field=models.CharField(blank=True, max_length=80, verbose_name="label"),
        ),
    ]
