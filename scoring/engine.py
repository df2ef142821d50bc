"""The pure scoring engine: validated answers and parsed evidence in, findings and score out.

No ORM, no Celery, no clock: the caller passes `as_of`. A ruleset is compiled once
(`CompiledRuleset`) into three CEL programs — question visibility, derived values, rules — that
all run over one activation built once per answer set, because converting the answers into CEL
values costs more than evaluating forty rules. Each rule keeps its own semantics: the compiler
wraps it in a guard so that a blank or hidden answer it reads stops that rule alone.

Its parts, each its own module: checking and compiling the rules against the questionnaire
(`scoring.rule_compiler`), the evidence files as variables and as a finding's evidence
(`scoring.rule_evidence`), and what it returns (`ScoreResult`, `Finding`, `EvidenceItem`:
`scoring.results`). This module runs a compiled ruleset over one set of answers.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import cel

from questionnaires.conditions import CHECK_COMBINATIONS, FUNCTIONS, compile_expression, date_to_cel
from questionnaires.spec import CatalogError, QuestionnaireSpec
from questionnaires.validation import cel_values_for

from .results import (
    EvidenceItem,
    EvidenceKind,
    Explanation,
    Finding,
    ProblemKind,
    ReadValue,
    RuleOutcome,
    RuleProblem,
    ScoreResult,
    SectionCoverage,
)
from .rule_compiler import AS_OF, CompiledRule, RuleCheckError, RulesetCompiler
from .rule_evidence import FoundEvidence
from .spec import SEVERITIES, RulesetSpec

if TYPE_CHECKING:
    from scoring.evidence import EvidenceParseResult


def score_points(severities: Sequence[str], points: Mapping[str, int]) -> int:
    """`risk_score` = min(100, sum of points of the fired rules)."""
    return min(100, sum(points[severity] for severity in severities))


def risk_tier(severities: Sequence[str], score: int) -> str:
    """`critical` if any critical rule fired; else `high` if any high rule fired or the score is
    at least 30; else `medium` if the score is at least 10; else `low`."""
    if "critical" in severities:
        return "critical"
    if "high" in severities or score >= 30:
        return "high"
    if score >= 10:
        return "medium"
    return "low"


@dataclass(frozen=True)
class _Evaluation:
    """What one scoring computed on the way: the values the rules read and which fired."""

    cel_values: Mapping[str, Any]
    hidden: set[str]
    fired: list[bool]


class CompiledRuleset:
    """A ruleset checked against its questionnaire and compiled into CEL programs."""

    def __init__(
        self,
        ruleset: RulesetSpec,
        questionnaire: QuestionnaireSpec,
        *,
        check_limit: int = CHECK_COMBINATIONS,
    ) -> None:
        self._compiler = RulesetCompiler(ruleset, questionnaire, check_limit=check_limit)
        self.ruleset = ruleset
        self.questionnaire = questionnaire
        self.visibility = self._compiler.visibility
        self.rules = tuple(self._compiler.compile_rule(rule) for rule in ruleset.rules)
        guarded = [self._compiler.guarded_source(rule) for rule in self.rules]
        self._rules_program = compile_expression(
            "[" + ", ".join(guarded) + "]", f"{ruleset.key}: rules"
        )
        self._section_totals: dict[str, int] = {}
        for rule in self.rules:
            self._section_totals[rule.section] = self._section_totals.get(rule.section, 0) + 1

    @classmethod
    def lint(
        cls,
        ruleset: RulesetSpec,
        questionnaire: QuestionnaireSpec,
        *,
        check_limit: int = CHECK_COMBINATIONS,
    ) -> list[RuleProblem]:
        """Every rule's problem, each with the rule's id (a syntax or type error, an unknown
        question code, a string that is no option of the questions read), found by the very
        checks that compiling makes, before any answer is scored. A problem of the ruleset as
        a whole has no rule id. Empty: the ruleset compiles."""
        try:
            compiler = RulesetCompiler(ruleset, questionnaire, check_limit=check_limit)
        except CatalogError as exc:
            return [RuleProblem("", ProblemKind.RULESET, str(exc))]
        problems = []
        for rule in ruleset.rules:
            try:
                compiler.compile_rule(rule)
            except RuleCheckError as exc:
                problems.append(exc.problem)
        if not problems:
            try:
                cls(ruleset, questionnaire, check_limit=check_limit)
            except CatalogError as exc:
                problems.append(RuleProblem("", ProblemKind.RULESET, str(exc)))
        return problems

    # -- scoring -----------------------------------------------------------------------------

    def score(
        self,
        answers: Mapping[str, Any],
        *,
        as_of: dt.date,
        evidence: Mapping[str, Sequence[EvidenceParseResult]] | None = None,
    ) -> ScoreResult:
        """Score validated answers (see `questionnaires.validation`) as of a date.

        The answers may be those of an older questionnaire version the ruleset applies to
        (`RulesetSpec.applies_to`): questions that version lacks are blank.
        """
        return self._score(answers, as_of=as_of, evidence=evidence)[0]

    def explain(
        self,
        answers: Mapping[str, Any],
        *,
        as_of: dt.date,
        evidence: Mapping[str, Sequence[EvidenceParseResult]] | None = None,
    ) -> Explanation:
        """`score()`, with every rule's outcome: fired or not, its condition, the values it
        read, and which blank or unasked value stopped it (the rule workbench)."""
        result, evaluation = self._score(answers, as_of=as_of, evidence=evidence)
        outcomes = []
        for rule, fired in zip(self.rules, evaluation.fired, strict=True):
            reads = []
            for name in rule.reads:
                if name == AS_OF:
                    continue
                question = self._compiler.question_by_identifier.get(name)
                code = question.code if question else ""
                value = evaluation.cel_values.get(name)
                if question is not None and value is not None:
                    value = _json_value(answers.get(code))
                reads.append(ReadValue(name, code, value, code in evaluation.hidden))
            blank_ok = self._compiler.blank_ok(rule.spec)
            blank = tuple(
                read.code or read.name
                for read in reads
                if read.value is None and read.name not in blank_ok
            )
            outcomes.append(
                RuleOutcome(
                    rule_id=rule.spec.id,
                    severity=rule.spec.severity,
                    title=rule.spec.title,
                    section=rule.section,
                    condition=rule.spec.when,
                    fired=fired,
                    reads=tuple(reads),
                    blank=() if fired else blank,
                )
            )
        return Explanation(result=result, rules=tuple(outcomes))

    def _score(
        self,
        answers: Mapping[str, Any],
        *,
        as_of: dt.date,
        evidence: Mapping[str, Sequence[EvidenceParseResult]] | None,
    ) -> tuple[ScoreResult, _Evaluation]:
        cel_values = cel_values_for(self.questionnaire, answers)
        cel_values[AS_OF] = date_to_cel(as_of)
        # One conversion of the answers into CEL values, shared by all three programs.
        context = cel.Context(cel_values, FUNCTIONS)
        hidden = self.visibility.hidden_codes(cel_values, context)
        given = evidence or {}
        # A hidden question's answer is ignored by scoring, and so are its files (PRB-02 when
        # PRB-01 is not "yes"; a probe result on v1 answers scored with ruleset v2).
        evidence = {code: results for code, results in given.items() if code not in hidden}
        found = FoundEvidence.from_files(evidence)
        for name, value in found.values().items():
            cel_values[name] = value
            context.add_variable(name, value)
        derived_program = self._compiler.derived_program
        if derived_program is not None:
            derived = derived_program.execute(context)
            for name, value in zip(self._compiler.derived_names, derived, strict=True):
                context.add_variable(name, value)
                cel_values[name] = value
        fired_flags = self._evaluate_rules(context)
        findings = []
        for rule, fired in zip(self.rules, fired_flags, strict=True):
            if fired:
                findings.append(self._finding(rule, answers, hidden, cel_values, found))
        severities = [finding.severity for finding in findings]
        score = score_points(severities, self.ruleset.points)
        fired_by_section: dict[str, int] = {}
        for finding in findings:
            fired_by_section[finding.section] = fired_by_section.get(finding.section, 0) + 1
        sections = {
            section: SectionCoverage(section, total, fired_by_section.get(section, 0))
            for section, total in self._section_totals.items()
        }
        severity_order = {severity: index for index, severity in enumerate(SEVERITIES)}
        findings.sort(key=lambda f: severity_order[f.severity])
        result = ScoreResult(
            questionnaire=self.questionnaire.key,
            ruleset=self.ruleset.key,
            risk_score=score,
            risk_tier=risk_tier(severities, score),
            findings=tuple(findings),
            sections=sections,
            evidence={code: [r.to_dict() for r in results] for code, results in given.items()},
            as_of=as_of,
        )
        return result, _Evaluation(cel_values, hidden, fired_flags)

    def _evaluate_rules(self, context: cel.Context) -> list[bool]:
        try:
            return list(self._rules_program.execute(context))
        except Exception:  # one rule failed at run time: find which, so the error names it
            for rule in self.rules:
                try:
                    compile_expression(self._compiler.guarded_source(rule), rule.spec.id).execute(
                        context
                    )
                except Exception as exc:
                    raise CatalogError(
                        f"{self.ruleset.key}: rule {rule.spec.id} failed: {exc}"
                    ) from exc
            raise

    def _finding(
        self,
        rule: CompiledRule,
        answers: Mapping[str, Any],
        hidden: set[str],
        cel_values: Mapping[str, Any],
        found: FoundEvidence,
    ) -> Finding:
        items = [
            EvidenceItem(EvidenceKind.ANSWER, code=code, value=_json_value(answers.get(code)))
            for code in rule.answer_codes
            if code not in hidden
        ]
        for name in rule.derived_reads:
            if cel_values.get(name) is not None:
                items.append(EvidenceItem(EvidenceKind.DERIVED, name=name, value=cel_values[name]))
        items.extend(
            found.items(
                reads_logs=rule.reads_logs,
                reads_model=rule.reads_model,
                probe_checks=rule.probe_checks,
            )
        )
        return Finding(
            rule_id=rule.spec.id,
            severity=rule.spec.severity,
            points=self.ruleset.points[rule.spec.severity],
            section=rule.section,
            title=rule.spec.title,
            references=rule.spec.references,
            evidence=tuple(items),
        )


def _json_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.date) else value
