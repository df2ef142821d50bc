"""`<export:file_format>` in a URL: the formats an export is offered in."""

from django.urls import register_converter

from .exports import FORMATS


class ExportFormat:
    regex = "|".join(FORMATS)

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(ExportFormat, "export")
