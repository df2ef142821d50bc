"""The condition language shared by `show_if` and scoring rules: Common Expression Language.

CEL is sandboxed by design (no access to Python objects, no loops, no I/O), so consultants can
write rules without being able to run code. We use the Rust implementation through the
`common-expression-language` package and add exactly two functions of our own.

Answers reach CEL as *variables*: one per question, named by its code with `-` → `_`
(`PRF-05` → `PRF_05`), `null` when the answer is blank or the question is hidden. Converting
Python values into a CEL activation dominates the cost of evaluation, so callers build one
activation per answer set (`Activation`) and evaluate one compiled program over it.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cel
from packaging.version import InvalidVersion, Version

from .spec import CatalogError, Question, QuestionnaireSpec

# How many combinations of sample values a condition is tried with when it is compiled (the
# shipped catalogue); an upload shares a budget among its conditions
# (scoring.catalogue_files.compiling).
CHECK_COMBINATIONS = 2000
_STRING_LITERAL = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


@lru_cache(maxsize=4096)
def parse_version(value: str) -> Version:
    """PEP 440 version of an answer; a leading `v` is ignored (`v0.5.21.post1`)."""
    text = value.strip()
    if text[:1] in ("v", "V"):
        text = text[1:]
    return Version(text)


def is_version(value: str) -> bool:
    try:
        parse_version(value)
    except InvalidVersion:
        return False
    return True


def _version_lt(left: str, right: str) -> bool:
    return parse_version(left) < parse_version(right)


def _days_between(earlier: dt.datetime, later: dt.datetime) -> int:
    return (later - earlier).days


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "version_lt": _version_lt,
    "days_between": _days_between,
}


def date_to_cel(value: dt.date) -> dt.datetime:
    return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)


def to_cel_value(question: Question, value: Any) -> Any:
    """The CEL form of a validated answer; `None` for blank answers and file questions."""
    if value is None or question.type == "file":
        return None
    if question.type == "multi_choice":
        return list(value) or None
    if question.type == "date":
        return date_to_cel(value)
    if isinstance(value, str) and not value.strip():
        return None
    return value


def compile_expression(expression: str, where: str) -> cel.Program:
    try:
        return cel.compile(expression)
    except (ValueError, RuntimeError) as exc:
        raise CatalogError(f"{where}: syntax error in condition {expression!r}: {exc}") from exc


def identifiers_in_order(expression: str, known: Iterable[str]) -> list[str]:
    """Known variable names in the order the expression first mentions them.

    CEL itself reports the referenced variables (`Program.variables()`), but not in source order;
    a rule's section is that of the *first* question it reads, so we scan the text with string
    literals blanked out.
    """
    known_set = set(known)
    seen: list[str] = []
    for match in _IDENTIFIER.finditer(_STRING_LITERAL.sub('""', expression)):
        name = match.group(0)
        if name in known_set and name not in seen:
            seen.append(name)
    return seen


def string_literals(expression: str) -> list[str]:
    return [literal[1:-1] for literal in _STRING_LITERAL.findall(expression)]


def sample_values(question: Question) -> list[Any]:
    """Typed sample values used to type-check conditions when the catalogue is loaded."""
    samples: dict[str, list[Any]] = {
        "yes_no": ["yes", "no", "unknown"],
        "integer": [0, 1_048_576],
        "version": ["0.5.21.post1", "0.5.22"],
        "date": [date_to_cel(dt.date(2025, 1, 1))],
        "text": ["text"],
    }
    if question.type == "choice":
        return list(question.option_codes)
    if question.type == "multi_choice":
        return [[code] for code in question.option_codes] + [list(question.option_codes[:2])]
    return samples.get(question.type, [None])


@dataclass(frozen=True)
class Variable:
    """A name conditions may read, with sample values for load-time type checks."""

    name: str
    samples: tuple[Any, ...]
    question: Question | None = None


def questionnaire_variables(questionnaire: QuestionnaireSpec) -> dict[str, Variable]:
    return {
        question.identifier: Variable(question.identifier, tuple(sample_values(question)), question)
        for question in questionnaire.iter_questions()
        if question.type != "file"
    }


def type_check(
    program: cel.Program,
    expression: str,
    variables: Mapping[str, Variable],
    where: str,
    *,
    nullable: Iterable[str] = (),
    gives: Callable[[Any], bool] = lambda value: isinstance(value, bool),
    gives_what: str = "true or false",
    limit: int = CHECK_COMBINATIONS,
) -> list[str]:
    """Evaluate the expression over combinations of typed samples; every result must satisfy
    `gives` (by default: a bool, as a condition must give).

    The Rust CEL engine has no static type checker, so a condition such as `CTX_01 == "yes"`
    (int against string) would only fail when evaluated. Trying every combination of sample
    values — including `null` for the variables that may be null — finds such mistakes when the
    catalogue is loaded instead of when a vendor's answers are scored. Returns the names read.
    """
    names = read_names(program, expression)
    unknown = [name for name in names if name not in variables]
    if unknown:
        raise CatalogError(
            f"{where}: unknown name(s) {', '.join(sorted(unknown))} in {expression!r}"
        )
    nullable_set = set(nullable)
    choices = [
        list(variables[name].samples) + ([None] if name in nullable_set else []) for name in names
    ]
    for combination in itertools.islice(_covering(choices), limit):
        activation = dict(zip(names, combination, strict=True))
        try:
            result = program.execute(cel.Context(activation, FUNCTIONS))
        except Exception as exc:  # the CEL runtime raises several exception types
            raise CatalogError(
                f"{where}: type error in condition {expression!r} with {activation}: {exc}"
            ) from exc
        if not gives(result):
            raise CatalogError(f"{where}: {expression!r} must give {gives_what}")
    return names


def read_names(program: cel.Program, expression: str) -> list[str]:
    """The variables a compiled expression reads (not the names its macros bind)."""
    return [name for name in program.variables() if name not in _bound_names(expression)]


def _covering(choices: list[list[Any]]) -> Iterator[tuple[Any, ...]]:
    """Combinations of sample values, those that try every value of each variable first (the
    others at their first value), then all of them: a limit on how many are tried then still
    tries each variable's every value (each type, and null)."""
    first = (0,) * len(choices)
    order = [first]
    for index, values in enumerate(choices):
        order.extend((*first[:index], pick, *first[index + 1 :]) for pick in range(1, len(values)))
    tried = set(order)
    everything = itertools.product(*(range(len(values)) for values in choices))
    for picks in itertools.chain(order, (p for p in everything if p not in tried)):
        yield tuple(values[pick] for values, pick in zip(choices, picks, strict=True))


def _bound_names(expression: str) -> set[str]:
    """Names bound by comprehension macros (`PRF_04.exists(r, r != "hk")` binds `r`)."""
    return set(
        re.findall(r"\.(?:exists|all|exists_one|map|filter)\(\s*([A-Za-z_]\w*)\s*,", expression)
    )


class Visibility:
    """Which questions are asked, given the answers so far (`show_if`).

    All `show_if` conditions are compiled into one CEL program. A hidden question counts as
    blank for the conditions of other questions, so evaluation repeats until nothing changes —
    once for a questionnaire whose conditions only read unconditional questions.
    """

    def __init__(
        self, questionnaire: QuestionnaireSpec, *, check_limit: int = CHECK_COMBINATIONS
    ) -> None:
        self.questionnaire = questionnaire
        variables = questionnaire_variables(questionnaire)
        conditional = [q for q in questionnaire.iter_questions() if q.show_if]
        self._conditional_codes = [q.code for q in conditional]
        self._reads: dict[str, list[str]] = {}
        for question in conditional:
            where = f"{questionnaire.key}: show_if of {question.code}"
            program = compile_expression(question.show_if or "", where)
            self._reads[question.code] = type_check(
                program,
                question.show_if or "",
                variables,
                where,
                nullable=variables,
                limit=check_limit,
            )
        conditional_identifiers = {q.identifier for q in conditional}
        self._chained = any(
            name in conditional_identifiers for names in self._reads.values() for name in names
        )
        source = "[" + ", ".join(f"({q.show_if})" for q in conditional) + "]"
        self._program = compile_expression(source, f"{questionnaire.key}: show_if")

    def hidden_codes(
        self, cel_values: dict[str, Any], context: cel.Context | None = None
    ) -> set[str]:
        """Codes of hidden questions. `cel_values` (identifier → CEL value) is updated in place,
        and so is `context` when given (the caller's activation, reused to avoid converting the
        answers twice): the values of hidden questions become `None`."""
        hidden: set[str] = set()
        if not self._conditional_codes:
            return hidden
        if context is None:
            context = cel.Context(cel_values, FUNCTIONS)
        original = {
            code: cel_values.get(code.replace("-", "_")) for code in self._conditional_codes
        }
        for _ in range(len(self._conditional_codes) + 1):
            shown = self._program.execute(context)
            now_hidden = {
                code
                for code, visible in zip(self._conditional_codes, shown, strict=True)
                if not visible
            }
            for code, value in original.items():
                identifier = code.replace("-", "_")
                new_value = None if code in now_hidden else value
                if cel_values.get(identifier) is not new_value:
                    cel_values[identifier] = new_value
                    context.add_variable(identifier, new_value)
            if now_hidden == hidden or not self._chained:
                return now_hidden
            hidden = now_hidden
        raise CatalogError(f"{self.questionnaire.key}: show_if conditions do not settle")

    def reads(self, code: str) -> Sequence[str]:
        return self._reads.get(code, ())

    def follow_ups(self, codes: Iterable[str]) -> set[str]:
        """The questions whose asking depends on the answers to `codes`, directly or through
        another such question (PRF-07 → PRF-08): those an answer to `codes` may open."""
        found: set[str] = set()
        reached = {code.replace("-", "_") for code in codes}
        while True:
            more = {
                code
                for code, names in self._reads.items()
                if code not in found and reached.intersection(names)
            }
            if not more:
                return found
            found |= more
            reached |= {code.replace("-", "_") for code in more}


_COMPREHENSION = re.compile(r"\.\s*(?:exists_one|exists|all|map|filter)\s*\(")


@dataclass(frozen=True)
class ConditionCost:
    """What bounds the cost of evaluating a condition, read from its text (the Rust CEL engine
    has no cost limit of its own, nor an AST exposed to Python): its length, its deepest
    nesting of brackets, how many comprehensions it has and whether one is inside another."""

    length: int
    nesting: int
    comprehensions: int
    nested_comprehension: bool


def condition_cost(expression: str) -> ConditionCost:
    text = _STRING_LITERAL.sub('""', expression)
    comprehension_opens = {match.end() - 1 for match in _COMPREHENSION.finditer(text)}
    depth = deepest = 0
    open_comprehensions: list[int] = []  # the depth at which each open comprehension started
    nested = False
    for position, character in enumerate(text):
        if character in "([{":
            depth += 1
            deepest = max(deepest, depth)
            if position in comprehension_opens:
                nested = nested or bool(open_comprehensions)
                open_comprehensions.append(depth)
        elif character in ")]}":
            if open_comprehensions and open_comprehensions[-1] == depth:
                open_comprehensions.pop()
            depth -= 1
    return ConditionCost(
        length=len(expression),
        nesting=deepest,
        comprehensions=len(comprehension_opens),
        nested_comprehension=nested,
    )
