"""The pure scoring engine: validated answers and parsed evidence in, findings and score out.

No ORM, no Celery, no clock: the caller passes `as_of`. A ruleset is compiled once
(`CompiledRuleset`) into three CEL programs — question visibility, derived values, rules — that
all run over one activation built once per answer set, because converting the answers into CEL
values costs more than evaluating forty rules. Each rule keeps its own semantics: the compiler
wraps it in a guard so that a blank or hidden answer it reads stops that rule alone.

What it returns (`ScoreResult`, `Finding`, `EvidenceItem`) is in `scoring.results`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

import cel

from questionnaires.conditions import (
    CHECK_COMBINATIONS,
    FUNCTIONS,
    Variable,
    compile_expression,
    date_to_cel,
    identifiers_in_order,
    is_version,
    questionnaire_variables,
    read_names,
    string_literals,
    type_check,
)
from questionnaires.spec import CatalogError, QuestionnaireSpec
from questionnaires.validation import cel_values_for, visibility_for
from scoring.evidence import (
    PROBE_CHECK_OUTCOMES,
    LogParseResult,
    ModelConfigParseResult,
    ProbeParseResult,
)

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
from .spec import SEVERITIES, RulesetSpec, RuleSpec

if TYPE_CHECKING:
    from scoring.evidence import EvidenceParseResult


# Values the engine reads from evidence files (not answers), null without a parsed file:
LOG_VARIABLES = ("log_pool", "log_context")  # startup logs: smallest pool, largest context


MODEL_VARIABLE = "model_kv_values"  # model config.json: KV values per token (x bytes/value)


PROBE_VARIABLES = {f"probe_{check}": check for check in PROBE_CHECK_OUTCOMES}  # latest result


PROBE_COUNT = "probe_results"  # how many parsed probe results there are (0, never null)


EVIDENCE_PARSERS = {  # which file question's section an evidence value belongs to
    **dict.fromkeys(LOG_VARIABLES, "startup_log"),
    MODEL_VARIABLE: "model_config",
    **dict.fromkeys([*PROBE_VARIABLES, PROBE_COUNT], "probe_result"),
}


AS_OF = "as_of"


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
class _CompiledRule:
    spec: RuleSpec
    section: str
    reads: tuple[str, ...]  # variable names in source order
    answer_codes: tuple[str, ...]  # question codes shown as the finding's evidence
    derived_reads: tuple[str, ...]  # derived values shown as the finding's evidence
    reads_logs: bool
    reads_model: bool  # the model's config.json (directly or through a derived value)
    probe_checks: tuple[str, ...]  # probe checks read (their results are shown)


class RuleCheckError(CatalogError):
    """A rule that does not compile against its questionnaire: the message as before, and what
    is wrong as data (`problem`), for the rule workbench to show at the rule."""

    def __init__(self, problem: RuleProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


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
        variables = self._prepare(ruleset, questionnaire, check_limit)
        self.rules = tuple(self._compile_rule(rule, variables) for rule in ruleset.rules)
        guarded = [self._guarded_source(rule) for rule in self.rules]
        self._rules_program = compile_expression(
            "[" + ", ".join(guarded) + "]", f"{ruleset.key}: rules"
        )
        self._section_totals: dict[str, int] = {}
        for rule in self.rules:
            self._section_totals[rule.section] = self._section_totals.get(rule.section, 0) + 1

    def _prepare(
        self, ruleset: RulesetSpec, questionnaire: QuestionnaireSpec, check_limit: int
    ) -> dict[str, Variable]:
        """Check what the rules share (the questionnaire, the derived values); the names a
        rule may read."""
        if ruleset.questionnaire != questionnaire.key:
            raise CatalogError(
                f"{ruleset.key}: written for {ruleset.questionnaire}, not {questionnaire.key}"
            )
        self.ruleset = ruleset
        self.questionnaire = questionnaire
        self._check_limit = check_limit  # sample combinations each condition is checked with
        self.visibility = visibility_for(questionnaire, check_limit=check_limit)
        variables = questionnaire_variables(questionnaire)
        self._question_by_identifier = {
            q.identifier: q for q in questionnaire.iter_questions() if q.type != "file"
        }
        self._parser_sections: dict[str, str] = {}
        for question in questionnaire.iter_questions():
            if question.type == "file" and question.parser:
                self._parser_sections.setdefault(question.parser, question.section)
        for name in LOG_VARIABLES:
            variables[name] = Variable(name, (0, 1_048_576))
        variables[MODEL_VARIABLE] = Variable(MODEL_VARIABLE, (1, 163_840))
        for name, check in PROBE_VARIABLES.items():
            variables[name] = Variable(name, PROBE_CHECK_OUTCOMES[check])
        variables[PROBE_COUNT] = Variable(PROBE_COUNT, (0, 1))
        self._derived_names, self._derived_program, derived_reads = self._compile_derived(variables)
        for name in self._derived_names:
            variables[name] = Variable(name, (0, 1_048_576))
        variables[AS_OF] = Variable(AS_OF, (date_to_cel(dt.date(2026, 12, 1)),))
        self._derived_reads = derived_reads
        return variables

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
        checker = cls.__new__(cls)
        try:
            variables = checker._prepare(ruleset, questionnaire, check_limit)
        except CatalogError as exc:
            return [RuleProblem("", ProblemKind.RULESET, str(exc))]
        problems = []
        for rule in ruleset.rules:
            try:
                checker._compile_rule(rule, variables)
            except RuleCheckError as exc:
                problems.append(exc.problem)
        if not problems:
            try:
                cls(ruleset, questionnaire, check_limit=check_limit)
            except CatalogError as exc:
                problems.append(RuleProblem("", ProblemKind.RULESET, str(exc)))
        return problems

    # -- compilation -------------------------------------------------------------------------

    def _compile_derived(
        self, variables: Mapping[str, Variable]
    ) -> tuple[list[str], cel.Program | None, dict[str, list[str]]]:
        derived = dict(self.ruleset.derived)
        reads: dict[str, list[str]] = {}
        for name, expression in derived.items():
            where = f"{self.ruleset.key}: derived value {name}"
            declared = self.ruleset.derived_values.get(name)
            unit = declared.unit if declared else None
            if unit is not None and unit not in self.questionnaire.units:
                raise CatalogError(f"{where}: unit {unit!r} is not a unit of the questionnaire")
            if name in variables or name == AS_OF:
                raise CatalogError(f"{where}: the name is already taken")
            program = compile_expression(expression, where)
            names = type_check(
                program,
                expression,
                variables,
                where,
                nullable=variables,
                gives=_int_or_null,
                gives_what="an integer or null",
                limit=self._check_limit,
            )
            reads[name] = identifiers_in_order(expression, names)
        if not derived:
            return [], None, reads
        source = "[" + ", ".join(f"({expression})" for expression in derived.values()) + "]"
        program = compile_expression(source, f"{self.ruleset.key}: derived values")
        return list(derived), program, reads

    def _compile_rule(self, rule: RuleSpec, variables: Mapping[str, Variable]) -> _CompiledRule:
        where = f"{self.ruleset.key}: rule {rule.id}"

        def problem(kind: str, message: str, names: Sequence[str] = ()) -> RuleCheckError:
            return RuleCheckError(RuleProblem(rule.id, kind, message, tuple(names)))

        try:
            program = compile_expression(rule.when, where)
        except CatalogError as exc:
            raise problem(ProblemKind.SYNTAX, str(exc)) from exc
        for code in rule.fires_when_blank:
            if code not in self.questionnaire.questions and code not in EVIDENCE_PARSERS:
                message = f"{where}: fires_when_blank names unknown question {code}"
                raise problem(ProblemKind.UNKNOWN_CODE, message, [code])
        unknown = sorted(name for name in read_names(program, rule.when) if name not in variables)
        if unknown:
            message = f"{where}: unknown name(s) {', '.join(unknown)} in {rule.when!r}"
            raise problem(ProblemKind.UNKNOWN_CODE, message, unknown)
        blank_ok = self._blank_ok(rule)
        try:
            names = type_check(
                program, rule.when, variables, where, nullable=blank_ok, limit=self._check_limit
            )
        except CatalogError as exc:
            raise problem(ProblemKind.TYPE, str(exc)) from exc
        ordered = identifiers_in_order(rule.when, names)
        self._check_literals(rule, ordered, where)
        first = ordered[0] if ordered else None
        section = rule.section or self._section_of(first)
        if section not in {s.code for s in self.questionnaire.sections}:
            message = f"{where}: section {section} is not a section of the questionnaire"
            raise problem(ProblemKind.SECTION, message, [section])
        answer_codes: list[str] = []
        for name in ordered:
            sources = self._derived_reads.get(name, [name])
            for source in sources:
                question = self._question_by_identifier.get(source)
                if question and question.code not in answer_codes:
                    answer_codes.append(question.code)
        order = {q.code: index for index, q in enumerate(self.questionnaire.iter_questions())}
        answer_codes.sort(key=order.__getitem__)
        expanded = [s for name in ordered for s in self._derived_reads.get(name, [name])]
        return _CompiledRule(
            spec=rule,
            section=section,
            reads=tuple(ordered),
            answer_codes=tuple(answer_codes),
            derived_reads=tuple(name for name in ordered if name in self._derived_reads),
            reads_logs=any(name in LOG_VARIABLES for name in ordered),
            reads_model=MODEL_VARIABLE in expanded,
            probe_checks=tuple(PROBE_VARIABLES[n] for n in expanded if n in PROBE_VARIABLES),
        )

    def _section_of(self, name: str | None) -> str:
        if name in EVIDENCE_PARSERS:
            return self._parser_sections.get(
                EVIDENCE_PARSERS[name], self.questionnaire.sections[0].code
            )
        if name is None or name == AS_OF:
            return self._parser_sections.get("startup_log", self.questionnaire.sections[0].code)
        if name in self._derived_reads:
            first = next(iter(self._derived_reads[name]), None)
            return self._section_of(first)
        return self._question_by_identifier[name].section

    def _check_literals(self, rule: RuleSpec, names: Sequence[str], where: str) -> None:
        """A string compared with a choice answer must be one of its options: a typo such as
        "shared_acros_tenants" would otherwise make the rule silently never fire."""
        questions = [
            self._question_by_identifier[n] for n in names if n in self._question_by_identifier
        ]
        option_codes = {
            code
            for q in questions
            if q.type in ("yes_no", "choice", "multi_choice")
            for code in q.option_codes
        }
        option_codes |= {
            outcome
            for name in names
            if name in PROBE_VARIABLES
            for outcome in PROBE_CHECK_OUTCOMES[PROBE_VARIABLES[name]]
        }
        reads_versions = any(q.type == "version" for q in questions)
        reads_text = any(q.type == "text" for q in questions)
        wrong = [
            literal
            for literal in string_literals(rule.when)
            if not (
                literal in option_codes or reads_text or (reads_versions and is_version(literal))
            )
        ]
        if wrong:
            read = ", ".join(q.code for q in questions) or "no question"
            message = f"{where}: “{wrong[0]}” is not an option of {read}"
            problem = RuleProblem(rule.id, ProblemKind.NOT_AN_OPTION, message, tuple(wrong))
            raise RuleCheckError(problem)

    def _blank_ok(self, rule: RuleSpec) -> set[str]:
        """Names a rule handles null for itself: questions, or evidence values such as a probe
        check that was not run (`fires_when_blank`)."""
        return {
            self.questionnaire.questions[code].identifier
            if code in self.questionnaire.questions
            else code
            for code in rule.fires_when_blank
        }

    def _guarded_source(self, rule: _CompiledRule) -> str:
        blank_ok = self._blank_ok(rule.spec)
        guards = [
            f"{name} != null" for name in rule.reads if name not in blank_ok and name != AS_OF
        ]
        if not guards:
            return f"({rule.spec.when})"
        return f"(({' && '.join(guards)}) ? ({rule.spec.when}) : false)"

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
                question = self._question_by_identifier.get(name)
                code = question.code if question else ""
                value = evaluation.cel_values.get(name)
                if question is not None and value is not None:
                    value = _json_value(answers.get(code))
                reads.append(ReadValue(name, code, value, code in evaluation.hidden))
            blank_ok = self._blank_ok(rule.spec)
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
        log_pool, log_context = _smallest_pool_largest_context(evidence)
        evidence_values: dict[str, Any] = {
            "log_pool": log_pool.values["pool"] if log_pool else None,
            "log_context": log_context.values["context"] if log_context else None,
        }
        model = _latest(evidence, ModelConfigParseResult)
        evidence_values[MODEL_VARIABLE] = (
            model[1].sizing.values_per_token if model and model[1].sizing else None
        )
        probe = _latest(evidence, ProbeParseResult)
        for name, check in PROBE_VARIABLES.items():
            evidence_values[name] = probe[1].checks.get(check) if probe else None
        evidence_values[PROBE_COUNT] = sum(
            1
            for results in evidence.values()
            for r in results
            if isinstance(r, ProbeParseResult) and r.parsed
        )
        for name, value in evidence_values.items():
            cel_values[name] = value
            context.add_variable(name, value)
        if self._derived_program is not None:
            derived = self._derived_program.execute(context)
            for name, value in zip(self._derived_names, derived, strict=True):
                context.add_variable(name, value)
                cel_values[name] = value
        fired_flags = self._evaluate_rules(context)
        findings = []
        for rule, fired in zip(self.rules, fired_flags, strict=True):
            if fired:
                found = _FoundEvidence(log_pool, log_context, model, probe)
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
                    compile_expression(self._guarded_source(rule), rule.spec.id).execute(context)
                except Exception as exc:
                    raise CatalogError(
                        f"{self.ruleset.key}: rule {rule.spec.id} failed: {exc}"
                    ) from exc
            raise

    def _finding(
        self,
        rule: _CompiledRule,
        answers: Mapping[str, Any],
        hidden: set[str],
        cel_values: Mapping[str, Any],
        found: _FoundEvidence,
    ) -> Finding:
        items = [
            EvidenceItem(EvidenceKind.ANSWER, code=code, value=_json_value(answers.get(code)))
            for code in rule.answer_codes
            if code not in hidden
        ]
        for name in rule.derived_reads:
            if cel_values.get(name) is not None:
                items.append(EvidenceItem(EvidenceKind.DERIVED, name=name, value=cel_values[name]))
        if rule.reads_logs:
            items.extend(_log_items(found.log_pool, found.log_context))
        if rule.reads_model and found.model is not None:
            code, model = found.model
            if model.sizing is not None:
                items.append(
                    EvidenceItem(
                        EvidenceKind.MODEL,
                        code=code,
                        file=model.source_name,
                        values={"values_per_token": model.sizing.values_per_token},
                    )
                )
        if found.probe is not None:
            code, probe = found.probe
            for check in dict.fromkeys(rule.probe_checks):
                if check in probe.checks:
                    items.append(
                        EvidenceItem(
                            EvidenceKind.PROBE,
                            code=code,
                            file=probe.source_name,
                            name=check,
                            value=probe.checks[check],
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


@dataclass(frozen=True)
class _FoundEvidence:
    """What the evidence files gave one scoring: log lines, the model file, the probe result."""

    log_pool: EvidenceItem | None
    log_context: EvidenceItem | None
    model: tuple[str, ModelConfigParseResult] | None
    probe: tuple[str, ProbeParseResult] | None


_Kind = TypeVar("_Kind", bound="EvidenceParseResult")


def _latest(
    evidence: Mapping[str, Sequence[EvidenceParseResult]], kind: type[_Kind]
) -> tuple[str, _Kind] | None:
    """(question code, result) of the last parsed result of a kind (files come oldest first)."""
    found: tuple[str, _Kind] | None = None
    for code, results in evidence.items():
        for result in results:
            if isinstance(result, kind) and result.parsed:
                found = (code, result)
    return found


def _int_or_null(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _json_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.date) else value


def _log_items(pool: EvidenceItem | None, context: EvidenceItem | None) -> list[EvidenceItem]:
    """The log lines behind `log_pool` and `log_context`; one item when both come from the same
    line of the same file (an SGLang scheduler line carries both)."""
    if (
        pool
        and context
        and (pool.code, pool.file, pool.line)
        == (
            context.code,
            context.file,
            context.line,
        )
    ):
        return [replace(pool, values={**pool.values, **context.values})]
    return [item for item in (pool, context) if item]


def _smallest_pool_largest_context(
    evidence: Mapping[str, Sequence[EvidenceParseResult]],
) -> tuple[EvidenceItem | None, EvidenceItem | None]:
    """The evidence lines of the smallest KV pool and the largest context over all logs."""
    pool: EvidenceItem | None = None
    context: EvidenceItem | None = None
    for code, results in evidence.items():
        for result in results:
            if not isinstance(result, LogParseResult) or not result.parsed:
                continue  # startup logs only
            if result.pool is not None and (pool is None or result.pool < pool.values["pool"]):
                pool = _log_item(
                    code, result, result.pool_line, result.pool_text, "pool", result.pool
                )
            if result.context is not None and (
                context is None or result.context > context.values["context"]
            ):
                context = _log_item(
                    code,
                    result,
                    result.context_line,
                    result.context_text,
                    "context",
                    result.context,
                )
    return pool, context


def _log_item(
    code: str,
    result: LogParseResult,
    line: int | None,
    text: str | None,
    quantity: str,
    number: int,
) -> EvidenceItem:
    return EvidenceItem(
        EvidenceKind.LOG,
        code=code,
        file=result.source_name or "",
        line=line,
        text=text or "",
        values={quantity: number},
    )
