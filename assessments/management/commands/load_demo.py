"""`manage.py load_demo` — a demo workspace: an organization, its members, a vendor and the
incident fixtures (at launch, after remediation, and at launch answering questionnaire v2 with
the isolation probe's result) as scored assessments. Idempotent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import BaseCommand
from django.db import transaction

from accounts.models import Membership, Organization, User
from accounts.roles import Role
from assessments import services
from assessments.models import Assessment, Channel
from assessments.scoring_runs import scoring_run_execute

DEMO_PASSWORD = "avia-demo-2026"
ORGANIZATION = "Demo Procurement (HK)"
MEMBERS = [
    ("owner@demo.avia", "Olivia", "Owner", Role.OWNER),
    ("assessor@demo.avia", "Ada", "Assessor", Role.ASSESSOR),
    ("reviewer@demo.avia", "Raymond", "Reviewer", Role.REVIEWER),
    ("viewer@demo.avia", "Vera", "Viewer", Role.VIEWER),
]
# Answer file (examples/) → evidence files (question code, path from the repository root).
FIXTURES = [
    (
        "incident-2026-launch.json",
        [("CTX-08", "tests/fixtures/logs/sglang-prefill-glm53-launch.log")],
    ),
    (
        "incident-2026-remediated.json",
        [("CTX-08", "tests/fixtures/logs/sglang-prefill-glm53-remediated.log")],
    ),
    (
        "incident-2026-launch-v2.json",
        [
            ("CTX-08", "tests/fixtures/logs/sglang-prefill-glm53-launch.log"),
            ("PRB-02", "examples/probe-launch-day.json"),
        ],
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
        vendor = services.vendor_create(
            organization=organization,
            actor=users[Role.ASSESSOR],
            channel=Channel.SYSTEM,
            name="Example Cloud AI (GLM-5.3 endpoint)",
            website="https://example.com/ai",
            contact_email="security@example.com",
        )
        examples = Path(settings.BASE_DIR) / "examples"
        for answers_file, evidence in FIXTURES:
            document = json.loads((examples / answers_file).read_text(encoding="utf-8"))
            with transaction.atomic():
                assessment = services.assessment_create(
                    organization=organization,
                    vendor=vendor,
                    questionnaire_key=f"{document['questionnaire']}@{document['version']}",
                    actor=users[Role.ASSESSOR],
                    channel=Channel.SYSTEM,
                    answers=document["answers"],
                )
                services.answers_save(
                    assessment=assessment,
                    answers={},
                    comments=document.get("comments", {}),
                    actor=users[Role.ASSESSOR],
                    channel=Channel.SYSTEM,
                )
                for code, relative in evidence:
                    path = Path(settings.BASE_DIR) / relative
                    if path.exists():
                        services.evidence_add(
                            assessment=assessment,
                            question_code=code,
                            upload=SimpleUploadedFile(path.name, path.read_bytes()),
                            actor=users[Role.ASSESSOR],
                            channel=Channel.SYSTEM,
                        )
                run = services.assessment_submit(
                    assessment=assessment, actor=users[Role.ASSESSOR], channel=Channel.SYSTEM
                )
            # Scored here, in-process, so the demo does not depend on a running worker.
            run = scoring_run_execute(run_id=run.pk)
            self.stdout.write(f"{answers_file}: {run.risk_tier} ({run.risk_score}/100)")
        self.stdout.write(f"demo workspace ready: log in as {MEMBERS[0][0]} / {DEMO_PASSWORD}")
