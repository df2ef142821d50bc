"""Which questionnaires and rulesets an organization sees is decided in one place: no page,
endpoint or service reads the catalogue tables without going through the selectors."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Where reading the tables directly is the point: the selectors, the writes of the catalogue
# (load_catalog, uploads), a scoring run's own ruleset by id, and the shipped catalogue by key.
ALLOWED = {
    "questionnaires/selectors.py",
    "scoring/selectors.py",
    "scoring/services.py",
    "assessments/services/scoring_runs.py",  # the run's ruleset, by its id
    "assessments/factories.py",  # the shipped questionnaire (organization__isnull=True)
}
READ = re.compile(r"\b(QuestionnaireVersion|Ruleset)\.objects\b")


def test_no_code_reads_the_catalogue_tables_outside_the_selectors():
    found = []
    apps = [folder for folder in ROOT.iterdir() if (folder / "apps.py").exists()]
    for path in (path for app in apps for path in app.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if "/migrations/" in relative:
            continue
        if relative not in ALLOWED and READ.search(path.read_text(encoding="utf-8")):
            found.append(relative)
    assert found == []
