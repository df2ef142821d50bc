"""Evidence files as a reader reads them: the one-line description beside an upload (portal and
member pages), and the evidence chapter of the PDF (engine, KV pool, context, the quoted log
lines, the parser's notes).

Every sentence about a parse result goes through `describe_evidence` and `evidence_notes`,
which render the parser's messages (`scoring.evidence.describe_parse_result` / `parse_notes`)
in the reader's language; nothing else on a page or in the PDF words a parse result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.utils import translation
from django.utils.translation import gettext
from django.utils.translation import gettext as _

from core.formats import EMPTY, format_datetime, format_line, format_tokens
from questionnaires.spec import QuestionnaireSpec
from scoring.evidence import ENGINE_LABELS, describe_parse_result, parse_notes

from ..models import EvidenceFile


@dataclass(frozen=True)
class Sentence:
    """A sentence about a parse result. `verbatim`: the parser's own words as it stored them
    (English), quoted as they are — pages mark them so (translate="no"), never as our prose."""

    text: str
    verbatim: bool = False

    def __str__(self) -> str:
        return self.text


def describe_evidence(parse_result: Mapping[str, Any] | None, language: str) -> Sentence:
    """One line about an uploaded file (the engine, the smallest KV pool and the largest
    context it reports, and where; or why it was not parsed), in the reader's language."""
    data = parse_result or {}
    with translation.override(language):
        text = describe_parse_result(data, gettext)
    # A "not parsed" reason stored before reasons became data is the parser's English.
    return Sentence(text, verbatim=isinstance(data.get("reason"), str) and bool(data["reason"]))


def evidence_notes(parse_result: Mapping[str, Any] | None, language: str) -> list[Sentence]:
    """What the parser noticed besides the figures (a failed start, rejected prompts…); notes
    stored before notes became data are the parser's English, quoted as they are."""
    data = parse_result or {}
    with translation.override(language):
        texts = parse_notes(data, gettext)
    return [
        Sentence(text, verbatim=isinstance(item, str))
        for item, text in zip(data.get("notes") or (), texts, strict=True)
    ]


def engine_label(engine: str | None, language: str) -> str:
    if not engine:
        with translation.override(language):
            return _("Not parsed")
    return ENGINE_LABELS.get(engine, engine)


@dataclass(frozen=True)
class EvidenceRow:
    """A stored evidence file beside its question, on a page."""

    pk: int
    name: str
    size: int
    uploaded_at: str
    parsed: bool
    description: Sentence


def evidence_rows(files: Iterable[EvidenceFile], language: str) -> list[EvidenceRow]:
    return [
        EvidenceRow(
            pk=f.pk,
            name=f.original_name,
            size=f.size,
            uploaded_at=format_datetime(f.uploaded_at, language),
            parsed=f.parsed,
            description=describe_evidence(f.parse_result, language),
        )
        for f in files
    ]


@dataclass(frozen=True)
class LogLine:
    number: int | None
    line_label: str
    text: str  # quoted exactly as the engine wrote it


@dataclass(frozen=True)
class EngineInstanceView:
    label: str
    pool: str
    context: str


@dataclass(frozen=True)
class EvidenceFileView:
    name: str
    kind: str  # "startup_log" (engine, pool, context, lines), or another parser's
    engine: str
    parsed: bool
    description: Sentence
    pool: str
    pool_line: str
    context: str
    context_line: str
    lines: tuple[LogLine, ...]
    instances: tuple[EngineInstanceView, ...]  # only when the file holds several
    notes: tuple[Sentence, ...]


@dataclass(frozen=True)
class EvidenceQuestionView:
    code: str
    question: str
    pool: str
    context: str
    files: tuple[EvidenceFileView, ...]

    @property
    def has_startup_logs(self) -> bool:
        """Whether the smallest pool and largest context over the logs mean anything here (a
        probe result or a config.json has neither)."""
        return any(file.kind == "startup_log" for file in self.files)


def evidence_views(
    snapshot: Mapping[str, Any], spec: QuestionnaireSpec, language: str
) -> tuple[EvidenceQuestionView, ...]:
    """A scoring run's evidence snapshot, question by question."""
    views = []
    for code, entry in sorted((snapshot or {}).items()):
        question = spec.questions.get(code)
        views.append(
            EvidenceQuestionView(
                code=code,
                question=question.text.get(language) if question else "",
                pool=format_tokens(entry.get("pool"), language),
                context=format_tokens(entry.get("context"), language),
                files=tuple(evidence_file_view(f, language) for f in entry.get("files") or ()),
            )
        )
    return tuple(views)


def evidence_file_view(result: Mapping[str, Any], language: str) -> EvidenceFileView:
    lines: dict[int | None, str] = {}

    def keep(number: Any, text: Any) -> None:
        if text:
            lines.setdefault(number if isinstance(number, int) else None, str(text))

    keep(result.get("pool_line"), result.get("pool_text"))
    keep(result.get("context_line"), result.get("context_text"))
    instances = []
    for instance in result.get("instances") or ():
        keep(instance.get("pool_line"), instance.get("pool_text"))
        keep(instance.get("context_line"), instance.get("context_text"))
        instances.append(
            EngineInstanceView(
                label=_instance_label(instance, language),
                pool=_tokens_at(instance.get("pool_tokens"), instance.get("pool_line"), language),
                context=_tokens_at(
                    instance.get("context_tokens"), instance.get("context_line"), language
                ),
            )
        )
    return EvidenceFileView(
        name=str(result.get("source_name") or ""),
        kind=str(result.get("kind") or "startup_log"),
        engine=engine_label(result.get("engine"), language),
        parsed=bool(result.get("parsed")),
        description=describe_evidence(result, language),
        pool=format_tokens(result.get("pool"), language),
        pool_line=format_line(result.get("pool_line"), language),
        context=format_tokens(result.get("context"), language),
        context_line=format_line(result.get("context_line"), language),
        lines=tuple(
            LogLine(number=number, line_label=format_line(number, language), text=text)
            for number, text in sorted(lines.items(), key=lambda item: item[0] or 0)
        ),
        # One instance says nothing the file's own figures do not; several are worth a list.
        instances=tuple(instances) if len(instances) > 1 else (),
        notes=tuple(evidence_notes(result, language)),
    )


def _instance_label(instance: Mapping[str, Any], language: str) -> str:
    engine = engine_label(instance.get("engine"), language)
    with translation.override(language):
        roles = {"prefill": _("prefill"), "decode": _("decode"), "single": _("single node")}
        label = engine
        if role := instance.get("role"):
            label = f"{engine} · {roles.get(role, role)}"
        if instance.get("failed_start"):
            label = _("%(instance)s (failed start)") % {"instance": label}
    return label


def _tokens_at(tokens: Any, line: Any, language: str) -> str:
    if tokens is None:
        return EMPTY
    where = format_line(line if isinstance(line, int) else None, language)
    text = format_tokens(tokens, language)
    return f"{text} · {where}" if where else text


__all__ = [
    "EvidenceFileView",
    "EvidenceQuestionView",
    "describe_evidence",
    "evidence_file_view",
    "evidence_notes",
    "evidence_views",
]
