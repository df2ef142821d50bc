"""Findings keep their evidence as data (kind, code, value, file, line, text) instead of the
plain lines they were stored as; this rewrites stored lines into that shape."""

import re

from django.db import migrations

_LOG_LINE = re.compile(r"^(?P<code>[A-Z]+-\d+) (?P<file>.+?) line (?P<line>\d+): ?(?P<text>.*)$", re.S)
_NAMED_VALUE = re.compile(r"^(?P<name>[A-Za-z][\w-]*) = (?P<value>.*)$", re.S)
_QUESTION_CODE = re.compile(r"^[A-Z]+-\d+$")


def _item(line):
    if isinstance(line, dict):
        return line
    text = str(line)
    if match := _LOG_LINE.match(text):
        return {"kind": "log", "code": match["code"], "file": match["file"],
                "line": int(match["line"]), "text": match["text"]}
    if match := _NAMED_VALUE.match(text):
        raw = match["value"]
        value = int(raw) if raw.isdigit() else raw
        if _QUESTION_CODE.match(match["name"]):
            return {"kind": "answer", "code": match["name"], "value": value}
        return {"kind": "derived", "name": match["name"], "value": value}
    return {"kind": "log", "text": text}


def forwards(apps, schema_editor):
    Finding = apps.get_model("assessments", "Finding")
    for finding in Finding.objects.iterator():
        items = [_item(line) for line in finding.evidence or []]
        if items != finding.evidence:
            Finding.objects.filter(pk=finding.pk).update(evidence=items)


class Migration(migrations.Migration):
    dependencies = [("assessments", "0001_initial")]
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
