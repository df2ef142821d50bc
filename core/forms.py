"""The one way a form looks: Django's form rendering pointed at the project's templates."""

from __future__ import annotations

from django.forms.renderers import TemplatesSetting


class AviaFormRenderer(TemplatesSetting):
    """`{{ form }}`, `form.as_div` and `{{ field.as_field_group }}` render through
    templates/forms/form.html and the one field partial (assessments/_field.html: label, help,
    error beside the field), so a new page's form looks like every other without extra markup."""

    form_template_name = "forms/form.html"
    field_template_name = "assessments/_field.html"
