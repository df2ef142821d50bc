"""Comparing two to five scored assessments: findings side by side (what differs first) and
coverage per section in one chart."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from accounts.decorators import member_page
from accounts.tenancy import OrgContext
from core.formats import format_date
from core.text import is_ascii_number
from core.web import error_summary
from scoring.spec import SEVERITIES, RulesetSpec

from .. import forms as web_forms
from .. import selectors
from ..models import Finding, ScoringRun
from ..presenters.charts import SERIES_LETTERS, coverage_chart
from .common import capabilities, page_language, vendor_search

# Candidates listed in the picker at most (the rest are found by searching).
MAX_LISTED = 50


@member_page
def compare(request: HttpRequest, org: OrgContext) -> HttpResponse:
    scored = selectors.list_rows(
        selectors.assessments_for(organization=org.organization).filter(latest_run__isnull=False)
    )
    # Never the whole portfolio: the chosen ones (still in this organization), then the newest
    # scored ones, or those whose vendor's name matches the search.
    chosen_ids = [
        int(v) for v in request.GET.getlist("assessments") if is_ascii_number(v) and len(v) < 19
    ]
    query = vendor_search(request)
    chosen_rows = list(scored.filter(pk__in=chosen_ids[:MAX_LISTED]).order_by("vendor__name"))
    found = scored.filter(vendor__name__icontains=query) if query else scored
    found = found.exclude(pk__in=[a.pk for a in chosen_rows]).order_by("-created_at", "-pk")
    candidates = chosen_rows + list(found[:MAX_LISTED])
    language = page_language()
    choices = [
        (
            str(a.pk),
            f"{a.vendor.name} {a.reference} — {format_date(a.created_at, language)} "
            f"— {a.get_risk_tier_display()} {a.risk_score}",
        )
        for a in candidates
    ]
    form = web_forms.CompareForm(
        request.GET if "assessments" in request.GET else None, choices=choices
    )
    context: dict[str, Any] = {
        "org": org,
        "can": capabilities(org),
        "form": form,
        "candidates": candidates,
        "query": query,
        "listed_all": len(candidates) < MAX_LISTED + len(chosen_rows),
        "error_summary": error_summary(form) if form.is_bound else [],
    }
    if form.is_bound and form.is_valid():
        chosen_ids = [int(pk) for pk in form.cleaned_data["assessments"]]
        by_pk = {a.pk: a for a in candidates}
        chosen = [by_pk[pk] for pk in chosen_ids if pk in by_pk]
        if len({(a.questionnaire.organization_id, a.questionnaire.slug) for a in chosen}) > 1:
            # Versions of one questionnaire compare; two questionnaires (an organization's own
            # and the shipped one) share no rules or sections to put side by side.
            form.add_error("assessments", _("Choose assessments of the same questionnaire."))
            context["error_summary"] = error_summary(form)
            return render(request, "assessments/compare.html", context, status=400)
        runs = list(
            ScoringRun.objects.filter(pk__in=[a.latest_run_id for a in chosen]).select_related(
                "ruleset"
            )
        )
        run_by_pk = {run.pk: run for run in runs}
        chosen_runs = [run_by_pk[a.latest_run_id] for a in chosen]
        findings: dict[int, dict[str, Finding]] = defaultdict(dict)
        for finding in Finding.objects.filter(run__in=runs).order_by("position"):
            findings[finding.run_id][finding.rule_id] = finding
        specs: dict[int, RulesetSpec] = {}
        for run in runs:
            if run.ruleset_id not in specs:  # one parse (and frameworks query) per ruleset
                specs[run.ruleset_id] = run.ruleset.spec
        all_rules: dict[str, Finding] = {}
        for run in chosen_runs:
            for rule_id, finding in findings[run.pk].items():
                all_rules.setdefault(rule_id, finding)
        severity_rank = {severity: index for index, severity in enumerate(SEVERITIES)}
        differing, common = [], []
        for rule_id, sample in sorted(
            all_rules.items(), key=lambda item: (severity_rank[item[1].severity], item[0])
        ):
            rule = next(
                (
                    specs[run.ruleset_id].rules_by_id.get(rule_id)
                    for run in chosen_runs
                    if specs[run.ruleset_id].rules_by_id.get(rule_id)
                ),
                None,
            )
            cells = [findings[run.pk].get(rule_id) for run in chosen_runs]
            row = {"rule_id": rule_id, "rule": rule, "severity": sample.severity, "cells": cells}
            (common if all(cells) else differing).append(row)
        spec = chosen[0].questionnaire.spec
        columns = [
            {
                "assessment": a,
                "run": run,
                "letter": SERIES_LETTERS[index],
                "counts": Counter(f.severity for f in findings[run.pk].values()),
            }
            for index, (a, run) in enumerate(zip(chosen, chosen_runs, strict=True))
        ]
        context.update(
            {
                "columns": columns,
                "differing": differing,
                "common": common,
                "chart": coverage_chart(
                    spec,
                    [run.sections or {} for run in chosen_runs],
                    language,
                    names=[f"{a.vendor.name} {a.reference}" for a in chosen],
                ),
                "mixed_questionnaires": len({a.questionnaire_id for a in chosen}) > 1,
            }
        )
    return render(request, "assessments/compare.html", context)
