"""A question's answer type, options and "required", from its row.

From AVIA's own "How to answer" cell when the workbook is AVIA's (read with the workbook's own
phrases, in either language: `spreadsheets.workbook.HOW_TO_ANSWER`), else from the type,
options and required columns (words in English or Chinese), else the preset's defaults (CSA's
Yes / No / NA). Each problem is recorded on the row with its column.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from assessments.presenters.answers import yes_no_labels
from core.text import text_errors
from questionnaires import bounds
from questionnaires.spec import ANSWER_TYPES, LANGUAGES

from ..reading import CHOICE_SEPARATORS
from ..workbook import HOW_TO_ANSWER, OPTIONAL_LINE, REQUIRED_LINE
from .rows import LABEL_MAX_LENGTH, QuestionRow, bilingual_texts
from .tables import MAX_OPTIONS

TYPE_WORDS = {
    "yes_no": ("yes_no", "yesno", "boolean", "bool", "是否", "是_否"),
    "choice": ("choice", "single_choice", "select", "dropdown", "list", "單選", "選擇"),
    "multi_choice": ("multi_choice", "multiple_choice", "multi_select", "checkboxes", "多選"),
    "integer": ("integer", "int", "number", "whole_number", "整數", "數字"),
    "date": ("date", "日期"),
    "version": ("version", "版本"),
    "text": ("text", "free_text", "string", "文字"),
    "file": ("file", "upload", "evidence", "檔案", "文件"),
}
TRUE_WORDS = ("yes", "y", "true", "1", "required", "mandatory", "x", "是", "必答", "必填")
FALSE_WORDS = ("no", "n", "false", "0", "optional", "否", "選答", "選填")


@dataclass(frozen=True)
class HowToAnswer:
    """What AVIA's own "How to answer" cell says (spreadsheets.workbook)."""

    required: bool
    type: str
    options: tuple[str, ...] = ()


def how_to_answer(row: QuestionRow) -> HowToAnswer | None:
    """A cell written by AVIA's workbook ("Required.\nChoose one from the list: …"), in
    either language, read with the workbook's own phrases (spreadsheets.workbook.HOW_TO_ANSWER);
    None for any other cell. A line saying when the question is asked is not read: conditions
    are not imported."""
    for field_name in ("type", "required", "options"):
        cell = row.cell(field_name)
        if cell is None or cell.blank or not isinstance(cell.value, str):
            continue
        lines = [line.strip() for line in cell.value.splitlines() if line.strip()]
        for language in LANGUAGES:
            with translation.override(language):
                first = {str(REQUIRED_LINE): True, str(OPTIONAL_LINE): False}
                if lines[0] not in first:
                    continue
                answer_type = "text"
                options: tuple[str, ...] = ()
                for line in lines[1:]:
                    found = _phrase(line, row.option_lists)
                    if found is not None:
                        answer_type, options = found
                        break
                if answer_type == "choice" and set(options) == set(
                    yes_no_labels(language).values()
                ):
                    answer_type, options = "yes_no", ()
                return HowToAnswer(required=first[lines[0]], type=answer_type, options=options)
    return None


def _phrase(
    line: str, option_lists: Iterable[tuple[str, ...]] = ()
) -> tuple[str, tuple[str, ...]] | None:
    """The answer type (and options) a line of "How to answer" names, in the active language."""
    for answer_type, phrase in HOW_TO_ANSWER:
        text = _(str(phrase))
        parts = re.split(r"%\(\w+\)s", text, maxsplit=1)
        if len(parts) == 1:
            if line == text:
                return answer_type, ()
            continue
        before, after = parts
        if len(line) < len(before) + len(after):
            continue
        if not (line.startswith(before) and line.endswith(after)):
            continue
        if "%(options)s" not in text:
            return answer_type, ()
        held = line[len(before) : len(line) - len(after)]
        separator = pgettext("list separator", ", ") if answer_type == "choice" else ";"
        for labels in option_lists:
            if separator.join(labels) == held:
                return answer_type, labels
        return answer_type, tuple(item.strip() for item in held.split(separator) if item.strip())
    return None


def type_and_options(
    row: QuestionRow, bilingual: bool, how: HowToAnswer | None
) -> tuple[str, list[dict[str, Any]]]:
    typed: list[tuple[str | None, str, str]]
    # The preset's own options (CSA's Yes / No / NA): AVIA's text, not the sheet's, unchecked.
    preset_options: list[tuple[str | None, str, str]] = list(row.mapping.default_options)
    if how is not None:
        answer_type: str | None = how.type
        typed = [(None, label, "") for label in how.options]
    else:
        typed = _typed_options(row)
        answer_type = _answer_type(row)
        if answer_type == "":  # no type given
            if typed:
                answer_type = "choice"
            else:
                answer_type = row.mapping.default_type
                typed = preset_options
    if answer_type is None:
        return "text", []
    if answer_type not in ("choice", "multi_choice"):
        if typed and answer_type != "yes_no" and how is None:
            row.error(
                _("A question of type %(type)s has no options; leave the options cell empty.")
                % {"type": answer_type},
                "options",
            )
        return answer_type, []
    if not typed:
        row.error(_("A %(type)s question needs options.") % {"type": answer_type}, "options")
        return answer_type, []
    if len(typed) > MAX_OPTIONS:
        row.error(
            _("The question has %(count)s options; at most %(limit)s are accepted.")
            % {"count": len(typed), "limit": MAX_OPTIONS},
            "options",
        )
        return answer_type, []
    options = []
    for index, (code, english, chinese) in enumerate(typed, start=1):
        if bilingual and not chinese:
            row.error(
                _("Option “%(option)s” has no Traditional Chinese label (write “English | 中文”).")
                % {"option": english[:LABEL_MAX_LENGTH]},
                "options",
            )
        for label in () if typed is preset_options else (english, chinese):
            for problem in text_errors(label, max_length=LABEL_MAX_LENGTH) if label else ():
                row.error(problem, "options")
        option_code = code or _option_code(english) or f"option_{index}"
        options.append({"code": option_code, "label": bilingual_texts(english, chinese, bilingual)})
    codes = [option["code"] for option in options]
    if len(set(codes)) != len(codes):
        row.error(
            _("Two options have the same code; give each option its own label or code."),
            "options",
        )
    return answer_type, options


def _answer_type(row: QuestionRow) -> str | None:
    """The type the row's type cell names; "" when it names none, None when it is unknown."""
    text = row.text("type", 40)
    if not text:
        return ""
    key = re.sub(r"[\s/\-]+", "_", text.casefold()).strip("_")
    for answer_type, words in TYPE_WORDS.items():
        if key in words:
            return answer_type
    row.error(
        _("Unknown answer type “%(type)s”: use one of %(types)s.")
        % {"type": text, "types": ", ".join(ANSWER_TYPES)},
        "type",
    )
    return None


def _typed_options(row: QuestionRow) -> list[tuple[str | None, str, str]]:
    """The options cell: one option a line (or separated by ";"), each "Label", "Label |
    中文標籤" or "code = Label | 中文標籤"."""
    text = row.text("options", MAX_OPTIONS * (LABEL_MAX_LENGTH + 10))
    for separator in CHOICE_SEPARATORS:
        text = text.replace(separator, "\n")
    options: list[tuple[str | None, str, str]] = []
    for item in (line.strip() for line in text.splitlines()):
        if not item:
            continue
        code = None
        explicit = re.match(r"^([a-z][a-z0-9_]{0,39})\s*=\s*(.+)$", item)
        if explicit:
            code, item = explicit.group(1), explicit.group(2)
        english, _bar, chinese = item.partition("|")
        options.append((code, english.strip(), chinese.strip()))
    return options


def _option_code(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.casefold()).strip("_")[: bounds.CATALOGUE_ID_CHARS_MAX]


def required_of(row: QuestionRow) -> bool:
    """The required column's yes or no (the preset's default when blank)."""
    text = row.text("required", 40)
    if not text:
        return row.mapping.default_required
    word = text.casefold().rstrip(".。")
    if word in TRUE_WORDS:
        return True
    if word not in FALSE_WORDS:
        row.error(
            _("“%(value)s” is not yes or no: write yes (required) or no (optional).")
            % {"value": text},
            "required",
        )
    return False
