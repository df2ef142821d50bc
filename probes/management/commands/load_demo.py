"""`manage.py load_demo` — a demo workspace: an organization, its members, a vendor and the
incident fixtures (at launch and after remediation) as scored assessments; and, answering
questionnaire v2, the same two vendors with an isolation probe each, run against the reference
vendor (`--launch-day-vendor` / `--remediated-vendor`, the loopback addresses `make run` starts
them on), so the demo shows a launch-day endpoint caught oversizing and leaking beside a
remediated one that passes; and, answering questionnaire v3, a vendor that declares twice the
context its endpoint serves, with the stored probe result that found it (`overclaimed`), so
PROBE-CONTEXT-OVERCLAIMED shows. Every assessment is scored with the default ruleset (the newest
that applies, v3). Idempotent: a workspace made before v3 gains the over-claiming vendor.

The demo accounts' password is the published one (DEMO_PASSWORD) only for a site that no other
machine reaches (ALLOWED_HOSTS names only local hosts); otherwise they get a random one (or
`--password`; `make run` gives one when it listens beyond loopback). Whatever it is, it is set
on the demo accounts on every run, and the command prints it.

It lives in the probes app because it uses both apps' services (probes sit above assessments).
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from accounts.models import Membership, Organization, User
from accounts.roles import Role
from accounts.tenancy import OrgContext, org_context_of
from assessments import factories
from assessments.models import Assessment, Channel

from ...models import ProbeRun
from ...services.runs import probe_run_execute, probe_run_request
from ...services.setup import probe_setup_save

DEMO_PASSWORD = "avia-demo-2026"
ORGANIZATION = "Demo Procurement (HK)"
MEMBERS = [
    ("owner@demo.avia", "Olivia", "Owner", Role.OWNER),
    ("assessor@demo.avia", "Ada", "Assessor", Role.ASSESSOR),
    ("reviewer@demo.avia", "Raymond", "Reviewer", Role.REVIEWER),
    ("viewer@demo.avia", "Vera", "Viewer", Role.VIEWER),
]
# Answer file (examples/) → evidence files (question code, path), and which reference vendor
# (an option of this command) its probe runs against.
FIXTURES = [
    (factories.LAUNCH, factories.logs(factories.LAUNCH_LOG), None),
    (factories.REMEDIATED, factories.logs(factories.REMEDIATED_LOG), None),
    (factories.LAUNCH_V2, factories.logs(factories.LAUNCH_LOG), "launch_day_vendor"),
    (factories.REMEDIATED_V2, factories.logs(factories.REMEDIATED_LOG), "remediated_vendor"),
]
# The reference vendor's defaults (probes/reference_vendor.py): a small context, so that a
# whole probe takes seconds, and few enough samples to keep it so.
PROBE_MODEL = "reference-model"
PROBE_DECLARED_CONTEXT = 8192
PROBE_SAMPLES = 10
PROBE_PREFIX_TOKENS = 1024
PROBE_CEILING_TOKENS = 1_000_000
OVERCLAIMING_VENDOR = "Example Long-Context AI (over-claimed context)"


class Command(BaseCommand):
    help = (
        "Create the demo workspace (organization, members, two vendors, five scored "
        "assessments; the two of questionnaire v2 probed when the reference vendors' addresses "
        "are given, the one of v3 with a stored probe result that found an over-claimed context)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--launch-day-vendor", metavar="URL", help="a reference vendor in launch-day mode"
        )
        parser.add_argument(
            "--remediated-vendor", metavar="URL", help="a reference vendor in remediated mode"
        )
        parser.add_argument(
            "--password",
            help="the demo accounts' password (default: the published one on a site only this "
            "machine reaches, else a random one)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        public = sorted(set(settings.ALLOWED_HOSTS) - settings.LOCAL_HOSTS)
        password = options["password"] or (secrets.token_urlsafe(12) if public else DEMO_PASSWORD)
        if public and password == DEMO_PASSWORD:
            raise CommandError(
                f"ALLOWED_HOSTS names {', '.join(public)}: other machines reach this site, so "
                "the demo accounts must not have the published password."
            )
        organization, created = Organization.objects.get_or_create(
            name=ORGANIZATION,
            defaults={"slug": "demo", "report_display_name": "Demo Procurement (HK)"},
        )
        users = {}
        for email, first, last, role in MEMBERS:
            user = User.objects.filter(email=email).first()
            if user is None:
                user = User.objects.create_user(
                    email=email, password=password, first_name=first, last_name=last
                )
            elif not user.check_password(password):  # the one printed below must work
                user.set_password(password)
                user.save(update_fields=["password"])
            Membership.objects.get_or_create(
                user=user, organization=organization, defaults={"role": role}
            )
            users[role] = user
        self.stdout.write(f"demo password: {password}")
        assessor = org_context_of(user=users[Role.ASSESSOR], organization=organization)
        if Assessment.objects.filter(organization=organization).exists():
            self.stdout.write("demo workspace already present")
        else:
            self.incident_vendor(assessor, options)
        if not Assessment.objects.filter(
            organization=organization, vendor__name=OVERCLAIMING_VENDOR
        ).exists():
            self.overclaiming_vendor(assessor)
        self.stdout.write(f"demo workspace ready: log in as {MEMBERS[0][0]}")

    def incident_vendor(self, assessor: OrgContext, options: dict[str, Any]) -> None:
        """The incident's vendor: v1 and v2 assessments at launch and after remediation, the v2
        ones probed against the reference vendors when their addresses are given."""
        vendor = factories.incident_vendor(
            member=assessor,
            channel=Channel.SYSTEM,
            name="Example Cloud AI (GLM-5.3 endpoint)",
            website="https://example.com/ai",
            contact_email="security@example.com",
        )
        for answers_from, evidence, probe_option in FIXTURES:
            assessment = factories.incident_assessment(
                member=assessor,
                vendor=vendor,
                answers_from=answers_from,
                evidence=evidence,
                channel=Channel.SYSTEM,
                submit=False,
            )
            probed = ""
            if probe_option and options.get(probe_option):
                run = self.probe(assessment, assessor, options[probe_option])
                probed = f", probe {run.status}: " + ", ".join(
                    f"{check}={outcome}" for check, outcome in run.outcomes.items()
                )
            elif probe_option:
                probed = f", not probed (no --{probe_option.replace('_', '-')})"
            # Scored here, in-process, so the demo does not depend on a running worker.
            assessment = factories.submit_and_score(
                assessment, actor=assessor.user, channel=Channel.SYSTEM
            )
            self.stdout.write(
                f"{answers_from}: {assessment.risk_tier} ({assessment.risk_score}/100){probed}"
            )

    def overclaiming_vendor(self, assessor: OrgContext) -> None:
        """A vendor answering v3 that declares 262,144 tokens of context on an endpoint that
        serves 131,072: its probe result (examples/probe-overclaimed.json, as a probe run stores
        it, with the served context and the limit the refusal stated) is attached as PRB-02."""
        vendor = factories.incident_vendor(
            member=assessor,
            channel=Channel.SYSTEM,
            name=OVERCLAIMING_VENDOR,
            website="https://longctx.example",
            contact_email="security@longctx.example",
        )
        assessment = factories.incident_assessment(
            member=assessor,
            vendor=vendor,
            answers_from=factories.OVERCLAIMED_V3,
            evidence=[("PRB-02", factories.OVERCLAIMED_PROBE)],
            channel=Channel.SYSTEM,
        )
        self.stdout.write(
            f"{factories.OVERCLAIMED_V3}: {assessment.risk_tier} ({assessment.risk_score}/100),"
            " stored probe result: oversize=overclaimed"
        )

    def probe(self, assessment: Assessment, assessor: OrgContext, base_url: str) -> ProbeRun:
        """The vendor's consent is in its answers (PRB-01 = yes); the assessor enters the
        set-up on its behalf with two fresh test keys (never printed), then the probe runs in
        this process — the service the Celery task calls — and attaches its result as PRB-02.
        The queued task message finds the run done when the worker starts."""
        now = timezone.now()
        probe_setup_save(
            assessment=assessment,
            base_url=base_url,
            model_name=PROBE_MODEL,
            declared_context=PROBE_DECLARED_CONTEXT,
            key_a=f"demo-tenant-a-{secrets.token_urlsafe(24)}",
            key_b=f"demo-tenant-b-{secrets.token_urlsafe(24)}",
            signer_name="Demo vendor's CISO",
            spend_ceiling_tokens=PROBE_CEILING_TOKENS,
            window_starts_at=now - timedelta(minutes=5),
            window_ends_at=now + timedelta(days=30),
            channel=Channel.SYSTEM,
            actor=assessor.user,
        )
        run = probe_run_request(
            assessment=assessment,
            actor=assessor.user,
            channel=Channel.SYSTEM,
            samples=PROBE_SAMPLES,
            prefix_tokens=PROBE_PREFIX_TOKENS,
        )
        return probe_run_execute(probe_run_id=run.pk) or run
