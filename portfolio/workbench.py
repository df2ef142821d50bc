"""The rule workbench: try a ruleset version on answers before it scores anything.

On a ruleset, a member enters answers in the questionnaire's own form, uploads them as JSON (the
API's `answers` shape) or picks one of the organization's assessments, and sees every rule fired
or not and why, with the score and tier — computed by the engine the workers score with
(`CompiledRuleset.explain`). Each rule's static problems (`CompiledRuleset.lint`) are shown at
the rule before anything is scored. Answer sets are saved as the version's test cases, with the
result their author accepted; the impact page scores the cases of another version and the
organization's assessments with this one and shows what would change, as a rescore batch does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from accounts.decorators import member_page
from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments.answer_forms import CatalogueAnswersForm
from core.errors import ServiceError
from core.web import add_messages, confirm_page, error_summary
from questionnaires.validation import AnswerValidationError, validate_answers
from scoring.engine import CompiledRuleset
from scoring.models import Ruleset
from scoring.results import ProblemKind, RuleOutcome, RuleProblem
from scoring.selectors import engine_for, ruleset_get, test_case_get, test_cases_for
from scoring.services import answers_as_stored, ruleset_test_case_delete, ruleset_test_case_save

from . import selectors
from .forms import AnswersUploadForm, AssessmentPickForm, TestCaseForm

PROBLEM_LABELS = {
    ProblemKind.SYNTAX: gettext_lazy("The condition is not valid CEL"),
    ProblemKind.UNKNOWN_CODE: gettext_lazy("Unknown question code"),
    ProblemKind.TYPE: gettext_lazy("Type error: the condition fails for some answers"),
    ProblemKind.NOT_AN_OPTION: gettext_lazy(
        "Compared with a string that is not an option of the questions it reads"
    ),
    ProblemKind.SECTION: gettext_lazy("Unknown section"),
    ProblemKind.RULESET: gettext_lazy("The ruleset does not compile"),
}


@dataclass
class RuleRow:
    """One rule as the workbench shows it: its condition, its problems, and, once answers are
    tried, whether it fired and why."""

    rule_id: str
    severity: str
    title: str
    condition: str
    problems: list[dict[str, str]]
    outcome: RuleOutcome | None = None

    @property
    def reads(self) -> list[dict[str, Any]]:
        """The values the condition read, as text (None: blank)."""
        if self.outcome is None:
            return []
        return [
            {
                "name": read.code or read.name,
                "value": None
                if read.value is None
                else ", ".join(map(str, read.value))
                if isinstance(read.value, list)
                else str(read.value),
                "hidden": read.hidden,
            }
            for read in self.outcome.reads
        ]


def _problem(problem: RuleProblem) -> dict[str, str]:
    return {
        "label": str(PROBLEM_LABELS.get(problem.kind, problem.kind)),
        "names": ", ".join(problem.names),
        "message": problem.message,
    }


def _rule_rows(ruleset: Ruleset, problems: list[RuleProblem], outcomes: Any) -> list[RuleRow]:
    language = get_language()
    by_rule: dict[str, list[dict[str, str]]] = {}
    for problem in problems:
        by_rule.setdefault(problem.rule_id, []).append(_problem(problem))
    found = {outcome.rule_id: outcome for outcome in outcomes or ()}
    return [
        RuleRow(
            rule_id=rule.id,
            severity=rule.severity,
            title=rule.title.get(language),
            condition=rule.when,
            problems=by_rule.get(rule.id, []),
            outcome=found.get(rule.id),
        )
        for rule in ruleset.spec.rules
    ]


def _answers_form(ruleset: Ruleset, data: Any = None) -> CatalogueAnswersForm:
    spec = ruleset.questionnaire.spec
    return CatalogueAnswersForm(
        data,
        questionnaire=spec,
        section_codes=[section.code for section in spec.sections],
        language=get_language(),
        editable=[
            q.code for q in spec.iter_questions() if q.type != "file" and not q.produced_by_avia
        ],
    )


@member_page
@require_http_methods(["GET", "POST"])
def workbench(request: HttpRequest, org: OrgContext, ruleset_id: int) -> HttpResponse:
    ruleset = ruleset_get(organization=org.organization, ruleset_id=ruleset_id)
    spec = ruleset.questionnaire.spec
    problems = CompiledRuleset.lint(ruleset.spec, spec)
    source = request.POST.get("source", "") if request.method == "POST" else ""
    answers_form = _answers_form(ruleset, request.POST if source == "form" else None)
    upload_form = AnswersUploadForm(
        request.POST if source == "file" else None, request.FILES if source == "file" else None
    )
    assessments = selectors.workbench_assessments(organization=org.organization, ruleset=ruleset)
    pick_form = AssessmentPickForm(
        request.POST if source == "assessment" else None, assessments=assessments
    )
    answer_set: selectors.AnswerSet | None = None
    tried = case_name = ""
    if source == "form" and answers_form.is_valid():
        answer_set = selectors.AnswerSet(values=answers_form.answers(), evidence={})
        tried = _("the answers entered")
    elif source == "file" and upload_form.is_valid():
        try:
            clean = validate_answers(spec, upload_form.cleaned_data["answers_file"])
        except AnswerValidationError as error:
            for code, code_messages in error.errors.items():
                for message in code_messages:
                    upload_form.add_error("answers_file", f"{code}: {message}")
        else:
            answer_set = selectors.AnswerSet(values=clean.values, evidence={})
            tried = _("the answers of the file")
    elif source == "assessment" and pick_form.is_valid():
        assessment_id = pick_form.cleaned_data["assessment"]
        answer_set = selectors.assessment_answer_set(
            organization=org.organization, ruleset=ruleset, assessment_id=assessment_id
        )
        tried = dict(pick_form.fields["assessment"].choices).get(assessment_id, "")
    elif request.GET.get("case"):
        case = test_case_get(
            organization=org.organization, ruleset=ruleset, case_id=request.GET["case"]
        )
        answer_set = selectors.AnswerSet(values=selectors.test_case_values(case), evidence={})
        tried = _("the test case “%(name)s”") % {"name": case.name}
        case_name = case.name  # saving again under its name accepts the result now
    as_of = org.organization.local_date()
    explanation = None
    if answer_set is not None and not problems:
        explanation = engine_for(ruleset).explain(
            answer_set.values, as_of=as_of, evidence=answer_set.evidence
        )
    cases = list(test_cases_for(organization=org.organization, ruleset=ruleset))
    context = {
        "ruleset": ruleset,
        "problems": problems,
        "ruleset_problems": [_problem(p) for p in problems if not p.rule_id],
        "rules": _rule_rows(ruleset, problems, explanation.rules if explanation else None),
        "answers_form": answers_form,
        "answer_rows": answers_form.rows(),
        "upload_form": upload_form,
        "pick_form": pick_form,
        "source": source,
        "explanation": explanation,
        "tried": tried,
        "save_form": TestCaseForm(
            initial={
                "answers_json": json.dumps(answers_as_stored(answer_set.values)),
                "name": case_name,
            }
        )
        if explanation is not None and answer_set is not None
        else None,
        "can_save": org.can(Capability.EDIT_ASSESSMENT),
        "case_changes": selectors.test_case_changes(cases=cases, ruleset=ruleset, as_of=as_of)
        if cases and not problems
        else [],
        "cases": cases,
        "previous": selectors.previous_version(organization=org.organization, ruleset=ruleset),
        "error_summary": error_summary(answers_form, upload_form, pick_form),
    }
    for row in context["answer_rows"]:
        row.comment = None  # a comment plays no part in scoring
    return render(request, "portfolio/workbench.html", context)


@member_page(capability=Capability.EDIT_ASSESSMENT)
@require_POST
def workbench_case_save(request: HttpRequest, org: OrgContext, ruleset_id: int) -> HttpResponse:
    """Save the answers just tried as a test case, with the result they give now."""
    ruleset = ruleset_get(organization=org.organization, ruleset_id=ruleset_id)
    form = TestCaseForm(request.POST)
    url = reverse("portfolio:workbench", args=[ruleset.pk])
    if not form.is_valid():
        for field_messages in form.errors.values():
            for message in field_messages:
                messages.error(request, message)
        return redirect(url)
    try:
        case = ruleset_test_case_save(
            member=org,
            ruleset=ruleset,
            name=form.cleaned_data["name"],
            answers=form.cleaned_data["answers_json"],
            as_of=org.organization.local_date(),
        )
    except ServiceError as error:
        add_messages(request, error)
        return redirect(url)
    messages.success(
        request,
        _("Test case “%(name)s” saved with its result as the accepted one.") % {"name": case.name},
    )
    return redirect(f"{url}?case={case.pk}#result")


@member_page(capability=Capability.EDIT_ASSESSMENT)
@require_http_methods(["GET", "POST"])
def workbench_case_delete(
    request: HttpRequest, org: OrgContext, ruleset_id: int, case_id: int
) -> HttpResponse:
    ruleset = ruleset_get(organization=org.organization, ruleset_id=ruleset_id)
    case = test_case_get(organization=org.organization, ruleset=ruleset, case_id=case_id)
    url = reverse("portfolio:workbench", args=[ruleset.pk])
    if request.method == "GET":
        return confirm_page(
            request,
            title=_("Delete the test case “%(name)s”?") % {"name": case.name},
            explanation=_("Its answers and its accepted result are deleted."),
            confirm_label=_("Delete the test case"),
            cancel_url=url,
        )
    ruleset_test_case_delete(member=org, case=case)
    messages.success(request, _("Test case “%(name)s” deleted.") % {"name": case.name})
    return redirect(url)


@member_page
def workbench_impact(request: HttpRequest, org: OrgContext, ruleset_id: int) -> HttpResponse:
    """What this version would change: the test cases of another version (by default the one
    before) against their accepted results, and the organization's assessments a rescore batch
    with this version would take, against their current results."""
    ruleset = ruleset_get(organization=org.organization, ruleset_id=ruleset_id)
    others = selectors.other_versions(organization=org.organization, ruleset=ruleset)
    chosen = request.GET.get("against", "")
    against = next((r for r in others if str(r.pk) == chosen), None) or (
        selectors.previous_version(organization=org.organization, ruleset=ruleset)
    )
    problems = CompiledRuleset.lint(ruleset.spec, ruleset.questionnaire.spec)
    as_of = org.organization.local_date()
    case_changes, assessment_changes, total = [], [], 0
    if not problems:
        if against is not None:
            cases = test_cases_for(organization=org.organization, ruleset=against)
            case_changes = selectors.test_case_changes(cases=cases, ruleset=ruleset, as_of=as_of)
        assessment_changes, total = selectors.assessment_changes(
            organization=org.organization, ruleset=ruleset, as_of=as_of
        )
    return render(
        request,
        "portfolio/workbench_impact.html",
        {
            "ruleset": ruleset,
            "others": others,
            "against": against,
            "problems": problems,
            "case_changes": case_changes,
            "assessment_changes": assessment_changes,
            "total": total,
            "limit": selectors.IMPACT_LIMIT,
        },
    )
