"""The upload read as tables: every visible sheet's cells, with their row numbers, bounded.

`read_tables` opens the upload the one way AVIA opens a workbook it did not write
(`spreadsheets.reading.opened_workbook`: size, zip-bomb and XML-entity defences, formulas never
evaluated) and keeps each visible sheet's cells, refusing a sheet of more than `MAX_SHEET_ROWS`
rows or a workbook of more than `MAX_QUESTIONS` question rows. What is kept is plain values
(`Cell`: the value and openpyxl's data type), so the mapping screen and the import read the same
cells without opening the file again. Headers are compared here too (`header_key`), case and
punctuation aside, for the presets and the mapping to find their columns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, Any

from django.utils.translation import gettext as _

from questionnaires import bounds

from .. import layout
from ..reading import WorkbookRefused, cell_text, opened_workbook

# Bounds of an import (issue 24, "Safety"): those of every uploaded catalogue
# (questionnaires.bounds: questions, options, codes, texts), and the spreadsheet's own, far
# above any real questionnaire (CAIQ v4 has 261 questions, AI-CAIQ about 320) and low enough
# that a hostile file costs little to refuse.
MAX_QUESTIONS = bounds.CATALOGUE_QUESTIONS_MAX
MAX_OPTIONS = bounds.CATALOGUE_OPTIONS_MAX
MAX_SHEETS = bounds.CATALOGUE_SECTIONS_MAX
MAX_SHEET_ROWS = 5000  # rows read per sheet, blank ones included
MAX_COLUMNS = 40
HEADER_SEARCH_ROWS = 10  # the header row is one of the first rows


@dataclass(frozen=True)
class Cell:
    value: Any
    data_type: str = "n"  # openpyxl's: n, s, d, b, f(ormula), e(rror)

    @property
    def blank(self) -> bool:
        return self.value is None or (isinstance(self.value, str) and not self.value.strip())

    @property
    def shown(self) -> str:
        """The cell as the mapping screen shows it (a formula as its text, never calculated)."""
        return "" if self.value is None else cell_text(self.value)


@dataclass(frozen=True)
class SheetTable:
    """A visible sheet's rows as read (1-based row numbers), at most `MAX_COLUMNS` wide."""

    name: str
    rows: tuple[tuple[int, tuple[Cell, ...]], ...]

    def row(self, number: int) -> tuple[Cell, ...]:
        for found, cells in self.rows:
            if found == number:
                return cells
        return ()

    def headers(self, header_row: int) -> tuple[str, ...]:
        return tuple(cell.shown.strip() for cell in self.row(header_row))

    def data_rows(self, header_row: int) -> list[tuple[int, tuple[Cell, ...]]]:
        return [
            (number, cells)
            for number, cells in self.rows
            if number > header_row and any(not cell.blank for cell in cells)
        ]

    def width(self, rows: int = 50) -> int:
        """The last column holding anything in the first rows (a sheet's rows are read padded
        to `MAX_COLUMNS`)."""
        return max(
            (
                index
                for _number, cells in self.rows[:rows]
                for index, cell in enumerate(cells, start=1)
                if not cell.blank
            ),
            default=0,
        )

    @property
    def title(self) -> str:
        """The first text of the sheet's first row (AVIA's workbook: "PRF — Profile")."""
        return next((c.shown.strip() for c in self.row(1) if not c.blank), "")


@dataclass(frozen=True)
class WorkbookTables:
    sheets: tuple[SheetTable, ...]
    # AVIA's workbook keeps each drop-down's labels in a hidden sheet, a column each: they tell
    # where one label ends in "Choose one from the list: a, b, c" when a label holds a comma.
    option_lists: tuple[tuple[str, ...], ...] = ()

    @property
    def names(self) -> list[str]:
        return [sheet.name for sheet in self.sheets]

    def sheet(self, name: str) -> SheetTable:
        for sheet in self.sheets:
            if sheet.name == name:
                return sheet
        raise KeyError(name)


def read_tables(upload: IO[bytes], *, size: int) -> WorkbookTables:
    """Every visible sheet's cells; `WorkbookRefused` for a file that cannot be trusted or is
    too large (nothing is kept)."""
    with opened_workbook(
        upload,
        size=size,
        not_a_workbook=_(
            "This file is not an Excel workbook (.xlsx). Save it as one and upload it again."
        ),
    ) as book:
        sheets = []
        visible = [s for s in book.worksheets if getattr(s, "sheet_state", "visible") == "visible"]
        if len(visible) > MAX_SHEETS:
            raise WorkbookRefused(
                _("The workbook has %(count)s sheets; at most %(limit)s are read.")
                % {"count": len(visible), "limit": MAX_SHEETS}
            )
        kept = 0  # rows with something in them, in every sheet
        lists = next(
            (s for s in book.worksheets if s.title == layout.LISTS_SHEET and s not in visible),
            None,
        )
        option_lists = _columns(lists) if lists is not None else ()
        for sheet in visible:
            rows = []
            for number, cells in enumerate(sheet.iter_rows(max_col=MAX_COLUMNS), start=1):
                if number > MAX_SHEET_ROWS:
                    raise WorkbookRefused(
                        _(
                            "Sheet %(sheet)s has more than %(limit)s rows: it is not a questionnaire."
                        )
                        % {"sheet": sheet.title, "limit": f"{MAX_SHEET_ROWS:,}"}
                    )
                row = tuple(
                    Cell(getattr(c, "value", None), getattr(c, "data_type", "n") or "n")
                    for c in cells
                )
                if any(not cell.blank for cell in row):
                    rows.append((number, row))
                    kept += 1
                    # Each sheet may have a few title and header rows above its questions.
                    if kept > MAX_QUESTIONS + HEADER_SEARCH_ROWS * len(visible):
                        raise WorkbookRefused(too_many_questions(kept))
            sheets.append(SheetTable(name=sheet.title, rows=tuple(rows)))
    if not any(sheet.rows for sheet in sheets):
        raise WorkbookRefused(_("The workbook is empty."))
    return WorkbookTables(sheets=tuple(sheets), option_lists=option_lists)


def _columns(sheet: Any) -> tuple[tuple[str, ...], ...]:
    """A sheet's text read column by column (AVIA's hidden lists of options)."""
    columns: dict[int, list[str]] = {}
    for number, cells in enumerate(sheet.iter_rows(max_col=MAX_COLUMNS), start=1):
        if number > MAX_OPTIONS:
            break
        for index, cell in enumerate(cells):
            value = getattr(cell, "value", None)
            if isinstance(value, str) and value.strip():
                columns.setdefault(index, []).append(value.strip())
    return tuple(tuple(labels) for labels in columns.values())


def too_many_questions(count: int) -> str:
    return _("The workbook has %(count)s question rows; at most %(limit)s are accepted.") % {
        "count": f"{count:,}",
        "limit": f"{MAX_QUESTIONS:,}",
    }


def header_key(header: str) -> str:
    """A header as compared: case, punctuation and spacing aside ("Question ID:" = "question id")."""
    return " ".join(re.sub(r"[^\w]+", " ", header.casefold()).split())


def find_header_row(sheet: SheetTable, wanted: Iterable[str]) -> int | None:
    """The first of the sheet's first rows holding any of the `wanted` headers (None: none)."""
    wanted_keys = {header_key(name) for name in wanted}
    for number, cells in sheet.rows:
        if number > HEADER_SEARCH_ROWS:
            break
        if wanted_keys & {header_key(cell.shown) for cell in cells if not cell.blank}:
            return number
    return None
