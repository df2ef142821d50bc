"""Presenters: what the member pages, the vendor portal and the PDF show, built in one place.

Each takes the reader's language as an argument and returns plain data (dataclasses of
strings) that templates only lay out, so the same answer, finding, evidence line or chart reads
the same on every page and in both editions of the report:

- `answers`: `answer_text`, `answer_sections` (answered / not answered / not applicable);
- `findings`: `finding_views`, `evidence_lines`, `score_explanation`;
- `evidence`: `describe_evidence`, `evidence_notes`, `evidence_views` (the PDF chapter);
- `progress`: `section_progress`;
- `charts`: `coverage_chart`, `severity_chart` (drawn by templates/charts/_bar_chart.svg.html);
- `audit`: `audit_rows`;
- `formats`: numbers, tokens, dates and times (one format per language, one clock).
"""
