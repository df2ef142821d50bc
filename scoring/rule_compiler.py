"""Checking a ruleset against its questionnaire and compiling each rule, before anything is scored.

Every problem a rule author can make is found here, at load time, never while a vendor's answers
are scored: a syntax or type error, a name that is no question or value, a string that is no
option of the questions read (a typo would make the rule silently never fire), a section the
questionnaire lacks. `RulesetCompiler` holds what all the rules share (the names they may read,
the derived values' program, which section each evidence file belongs to); `compile_rule` checks
one rule and says what it reads, so the engine (`scoring.engine`) can run all rules as one
program and a rule workbench can report each rule's problem at the rule
(`CompiledRuleset.lint`).

Pure: no ORM, no clock.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cel

from questionnaires.conditions import (
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
from questionnaires.validation import visibility_for
from scoring.evidence import PROBE_CHECK_OUTCOMES

from .results import ProblemKind, RuleProblem
from .rule_evidence import (
    EVIDENCE_PARSERS,
    LOG_VARIABLES,
    MODEL_VARIABLE,
    PROBE_VARIABLES,
    evidence_variables,
)
from .spec import RulesetSpec, RuleSpec

# The scoring date, a variable every rule may read (the caller passes it: no clock here).
AS_OF = "as_of"


@dataclass(frozen=True)
class CompiledRule:
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


class RulesetCompiler:
    """What a ruleset's rules share, checked against its questionnaire (the questionnaire it is
    written for, the derived values, the names a rule may read); raises `CatalogError`."""

    def __init__(
        self, ruleset: RulesetSpec, questionnaire: QuestionnaireSpec, *, check_limit: int
    ) -> None:
        if ruleset.questionnaire != questionnaire.key:
            raise CatalogError(
                f"{ruleset.key}: written for {ruleset.questionnaire}, not {questionnaire.key}"
            )
        self.ruleset = ruleset
        self.questionnaire = questionnaire
        self.check_limit = check_limit  # sample combinations each condition is checked with
        self.visibility = visibility_for(questionnaire, check_limit=check_limit)
        variables = questionnaire_variables(questionnaire)
        self.question_by_identifier = {
            q.identifier: q for q in questionnaire.iter_questions() if q.type != "file"
        }
        self._parser_sections: dict[str, str] = {}
        for question in questionnaire.iter_questions():
            if question.type == "file" and question.parser:
                self._parser_sections.setdefault(question.parser, question.section)
        variables.update(evidence_variables())
        self.derived_names, self.derived_program, derived_reads = self._compile_derived(variables)
        for name in self.derived_names:
            variables[name] = Variable(name, (0, 1_048_576))
        variables[AS_OF] = Variable(AS_OF, (date_to_cel(dt.date(2026, 12, 1)),))
        self.derived_reads = derived_reads
        self.variables: Mapping[str, Variable] = variables  # the names a rule may read

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
                limit=self.check_limit,
            )
            reads[name] = identifiers_in_order(expression, names)
        if not derived:
            return [], None, reads
        source = "[" + ", ".join(f"({expression})" for expression in derived.values()) + "]"
        program = compile_expression(source, f"{self.ruleset.key}: derived values")
        return list(derived), program, reads

    def compile_rule(self, rule: RuleSpec) -> CompiledRule:
        """One rule checked and what it reads; `RuleCheckError` says what is wrong with it."""
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
        variables = self.variables
        unknown = sorted(name for name in read_names(program, rule.when) if name not in variables)
        if unknown:
            message = f"{where}: unknown name(s) {', '.join(unknown)} in {rule.when!r}"
            raise problem(ProblemKind.UNKNOWN_CODE, message, unknown)
        blank_ok = self.blank_ok(rule)
        try:
            names = type_check(
                program, rule.when, variables, where, nullable=blank_ok, limit=self.check_limit
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
            sources = self.derived_reads.get(name, [name])
            for source in sources:
                question = self.question_by_identifier.get(source)
                if question and question.code not in answer_codes:
                    answer_codes.append(question.code)
        order = {q.code: index for index, q in enumerate(self.questionnaire.iter_questions())}
        answer_codes.sort(key=order.__getitem__)
        expanded = [s for name in ordered for s in self.derived_reads.get(name, [name])]
        return CompiledRule(
            spec=rule,
            section=section,
            reads=tuple(ordered),
            answer_codes=tuple(answer_codes),
            derived_reads=tuple(name for name in ordered if name in self.derived_reads),
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
        if name in self.derived_reads:
            first = next(iter(self.derived_reads[name]), None)
            return self._section_of(first)
        return self.question_by_identifier[name].section

    def _check_literals(self, rule: RuleSpec, names: Sequence[str], where: str) -> None:
        """A string compared with a choice answer must be one of its options: a typo such as
        "shared_acros_tenants" would otherwise make the rule silently never fire."""
        questions = [
            self.question_by_identifier[n] for n in names if n in self.question_by_identifier
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

    def blank_ok(self, rule: RuleSpec) -> set[str]:
        """Names a rule handles null for itself: questions, or evidence values such as a probe
        check that was not run (`fires_when_blank`)."""
        return {
            self.questionnaire.questions[code].identifier
            if code in self.questionnaire.questions
            else code
            for code in rule.fires_when_blank
        }

    def guarded_source(self, rule: CompiledRule) -> str:
        """The rule's condition, false while a value it reads is blank or hidden (unless it
        handles that blank itself): so a blank answer stops that rule alone."""
        blank_ok = self.blank_ok(rule.spec)
        guards = [
            f"{name} != null" for name in rule.reads if name not in blank_ok and name != AS_OF
        ]
        if not guards:
            return f"({rule.spec.when})"
        return f"(({' && '.join(guards)}) ? ({rule.spec.when}) : false)"


def _int_or_null(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))
