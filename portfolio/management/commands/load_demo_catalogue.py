"""`manage.py load_demo_catalogue` — the demo organization's own questionnaire: "hk-genai-provider"
v1 (examples/catalogues/hk-genai-provider-v1.yaml), a Hong Kong regulatory questionnaire for
generative AI providers with its ruleset, loaded the way any organization loads one of its own
(never by `load_catalog`: it is not part of the shipped catalogue), then an example assessment of a
provider answering it (examples/catalogues/hk-genai-provider-example.json), scored, with its PDF
report in English and in Traditional Chinese.

Run by `make run` after `load_demo` (which makes the organization and its members). Idempotent:
a version already published is not loaded again, and the example assessment is made once.
The catalogue goes through the organization catalogue services, as an owner's upload does:
`catalogue_upload` (checked whole, saved as a draft) then `catalogue_publish`.

It lives in the top app (portfolio) because it uses the catalogue, the assessments and the
reports (reports and probes, where `load_demo` lives, may not import each other).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts.models import Organization, User
from accounts.tenancy import OrgContext, org_context_of
from assessments import factories
from assessments.models import Assessment, Channel
from probes.management.commands.load_demo import MEMBERS, ORGANIZATION
from questionnaires.selectors import questionnaire_visible
from reports.models import Report
from reports.services import report_render, report_request
from scoring.services import catalogue_publish, catalogue_upload

DOCUMENT = Path(settings.BASE_DIR) / "examples" / "catalogues" / "hk-genai-provider-v1.yaml"
# The example answers, by their name under examples/ (`factories.example`).
EXAMPLE = "catalogues/hk-genai-provider-example"
SLUG, VERSION = "hk-genai-provider", "1"
VENDOR_NAME = "Example GenAI Assistant Ltd (HK)"
REPORT_LANGUAGES = ("en", "zh-hant")


def publish_demo_catalogue(*, owner: OrgContext, document: Path = DOCUMENT) -> str:
    """Load `document` into `owner`'s organization as its own catalogue, the way an owner's
    upload does (checked whole and saved as a draft, then published), and return the published
    questionnaire's key. Raises `scoring.catalogue_files.problems.CatalogueInvalid` naming the
    line, the code and the problem when the document is refused (nothing is saved)."""
    draft = catalogue_upload(context=owner, data=document.read_bytes(), source_name=document.name)
    ruleset = catalogue_publish(context=owner, ruleset=draft.ruleset)
    return ruleset.questionnaire.key


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
        if questionnaire_visible(organization=organization, slug=SLUG, version=VERSION) is None:
            key = publish_demo_catalogue(owner=owner)
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
