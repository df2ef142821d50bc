#!/usr/bin/env python
"""PDF report rendering: time, size, memory, and our overhead over bare WeasyPrint.

Builds the incident fixture in a throwaway in-memory database (the launch-day answers of
`examples/incident-2026-launch.json`, the SGLang prefill startup log as evidence, scored and
approved with conditions), then renders its report in English and Traditional Chinese.

For each edition it prints the median time of our whole pipeline (template + WeasyPrint with
the restricted fetcher, `reports.rendering.render_report`), the PDF's size and pages, and the
ratio to WeasyPrint rendering the very same final HTML directly (our overhead: the template
and the restricted fetcher), taken from the fastest CPU time of each side because neighbours
on shared cores only ever add time (the ratio of the medians is printed too). Peak RSS is the
process's maximum resident set size after all renders.

Targets (issue "Procurement PDF reports", 2 shared cores): ≤ 4 s median per edition, ≤ 1.5 MB,
peak RSS ≤ 450 MB, overhead ratio ≤ 1.15.
Usage: .venv/bin/python bench/report.py [--runs 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Scoring runs inline (no broker), evidence goes to a throwaway directory.
os.environ["CELERY_TASK_ALWAYS_EAGER"] = "true"
os.environ["MEDIA_ROOT"] = tempfile.mkdtemp(prefix="avia-bench-media-")

import django  # noqa: E402

django.setup()

import io  # noqa: E402
import logging  # noqa: E402

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from weasyprint import HTML  # noqa: E402

TARGET_SECONDS = 4.0
TARGET_BYTES = 1.5 * 1024 * 1024
TARGET_RSS_MB = 450
TARGET_RATIO = 1.15


def incident_run():
    """The launch-day incident vendor, scored and approved with conditions."""
    from accounts.models import User
    from accounts.roles import Role
    from accounts.services import membership_add, organization_create
    from accounts.tenancy import org_context_of
    from assessments import factories
    from assessments.models import Channel
    from assessments.services.reviews import review_record

    organization = organization_create(name="Harbour Bank", owner_email="owner@bench.test")
    owner = User.objects.get(email="owner@bench.test")
    organization.report_display_name = "Kowloon Risk Advisory"
    organization.brand_colour = "#1A5FB4"
    organization.save()
    reviewer = membership_add(
        organization=organization, email="reviewer@bench.test", role=Role.REVIEWER, actor=owner
    ).user
    assessment = factories.incident_assessment(
        member=org_context_of(user=owner, organization=organization)
    )
    review_record(
        assessment=assessment,
        member=org_context_of(user=reviewer, organization=organization),
        decision="approved_with_conditions",
        conditions="Short prompts only (under 128,000 tokens) until the vendor upgrades SGLang "
        "to v0.5.22 and enlarges the prefill KV pool; re-assess after the change.",
        acknowledged_findings=factories.critical_rule_ids(assessment),
        channel=Channel.WEB,
    )
    return assessment.latest_run


def timed(work) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one call (CPU time shows how much of the wall time was
    spent waiting for shared cores busy with other processes)."""
    started, started_cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - started, time.process_time() - started_cpu


def measure(ours_work, direct_work, runs: int) -> dict[str, list[float]]:
    """Times of our pipeline and of bare WeasyPrint, taken alternately so that a change in the
    machine's load affects both alike."""
    samples: dict[str, list[float]] = {"ours": [], "ours_cpu": [], "direct": [], "direct_cpu": []}
    for _ in range(runs):
        for name, work in (("ours", ours_work), ("direct", direct_work)):
            wall, cpu = timed(work)
            samples[name].append(wall)
            samples[f"{name}_cpu"].append(cpu)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, help="also write the PDFs here")
    args = parser.parse_args()

    # WeasyPrint logs every layout step at INFO; workers should not (see LOGGING in
    # config/settings.py), and printing them would be timed too.
    logging.getLogger("weasyprint.progress").setLevel(logging.WARNING)
    connection.creation.create_test_db(verbosity=0)
    call_command("load_catalog", stdout=io.StringIO())
    run = incident_run()

    from reports.context import report_context
    from reports.rendering import PDF_OPTIONS, base_url, render_report, report_html

    print(
        f"incident fixture: run #{run.pk}, {run.ruleset.key}, {run.risk_tier} {run.risk_score}, "
        f"{run.findings.count()} findings · {args.runs} runs per figure · "
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    )
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    failures = []
    for language in ("en", "zh-hant"):
        started = time.perf_counter()
        context = report_context(run=run, language=language, number="AVIA-2026-000001")
        context_ms = (time.perf_counter() - started) * 1000
        html = report_html(context)
        rendered = render_report(context)  # warm-up: fonts and templates load once per process
        started = time.perf_counter()
        report_html(context)
        template_ms = (time.perf_counter() - started) * 1000

        samples = measure(
            lambda c=context: render_report(c),
            # the same tagged PDF/UA-1 output: the tags are the report's, not overhead
            lambda h=html: HTML(string=h, base_url=base_url()).write_pdf(**PDF_OPTIONS),
            args.runs,
        )
        m = {name: statistics.median(values) for name, values in samples.items()}
        ours = m["ours"]
        # Our overhead is the extra work: other processes only ever add time, so the fastest
        # CPU time of each side is the least disturbed estimate of it. The ratio of the
        # medians is printed too.
        ratio = min(samples["ours_cpu"]) / min(samples["direct_cpu"])
        ratio_medians = m["ours"] / m["direct"]
        size = len(rendered.pdf)
        print(
            f"{language:8} median {ours:4.2f} s (CPU {m['ours_cpu']:4.2f} s) · "
            f"WeasyPrint alone on the same HTML {m['direct']:4.2f} s (CPU {m['direct_cpu']:4.2f} s)"
            f" · overhead ratio {ratio:4.2f} (of the medians: {ratio_medians:4.2f}) · "
            f"{size / 1024 / 1024:4.2f} MB · {rendered.pages} pages · "
            f"template {template_ms:,.0f} ms · context from the database {context_ms:,.0f} ms "
            "(read once, before rendering)"
        )
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"incident-{language}.pdf").write_bytes(rendered.pdf)
        if ours > TARGET_SECONDS:
            failures.append(f"{language}: {ours:.2f} s > {TARGET_SECONDS} s")
        if size > TARGET_BYTES:
            failures.append(f"{language}: {size} bytes > {TARGET_BYTES:.0f}")
        if ratio > TARGET_RATIO:
            failures.append(f"{language}: overhead ratio {ratio:.2f} > {TARGET_RATIO}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"peak RSS {peak:,.0f} MB (Django, the database and the fixture before rendering: "
        f"{rss_before:,.0f} MB) · load average now {os.getloadavg()[0]:.2f}"
    )
    if peak > TARGET_RSS_MB:
        failures.append(f"peak RSS {peak:.0f} MB > {TARGET_RSS_MB} MB")
    print("targets: " + ("all met" if not failures else "MISSED: " + "; ".join(failures)))


if __name__ == "__main__":
    main()
