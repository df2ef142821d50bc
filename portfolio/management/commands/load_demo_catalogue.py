"""`manage.py load_demo_catalogue` — the demo organization's own questionnaire: "hk-genai-provider"
v1 (examples/catalogues/hk-genai-provider-v1.yaml), a Hong Kong regulatory questionnaire for
generative AI providers with its ruleset, loaded the way any organization loads one of its own
(never by `load_catalog`: it is not part of the shipped catalogue), then an example assessment of a
provider answering it (examples/catalogues/hk-genai-provider-example.json), scored, with its PDF
report in English and in Traditional Chinese.

Run by `make run` after `load_demo` (which makes the organization and its members). Idempotent:
a version already published is not loaded again, and the example assessment is made once.

It lives in the top app (portfolio) because it uses the catalogue, the assessments and the
reports (reports and probes, where `load_demo` lives, may not import each other).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts.models import Organization, User
from accounts.tenancy import OrgContext, org_context_of
from assessments import factories
from assessments.models import Assessment, Channel
from probes.management.commands.load_demo import MEMBERS, ORGANIZATION
from questionnaires.models import QuestionnaireVersion
from questionnaires.spec import CatalogError, QuestionnaireSpec, parse_questionnaire
from reports.models import Report
from reports.services import report_render, report_request
from scoring.spec import (
    FrameworkRef,
    RulesetSpec,
    load_frameworks_file,
    parse_frameworks,
    parse_ruleset,
)

DOCUMENT = Path(settings.BASE_DIR) / "examples" / "catalogues" / "hk-genai-provider-v1.yaml"
# The example answers, by their name under examples/ (`factories.example`).
EXAMPLE = "catalogues/hk-genai-provider-example"
QUESTIONNAIRE_KEY = "hk-genai-provider@1"
VENDOR_NAME = "Example GenAI Assistant Ltd (HK)"
REPORT_LANGUAGES = ("en", "zh-hant")


@dataclass(frozen=True)
class CatalogueDocument:
    """One catalogue document (docs/catalogue-format.md): the framework references it adds, its
    questionnaire and its ruleset, parsed and checked by the shipped parsers."""

    frameworks: dict[str, FrameworkRef]  # the document's own (not the shipped ones)
    questionnaire: QuestionnaireSpec
    ruleset: RulesetSpec
    raw: dict[str, Any]


def read_catalogue_document(path: Path = DOCUMENT) -> CatalogueDocument:
    """Parse a catalogue document; `CatalogError` names what is wrong. A reference (of a rule or
    a question) must be a shipped framework reference or one the document adds, and the document
    may not redefine a shipped one."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise CatalogError(f"{path.name}: cannot read YAML ({exc})") from exc
    if not isinstance(raw, dict) or not {"questionnaire", "ruleset"} <= set(raw):
        raise CatalogError(
            f"{path.name}: expected 'questionnaire' and 'ruleset' (and 'frameworks')"
        )
    shipped = load_frameworks_file()
    own = (
        parse_frameworks({"frameworks": raw.get("frameworks") or []}, source=path.name)
        if raw.get("frameworks")
        else {}
    )
    if redefined := sorted(set(own) & set(shipped)):
        raise CatalogError(
            f"{path.name}: framework reference(s) {', '.join(redefined)} already shipped"
        )
    known = {**shipped, **own}
    questionnaire = parse_questionnaire(raw["questionnaire"], source=path.name)
    for question in questionnaire.iter_questions():
        if unknown := [ref for ref in question.references if ref not in known]:
            raise CatalogError(
                f"{path.name}: question {question.code}: unknown framework reference(s) "
                f"{', '.join(unknown)}"
            )
    ruleset = parse_ruleset(raw["ruleset"], known, source=path.name)
    return CatalogueDocument(frameworks=own, questionnaire=questionnaire, ruleset=ruleset, raw=raw)


def publish_demo_catalogue(*, owner: OrgContext, document: Path = DOCUMENT) -> str:
    """TO CONNECT: load `document` into `owner`'s organization through the organization catalogue
    services (upload → draft → publish) and return the published questionnaire's key.

    The organization catalogue services (branch h-catalogues) were not available when this was
    written; until they are connected here the demo says so and loads nothing.
    """
    read_catalogue_document(document)  # at least refuse a broken document
    raise NotImplementedError("organization catalogue services not connected")


class Command(BaseCommand):
    help = (
        "Load the demo organization's own questionnaire (hk-genai-provider v1) through the "
        "organization catalogue path, with a scored example assessment and its PDF report in "
        "English and Chinese. Run after load_demo."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        organization = Organization.objects.filter(name=ORGANIZATION).first()
        if organization is None:
            raise CommandError("No demo organization: run `manage.py load_demo` first.")
        owner = org_context_of(
            user=User.objects.get(email=MEMBERS[0][0]), organization=organization
        )
        assessor = org_context_of(
            user=User.objects.get(email=MEMBERS[1][0]), organization=organization
        )
        if not QuestionnaireVersion.objects.filter(slug="hk-genai-provider", version="1").exists():
            try:
                key = publish_demo_catalogue(owner=owner)
            except NotImplementedError as exc:
                self.stdout.write(f"hk-genai-provider v1 not loaded: {exc}")
                return
            self.stdout.write(f"published {key} in {organization.name}")
        if Assessment.objects.filter(organization=organization, vendor__name=VENDOR_NAME).exists():
            self.stdout.write("hk-genai-provider example already present")
            return
        assessment = self.example_assessment(assessor)
        reports = self.reports(assessment, assessor)
        self.stdout.write(
            f"{EXAMPLE}: {assessment.risk_tier} ({assessment.risk_score}/100), reports "
            + ", ".join(f"{r.number} ({r.language}, {r.status})" for r in reports)
        )

    def example_assessment(self, assessor: OrgContext) -> Assessment:
        vendor = factories.incident_vendor(
            member=assessor,
            channel=Channel.SYSTEM,
            name=VENDOR_NAME,
            website="https://genai-assistant.example",
            contact_email="compliance@genai-assistant.example",
        )
        return factories.incident_assessment(
            member=assessor,
            vendor=vendor,
            answers_from=EXAMPLE,
            evidence=[],
            channel=Channel.SYSTEM,
        )

    def reports(self, assessment: Assessment, assessor: OrgContext) -> list[Report]:
        """Rendered here, in-process (the service the task calls), so the PDFs are ready without
        a worker; the queued task messages find them done."""
        rendered = []
        for language in REPORT_LANGUAGES:
            report = report_request(
                assessment=assessment, language=language, member=assessor, channel=Channel.SYSTEM
            )
            rendered.append(report_render(report_id=report.pk) or report)
        return rendered
