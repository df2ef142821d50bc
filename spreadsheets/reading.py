"""Reading an uploaded questionnaire workbook, whatever file it turns out to be.

The file is checked before it is parsed: its size, that it is a zip archive (an .xlsx is one),
and how large it unpacks to, so that a zip bomb is refused unopened. openpyxl then reads it in
read-only mode through defusedxml (no XML entity expansion), and never evaluates a formula: a
cell holding one is reported, not calculated. Only the cells at the positions the signature
vouches for are read.

What a cell holds is then turned into what the answer form would receive from a browser
(`form_value`): option labels in either language become option codes, numbers typed as numbers
become their digits, dates become YYYY-MM-DD. Everything else — "1M", "1,048,576", a misspelt
label — is passed on as typed, for the one validation of the forms to accept or refuse.
"""

from __future__ import annotations

import datetime as dt
import logging
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

from django.conf import settings
from django.core import signing
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext_lazy as _
from openpyxl import load_workbook
from openpyxl.utils import get_column_letter

from assessments.presenters.answers import option_labels
from core.errors import ServiceError
from questionnaires.spec import LANGUAGES, Question

from . import layout
from .workbook import MULTI_CHOICE_SEPARATOR

logger = logging.getLogger(__name__)

# Separators of several choices: the workbook's ";", its full-width form typed with a Chinese
# input method, and the enumeration comma of Chinese lists.
CHOICE_SEPARATORS = (MULTI_CHOICE_SEPARATOR, "；", "、")
FORMULA, ERROR = "f", "e"


def max_upload_bytes() -> int:
    return settings.WORKBOOK_MAX_BYTES


def max_unpacked_bytes() -> int:
    return settings.WORKBOOK_MAX_UNPACKED_BYTES


MAX_PARTS = 500  # files inside the archive; a questionnaire workbook has about 20
OLE_SIGNATURE = bytes.fromhex("d0cf11e0a1b11ae1")  # a compound file: .xls, or an encrypted .xlsx
ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")  # a stream's name in its directory


class WorkbookRefused(ServiceError):
    """The file as a whole cannot be read or trusted (nothing in it was looked at)."""

    def __init__(self, message: Any) -> None:
        super().__init__({"workbook": [message]})


@dataclass(frozen=True)
class CellError:
    """A cell (or a row) that cannot be taken, and where it is: its sheet, row, column letter
    (when one cell is at fault) and the question code of its row."""

    sheet: str
    row: int
    code: str
    message: str
    column: str = ""

    @property
    def text(self) -> str:
        where = {"sheet": self.sheet, "row": self.row, "code": self.code, "message": self.message}
        if self.column:
            return _("Sheet %(sheet)s, row %(row)s, column %(column)s (%(code)s): %(message)s") % {
                **where,
                "column": self.column,
            }
        return _("Sheet %(sheet)s, row %(row)s (%(code)s): %(message)s") % where


class WorkbookInvalid(ServiceError):
    """Cells that cannot be saved, each with where it is: nothing was saved."""

    def __init__(self, cells: list[CellError]) -> None:
        self.cells = cells
        errors: dict[str, list[str]] = {}
        for cell in self.cells:
            errors.setdefault(cell.code, []).append(cell.text)
        super().__init__(errors)


@dataclass(frozen=True)
class FilledCell:
    value: Any
    data_type: str = "n"  # openpyxl's: n(umber), s(tring), d(ate), b(ool), f(ormula), e(rror)


@dataclass(frozen=True)
class FilledRow:
    position: layout.QuestionPosition
    answer: FilledCell
    comment: FilledCell


@dataclass(frozen=True)
class FilledWorkbook:
    layout: layout.WorkbookLayout
    rows: dict[str, FilledRow]  # by question code, in the workbook's order


def read_workbook(upload: IO[bytes], *, size: int) -> FilledWorkbook:
    """Open an upload as a questionnaire workbook; `WorkbookRefused` says why it cannot be."""
    with opened_workbook(upload, size=size) as book:
        return _read(book)


@contextmanager
def opened_workbook(upload: IO[bytes], *, size: int, not_a_workbook: Any = None) -> Iterator[Any]:
    """An upload opened as an .xlsx (read-only, formulas never evaluated) once its size and its
    archive are checked: the one way AVIA opens a workbook it did not write itself. Anything the
    block fails on, short of a `ServiceError` of its own, is `WorkbookRefused` (a hostile or
    broken file can fail anywhere in the parser). `not_a_workbook` replaces the message for a
    file that is no .xlsx at all."""
    if size > max_upload_bytes():
        raise WorkbookRefused(
            _("The file is %(size)s; a workbook of at most %(limit)s is accepted.")
            % {"size": filesizeformat(size), "limit": filesizeformat(max_upload_bytes())}
        )
    _check_archive(upload, not_a_workbook)
    upload.seek(0)
    try:
        book = load_workbook(upload, read_only=True, data_only=False, keep_links=False)
    except Exception as exc:
        logger.info("unreadable workbook: %r", exc)
        raise WorkbookRefused(_unreadable()) from None
    try:
        yield book
    except ServiceError:
        raise
    except Exception as exc:
        logger.info("unreadable workbook: %r", exc)
        raise WorkbookRefused(_unreadable()) from None
    finally:
        book.close()


def _unreadable() -> Any:
    return _(
        "The workbook could not be read. Save it as an Excel workbook (.xlsx) and upload it again."
    )


def _check_archive(upload: IO[bytes], not_a_workbook: Any = None) -> None:
    """An .xlsx is a zip archive: refuse anything else, and any archive that would unpack to
    more than the limit (the sizes it declares are the most Python's zipfile unpacks)."""
    try:
        upload.seek(0)
        with zipfile.ZipFile(upload) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError):
        if _encrypted(upload):
            raise WorkbookRefused(
                _(
                    "This workbook is protected with a password, so it cannot be read. Open it "
                    "in Excel, remove the password (File, Info, Protect Workbook, Encrypt with "
                    "Password), save it and upload it again."
                )
            ) from None
        raise WorkbookRefused(
            not_a_workbook
            or _("This file is not an Excel workbook (.xlsx). Upload the workbook downloaded here.")
        ) from None
    if len(parts) > MAX_PARTS or sum(part.file_size for part in parts) > max_unpacked_bytes():
        raise WorkbookRefused(
            _("This file unpacks to more than %(limit)s: it is not a questionnaire workbook.")
            % {"limit": filesizeformat(max_unpacked_bytes())}
        )


def _encrypted(upload: IO[bytes]) -> bool:
    """An Excel workbook saved with a password: not a zip archive but an OLE compound file
    holding the encrypted workbook as its "EncryptedPackage" stream (ECMA-376 part 2, MS-OFFCRYPTO).
    The upload is at most `WORKBOOK_MAX_BYTES`, so it is searched whole."""
    upload.seek(0)
    content = upload.read(max_upload_bytes() + 1)
    return content.startswith(OLE_SIGNATURE) and ENCRYPTED_PACKAGE in content


def _read(book: Any) -> FilledWorkbook:
    if layout.SIGNATURE_SHEET not in book.sheetnames:
        raise WorkbookRefused(
            _(
                "This workbook has no AVIA signature sheet: it was not downloaded from AVIA. "
                "Download the workbook here, copy the answers into it and upload it."
            )
        )
    signed = book[layout.SIGNATURE_SHEET][layout.SIGNATURE_CELL].value
    try:
        found = layout.WorkbookLayout.from_signed(signed if isinstance(signed, str) else "")
    except signing.BadSignature:
        raise WorkbookRefused(
            _(
                "The workbook's signature sheet was changed, so the workbook cannot be trusted. "
                "Download a fresh workbook, copy the answers into it and upload it."
            )
        ) from None
    rows: dict[str, FilledRow] = {}
    for sheet_name in found.sheets():
        wanted = {p.row: p for p in found.positions if p.sheet == sheet_name}
        if sheet_name not in book.sheetnames:
            raise _moved(next(iter(wanted.values())))
        sheet = book[sheet_name]
        for number, cells in enumerate(
            sheet.iter_rows(min_row=1, max_row=max(wanted), max_col=layout.COMMENT_COLUMN),
            start=1,
        ):
            by_column = {index: cell for index, cell in enumerate(cells, start=1)}
            if number == layout.HEADER_ROW:
                _require_headers(found, sheet_name, by_column)
            position = wanted.get(number)
            if position is None:
                continue
            if _value(by_column, layout.CODE_COLUMN).value != position.code:
                raise _moved(position)
            rows[position.code] = FilledRow(
                position=position,
                answer=_value(by_column, layout.ANSWER_COLUMN),
                comment=_value(by_column, layout.COMMENT_COLUMN),
            )
    missing = [p for p in found.positions if p.code not in rows]
    if missing:
        raise _moved(missing[0])
    ordered = {p.code: rows[p.code] for p in found.positions}
    return FilledWorkbook(layout=found, rows=ordered)


def _value(cells: dict[int, Any], column: int) -> FilledCell:
    cell = cells.get(column)
    if cell is None:
        return FilledCell(None)
    return FilledCell(cell.value, getattr(cell, "data_type", "n") or "n")


def _require_headers(found: layout.WorkbookLayout, sheet: str, cells: dict[int, Any]) -> None:
    """The header row as signed: otherwise a column was added, removed or moved, and the
    answers are not where they are read."""
    for column, header in enumerate(found.headers, start=1):
        if _value(cells, column).value != header:
            raise WorkbookRefused(
                _(
                    "Columns were moved, added or removed: column %(column)s of sheet %(sheet)s "
                    "should be “%(header)s”. Download a fresh workbook, copy the answers into it "
                    "and upload it."
                )
                % {"column": get_column_letter(column), "sheet": sheet, "header": header}
            )


def _moved(position: layout.QuestionPosition) -> WorkbookRefused:
    return WorkbookRefused(
        _(
            "Rows or sheets were moved, added or removed: row %(row)s of sheet %(sheet)s should "
            "hold question %(code)s. Download a fresh workbook, copy the answers into it and "
            "upload it."
        )
        % {"row": position.row, "sheet": position.sheet, "code": position.code}
    )


# -- a cell as the form would receive it ----------------------------------------------------


class CellProblem(ValueError):
    """A cell that holds no answer at all (a formula, an error value): its message."""


def form_value(question: Question, cell: FilledCell) -> Any:
    """What the answer form would receive from a browser for this cell (a string, or a list of
    option codes for several choices)."""
    if cell.data_type == FORMULA:
        raise CellProblem(
            _("This cell holds a formula; AVIA never calculates formulas. Type the answer itself.")
        )
    if cell.data_type == ERROR:
        raise CellProblem(
            _("This cell shows an error (%(value)s); type the answer itself.")
            % {"value": str(cell.value)[:20]}
        )
    value = cell.value
    if value is None:
        return [] if question.type == "multi_choice" else ""
    if question.type in ("yes_no", "choice"):
        return _option_code(question, cell_text(value))
    if question.type == "multi_choice":
        text = cell_text(value)
        for separator in CHOICE_SEPARATORS[1:]:
            text = text.replace(separator, MULTI_CHOICE_SEPARATOR)
        items = [item.strip() for item in text.split(MULTI_CHOICE_SEPARATOR)]
        return [_option_code(question, item) for item in items if item]
    return cell_text(value)


def comment_value(cell: FilledCell) -> str:
    if cell.data_type == FORMULA:
        raise CellProblem(
            _("This cell holds a formula; AVIA never calculates formulas. Type the comment itself.")
        )
    return "" if cell.value is None else cell_text(cell.value)


def cell_text(value: Any) -> str:
    """A cell's value as the text a person typed: a number typed as a number gives its digits
    (Excel keeps every number as a float: 1048576.0 is 1048576), a date gives YYYY-MM-DD."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        if value.time() == dt.time(0, 0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def _option_code(question: Question, typed: str) -> str:
    """An option's code from its code or its label in either language (case and surrounding
    spaces aside); anything else as typed, for validation to refuse."""
    wanted = typed.strip().casefold()
    for code in question.option_codes:
        if code.casefold() == wanted:
            return code
    for language in LANGUAGES:
        for code, label in option_labels(question, language).items():
            if label.strip().casefold() == wanted:
                return code
    return typed
