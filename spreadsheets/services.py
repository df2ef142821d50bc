"""The questionnaire workbook out and in, for whoever answers: a vendor through their link, or a
member (the assessor).

Out (`workbook_export`): the sections the answerer may answer — the vendor's sections for a
link; for a member, the vendor's sections and the buyer's own by their role — with the
questions they may change now unlocked.

In (`workbook_import`): the whole workbook is one request, all or nothing. Each cell becomes
what the browser would send (`reading.form_value`) and goes through the one answer form of the
portal and the member pages (`assessments.answering.answer_form`, with every required question
of the workbook's sections required), then the one service that saves answers. Any error — a
cell, a question the answerer may not change, the file itself — saves nothing, and no drafts
are kept either: the workbook itself holds what was typed. Errors name the sheet, row and code.
"""

from __future__ import annotations

import io
import secrets
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _

from accounts.roles import Capability
from accounts.tenancy import OrgContext
from assessments import lifecycle
from assessments.answer_forms import CatalogueAnswersForm, comment_name
from assessments.answering import Answerer, answer_form
from assessments.audit import audit_record
from assessments.models import Assessment
from assessments.services.answers import (
    answer_values,
    answers_save,
    buyer_section_codes,
    require_answers_open,
)
from core.text import one_line_break, readable_name
from questionnaires.spec import Question, Section
from questionnaires.validation import clean_answer
from scoring.catalogue_files.document import CatalogueDocument
from scoring.services import CatalogueDraft, catalogue_draft_create

from . import layout
from .catalogue_import.document import catalogue_document
from .catalogue_import.mapping import ColumnMapping
from .catalogue_import.tables import WorkbookTables, read_tables
from .reading import (
    CellError,
    CellProblem,
    FilledRow,
    FilledWorkbook,
    WorkbookInvalid,
    WorkbookRefused,
    comment_value,
    form_value,
    max_upload_bytes,
    read_workbook,
)
from .workbook import questionnaire_workbook

IMPORTED_ACTION = "answers.imported"


@dataclass(frozen=True)
class ExportedWorkbook:
    content: bytes
    filename: str


@dataclass(frozen=True)
class ImportResult:
    changed: list[str]  # codes whose answer or comment changed
    file_name: str


def workbook_sections(answerer: Answerer) -> list[Section]:
    """The sections a workbook for this answerer holds: the vendor's for a link; for a member,
    those their role may answer (the buyer's own section needs `answer_use_section`)."""
    spec = answerer.assessment.questionnaire.spec
    if answerer.vendor_link is not None or answerer.member is None:
        return [s for s in spec.sections if s.vendor_facing]
    buyer = buyer_section_codes(spec)
    return [
        s
        for s in spec.sections
        if answerer.member.can(
            Capability.ANSWER_USE_SECTION if s.code in buyer else Capability.EDIT_ASSESSMENT
        )
    ]


def workbook_editable_codes(answerer: Answerer, sections: list[Section]) -> set[str]:
    """The questions whose cells are unlocked: none once answers are closed; after a change
    request, a vendor's re-opened ones only; never evidence AVIA produces (the probe's result),
    which no form answers or comments."""
    if answerer.assessment.status not in lifecycle.EDITABLE_STATUSES:
        return set()
    codes = {q.code for s in sections for q in s.questions if not q.produced_by_avia}
    allowed = answerer.editable_codes()
    return codes if allowed is None else codes & allowed


def workbook_export(*, answerer: Answerer, language: str) -> ExportedWorkbook:
    assessment = answerer.assessment
    spec = assessment.questionnaire.spec
    sections = workbook_sections(answerer)
    comments = {
        code: comment
        for code, comment in assessment.answers.values_list("question_code", "comment")
        if comment
    }
    files: dict[str, list[str]] = {}
    for code, name in assessment.evidence.order_by("uploaded_at", "pk").values_list(
        "question_code", "original_name"
    ):
        files.setdefault(code, []).append(name)
    with translation.override(language):
        facts = [
            (_("Requested by"), assessment.organization.display_name),
            (_("Vendor"), assessment.vendor.name),
            (_("Assessment"), f"#{assessment.pk}"),
        ]
    content = questionnaire_workbook(
        assessment_id=assessment.pk,
        spec=spec,
        sections=sections,
        values=answer_values(assessment),
        comments=comments,
        files=files,
        editable=workbook_editable_codes(answerer, sections),
        language=language,
        title_facts=facts,
    )
    return ExportedWorkbook(
        content=content,
        filename=f"avia-assessment-{assessment.pk}-{spec.slug}-v{spec.version}-{language}.xlsx",
    )


@transaction.atomic
def workbook_import(*, answerer: Answerer, upload: UploadedFile, language: str) -> ImportResult:
    """Save every answer and comment of a filled workbook, or none; see the module's
    description. Raises `WorkbookRefused` (the file), `WorkbookInvalid` (cells), or the
    refusals of the answer services (answers closed: 409; a role that may not answer: 403)."""
    assessment = answerer.assessment
    with translation.override(language):
        filled = read_workbook(upload, size=upload.size or 0)
        _require_this_assessment(filled.layout, assessment)
        require_answers_open(assessment)
        form, problems = _checked_form(answerer, filled, language)
        if problems:
            raise WorkbookInvalid(problems)
        changed = answers_save(
            assessment=assessment,
            answers=form.answers(),
            comments=form.comments(),
            channel=answerer.channel,
            **answerer.by,
        )
        file_name = readable_name(upload.name or "", max_length=255, default="workbook.xlsx")
        audit_record(
            organization=assessment.organization,
            assessment=assessment,
            action=IMPORTED_ACTION,
            actor=answerer.member.user if answerer.member else None,
            vendor_link=answerer.vendor_link,
            channel=answerer.channel,
            detail={"file": file_name, "codes": sorted(changed)},
        )
    return ImportResult(changed=sorted(changed), file_name=file_name)


def _require_this_assessment(found: layout.WorkbookLayout, assessment: Assessment) -> None:
    if found.assessment_id != assessment.pk:
        raise WorkbookRefused(
            _(
                "This workbook belongs to another assessment. Download the workbook of this "
                "assessment, copy the answers into it and upload it."
            )
        )
    if found.questionnaire != assessment.questionnaire.key:
        raise WorkbookRefused(
            _(
                "This workbook was made for questionnaire %(theirs)s; this assessment uses "
                "%(ours)s. Download a fresh workbook, copy the answers into it and upload it."
            )
            % {"theirs": found.questionnaire, "ours": assessment.questionnaire.key}
        )


def _checked_form(
    answerer: Answerer, filled: FilledWorkbook, language: str
) -> tuple[CatalogueAnswersForm, list[CellError]]:
    """The answer form bound to the workbook's cells, and every problem found: the form's own
    errors, cells holding no answer (formulas), and changes to questions the answerer may not
    change now."""
    spec = answerer.assessment.questionnaire.spec
    reach = {s.code for s in workbook_sections(answerer)}
    problems: list[CellError] = []
    data: dict[str, Any] = {}
    for code, row in filled.rows.items():
        question = spec.questions[code]
        if question.section not in reach:
            continue
        try:
            if question.type != "file":
                data[code] = form_value(question, row.answer)
            data[comment_name(code)] = comment_value(row.comment)
        except CellProblem as exc:
            problems.append(_cell_error(row, exc.args[0]))
    sections = [s.code for s in spec.sections if s.code in reach]
    in_workbook = {spec.questions[code].section for code in filled.rows}
    form = answer_form(
        answerer,
        [code for code in sections if code in in_workbook],
        language,
        data,
        require_answers=True,
    )
    form.is_valid()
    unreadable = {problem.code for problem in problems}
    by_field = {comment_name(code): code for code in filled.rows}
    for name, messages in form.errors.items():
        code = by_field.get(name, name)
        if code in unreadable:
            continue  # reported already; its blank stand-in is no second problem
        row = filled.rows.get(code)
        for message in messages:
            if row is None:
                problems.append(CellError(sheet="", row=0, code=code, message=str(message)))
            else:
                problems.append(_cell_error(row, message))
    saved = answer_values(answerer.assessment)
    saved_comments = dict(answerer.assessment.answers.values_list("question_code", "comment"))
    for code, row in filled.rows.items():
        if code in form.editable_codes or any(p.code == code for p in problems):
            continue
        if _changed(spec.questions[code], row, saved.get(code), saved_comments.get(code, "")):
            problems.append(_cell_error(row, _("This question cannot be changed now.")))
    order = {code: index for index, code in enumerate(filled.rows)}
    return form, sorted(problems, key=lambda p: order.get(p.code, -1))


def _changed(question: Question, row: FilledRow, saved: Any, saved_comment: str) -> bool:
    """Whether a locked question's cells say something other than what is saved (line breaks
    aside: a cell gives back LF where an older answer may hold CR LF)."""
    try:
        if (
            one_line_break(comment_value(row.comment)).strip()
            != one_line_break(saved_comment or "").strip()
        ):
            return True
        if question.type == "file":
            return False
        typed = clean_answer(question, form_value(question, row.answer))
    except (CellProblem, ValueError):
        return True
    if isinstance(typed, list) and isinstance(saved, list):
        return sorted(typed) != sorted(saved)
    if isinstance(saved, str):
        saved = one_line_break(saved)
    return typed != saved


def _cell_error(row: FilledRow, message: Any) -> CellError:
    return CellError(
        sheet=row.position.sheet, row=row.position.row, code=row.position.code, message=str(message)
    )


# -- a questionnaire from a spreadsheet (issue 24) -------------------------------------------

PENDING_IMPORT_SECONDS = 60 * 60  # between the upload and the mapping's submit
_PENDING_PREFIX = "spreadsheets:catalogue-import"


@dataclass(frozen=True)
class PendingImport:
    """An uploaded questionnaire spreadsheet awaiting its column mapping: checked once (it
    opened and is within bounds), kept in the cache for one member of one organization."""

    token: str
    file_name: str
    content: bytes
    preset: str

    def tables(self) -> WorkbookTables:
        return read_tables(io.BytesIO(self.content), size=len(self.content))


def _pending_key(organization_id: int, user_id: int, token: str) -> str:
    return f"{_PENDING_PREFIX}:{organization_id}:{user_id}:{token}"


def catalogue_upload_keep(
    *, organization_id: int, user_id: int, upload: UploadedFile, preset: str
) -> PendingImport:
    """Check an uploaded spreadsheet (`WorkbookRefused` says why it cannot be read) and keep it
    for the mapping screen. Nothing is saved in the database."""
    content = upload.read(max_upload_bytes() + 1)
    read_tables(io.BytesIO(content), size=upload.size or len(content))
    pending = PendingImport(
        token=secrets.token_urlsafe(16),
        file_name=readable_name(upload.name or "", max_length=255, default="questionnaire.xlsx"),
        content=content,
        preset=preset,
    )
    cache.set(
        _pending_key(organization_id, user_id, pending.token),
        {"file_name": pending.file_name, "content": content, "preset": preset},
        PENDING_IMPORT_SECONDS,
    )
    return pending


def catalogue_upload_get(*, organization_id: int, user_id: int, token: str) -> PendingImport | None:
    """The member's pending upload (None once it expired, or for anyone else's token)."""
    kept = cache.get(_pending_key(organization_id, user_id, token))
    if not isinstance(kept, dict):
        return None
    return PendingImport(
        token=token,
        file_name=str(kept["file_name"]),
        content=bytes(kept["content"]),
        preset=str(kept["preset"]),
    )


def catalogue_draft_from_upload(
    *,
    context: OrgContext,
    pending: PendingImport,
    mapping: ColumnMapping,
    slug: str,
    title_en: str,
    title_zh: str,
) -> CatalogueDraft:
    """The pending spreadsheet, read with its mapping, saved as a draft of the organization's
    catalogue — all or nothing: `WorkbookInvalid` lists every bad row, `CatalogueInvalid` every
    problem the catalogue's own checks find (by cell). The pending upload is forgotten once its
    draft exists."""
    context.require(Capability.MANAGE_CATALOGUES)
    document = catalogue_document(
        pending.tables(),
        mapping,
        slug=slug,
        title_en=title_en,
        title_zh=title_zh,
        source_name=pending.file_name,
    )
    draft = imported_catalogue_save(context=context, document=document)
    cache.delete(_pending_key(context.organization.pk, context.user.pk, pending.token))
    return draft


def imported_catalogue_save(*, context: OrgContext, document: CatalogueDocument) -> CatalogueDraft:
    """Where an imported questionnaire becomes the organization's draft: the catalogue's one
    draft service, which checks it as it checks an uploaded YAML file."""
    return catalogue_draft_create(
        context=context, document=document, source_name=document.source_name
    )
