"""`manage.py load_demo` — a demo workspace: an organization, its members, a vendor and the
incident fixtures (at launch, after remediation, and at launch answering questionnaire v2 with
the isolation probe's result) as scored assessments. Idempotent."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from accounts.models import Membership, Organization, User
from accounts.roles import Role
from accounts.tenancy import org_context_of
from assessments import factories
from assessments.models import Assessment, Channel

DEMO_PASSWORD = "avia-demo-2026"
ORGANIZATION = "Demo Procurement (HK)"
MEMBERS = [
    ("owner@demo.avia", "Olivia", "Owner", Role.OWNER),
    ("assessor@demo.avia", "Ada", "Assessor", Role.ASSESSOR),
    ("reviewer@demo.avia", "Raymond", "Reviewer", Role.REVIEWER),
    ("viewer@demo.avia", "Vera", "Viewer", Role.VIEWER),
]
# Answer file (examples/) → evidence files (question code, path).
FIXTURES = [
    (factories.LAUNCH, factories.logs(factories.LAUNCH_LOG)),
    (factories.REMEDIATED, factories.logs(factories.REMEDIATED_LOG)),
    (
        factories.LAUNCH_V2,
        (
            *factories.logs(factories.LAUNCH_LOG),
            ("PRB-02", factories.EXAMPLES_DIR / factories.LAUNCH_PROBE),
        ),
    ),
]


class Command(BaseCommand):
    help = "Create the demo workspace (organization, members, vendor, three scored assessments)."

    def handle(self, *args: Any, **options: Any) -> None:
        organization, created = Organization.objects.get_or_create(
            name=ORGANIZATION,
            defaults={"slug": "demo", "report_display_name": "Demo Procurement (HK)"},
        )
        users = {}
        for email, first, last, role in MEMBERS:
            user = User.objects.filter(email=email).first()
            if user is None:
                user = User.objects.create_user(
                    email=email, password=DEMO_PASSWORD, first_name=first, last_name=last
                )
            Membership.objects.get_or_create(
                user=user, organization=organization, defaults={"role": role}
            )
            users[role] = user
        if Assessment.objects.filter(organization=organization).exists():
            self.stdout.write("demo workspace already present")
            return
        assessor = org_context_of(user=users[Role.ASSESSOR], organization=organization)
        vendor = factories.incident_vendor(
            member=assessor,
            channel=Channel.SYSTEM,
            name="Example Cloud AI (GLM-5.3 endpoint)",
            website="https://example.com/ai",
            contact_email="security@example.com",
        )
        for answers_from, evidence in FIXTURES:
            # Scored here, in-process, so the demo does not depend on a running worker.
            assessment = factories.incident_assessment(
                member=assessor,
                vendor=vendor,
                answers_from=answers_from,
                evidence=evidence,
                channel=Channel.SYSTEM,
            )
            self.stdout.write(
                f"{answers_from}: {assessment.risk_tier} ({assessment.risk_score}/100)"
            )
        self.stdout.write(f"demo workspace ready: log in as {MEMBERS[0][0]} / {DEMO_PASSWORD}")
