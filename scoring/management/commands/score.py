"""`manage.py score ANSWERS.json` — score an answer file offline (no database, no worker)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import translation

from questionnaires.spec import CatalogError
from questionnaires.validation import AnswerValidationError, format_errors, validate_answers
from scoring.evidence import EvidenceParseResult, parse_evidence
from scoring.registry import builtin_catalog

EXIT_INVALID_INPUT = 2


class Command(BaseCommand):
    help = "Score an answer file against a ruleset and print the result as JSON."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("answers", help="answer file (JSON, see questionnaire-v1.md)")
        parser.add_argument(
            "--evidence",
            action="append",
            default=[],
            metavar="CODE=PATH",
            help=(
                "an evidence file for a file question, e.g. CTX-08=prefill.log, "
                "PRF-10=config.json, PRB-02=probe.json (repeatable)"
            ),
        )
        parser.add_argument("--as-of", help="the date scoring treats as today (YYYY-MM-DD)")
        parser.add_argument(
            "--ruleset",
            help="slug@version; default: the newest that scores the questionnaire's answers",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        translation.activate("en")
        errors: dict[str, list[str]] = {}
        try:
            result = self._score(options, errors)
        except CatalogError as exc:
            errors.setdefault("catalogue", []).append(str(exc))
            result = None
        if errors or result is None:
            raise CommandError(
                "the answer file cannot be scored:\n" + format_errors(errors),
                returncode=EXIT_INVALID_INPUT,
            )
        self.stdout.write(json.dumps(result, ensure_ascii=False, indent=2))

    def _score(
        self, options: dict[str, Any], errors: dict[str, list[str]]
    ) -> dict[str, Any] | None:
        catalog = builtin_catalog()
        document = _read_answer_file(Path(options["answers"]), errors)
        as_of = _parse_as_of(options.get("as_of"), errors)
        if document is None:
            return None
        questionnaire_key = f"{document.get('questionnaire')}@{document.get('version')}"
        if questionnaire_key not in catalog.questionnaires:
            errors.setdefault("questionnaire", []).append(
                f"unknown questionnaire {questionnaire_key}; known: {', '.join(catalog.questionnaires)}"
            )
            return None
        questionnaire = catalog.questionnaire(questionnaire_key)
        ruleset_key = options.get("ruleset") or catalog.default_ruleset_for(questionnaire_key).key
        if ruleset_key not in catalog.rulesets:
            errors.setdefault("ruleset", []).append(f"unknown ruleset {ruleset_key}")
        elif questionnaire_key not in catalog.ruleset(ruleset_key).applies_to:
            applies_to = ", ".join(catalog.ruleset(ruleset_key).applies_to)
            errors.setdefault("ruleset", []).append(
                f"{ruleset_key} scores answers of {applies_to}, not {questionnaire_key}"
            )
        try:
            clean = validate_answers(
                questionnaire, document.get("answers"), document.get("comments")
            )
        except AnswerValidationError as exc:
            for code, messages in exc.as_text_dict().items():
                errors.setdefault(code, []).extend(messages)
            clean = None
        # Evidence questions are looked up in the ruleset's own questionnaire: a v1 answer file
        # scored with ruleset v2 may still bring v2 evidence (a probe result, a config.json).
        ruleset = catalog.rulesets.get(ruleset_key)
        evidence_questions = (
            catalog.questionnaire(ruleset.questionnaire) if ruleset else questionnaire
        )
        evidence = _read_evidence(options["evidence"], evidence_questions, errors)
        if errors or clean is None or as_of is None:
            return None
        engine = catalog.compiled(ruleset_key)
        result = engine.score(clean.values, as_of=as_of, evidence=evidence).to_dict("en")
        result["questionnaire"] = questionnaire_key  # the answers' version, not the ruleset's
        return result


def _read_answer_file(path: Path, errors: dict[str, list[str]]) -> dict[str, Any] | None:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        errors.setdefault("file", []).append(f"cannot read {path}: {exc.strerror}")
        return None
    except ValueError as exc:  # not JSON, not UTF-8, or a number of more than 4,300 digits
        errors.setdefault("file", []).append(f"{path} is not valid JSON: {exc}")
        return None
    if not isinstance(document, dict):
        errors.setdefault("file", []).append(f"{path}: the top level must be a JSON object")
        return None
    for key in ("questionnaire", "version"):
        if not isinstance(document.get(key), str | int):
            errors.setdefault(key, []).append(f"“{key}” is required")
    return None if errors else document


def _parse_as_of(value: str | None, errors: dict[str, list[str]]) -> dt.date | None:
    if not value:
        return dt.date.today()
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        errors.setdefault("--as-of", []).append(f"“{value}” is not a date (YYYY-MM-DD)")
        return None


def _read_evidence(
    pairs: list[str], questionnaire: Any, errors: dict[str, list[str]]
) -> dict[str, list[EvidenceParseResult]]:
    evidence: dict[str, list[EvidenceParseResult]] = {}
    for pair in pairs:
        code, separator, raw_path = pair.partition("=")
        question = questionnaire.questions.get(code)
        if not separator or not raw_path:
            errors.setdefault("--evidence", []).append(f"“{pair}” must read CODE=PATH")
        elif question is None:
            errors.setdefault(code, []).append("unknown question code (in --evidence)")
        elif question.type != "file":
            errors.setdefault(code, []).append("this question does not take evidence files")
        elif not Path(raw_path).is_file():
            errors.setdefault(code, []).append(f"evidence file {raw_path} does not exist")
        else:
            path = Path(raw_path)
            result = parse_evidence(path, parser=question.parser, source_name=path.name)
            evidence.setdefault(code, []).append(result)
    return evidence
