"""Values as spreadsheet cells, safe to open: a text never becomes a formula.

A spreadsheet program runs a cell that starts with `=`, `+`, `-` or `@` (and, after a tab or a
carriage return, what follows) as a formula: a vendor named `=HYPERLINK("http://x","y")` would
become a link in the buyer's Excel (CSV injection). Every text AVIA writes into a CSV file or a
workbook goes through here: in CSV such a text gets a leading `'`, which spreadsheet programs
read as "this is text"; in a workbook it is stored as a text cell (never a formula), marked
`quotePrefix` so that Excel keeps it text when someone edits it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE, Cell

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def starts_like_formula(text: str) -> bool:
    return text.startswith(FORMULA_TRIGGERS)


def csv_value(value: Any) -> Any:
    """A value for `csv.writer`: text that a spreadsheet would run gets a leading `'`."""
    if isinstance(value, str) and starts_like_formula(value):
        return "'" + value
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def set_cell(cell: Cell, value: Any) -> Cell:
    """Put `value` into a workbook cell: numbers, dates and booleans as themselves, every text
    as text (never a formula or an error code such as `#N/A`). Control characters, which the
    file format cannot hold, are left out."""
    if isinstance(value, str):
        value = ILLEGAL_CHARACTERS_RE.sub("", value)
    cell.value = value
    if isinstance(value, str):
        cell.data_type = "s"
        if starts_like_formula(value):
            cell.quotePrefix = True
    return cell


def write_only_cell(sheet: Any, value: Any, *, number_format: str | None = None) -> Cell:
    """A cell for a write-only (streamed) sheet, as `set_cell` fills it."""
    cell = set_cell(Cell(sheet, row=1, column=1), value)  # as openpyxl.cell.WriteOnlyCell
    if number_format:
        cell.number_format = number_format
    return cell
