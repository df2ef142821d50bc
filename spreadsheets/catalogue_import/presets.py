"""The layouts AVIA knows: CSA's CAIQ v4 and AI-CAIQ, AVIA's own questionnaire workbook.

A preset says which header names which field (`Preset.headers`) and what a question is when the
sheet does not say (CSA's answer column is Yes / No / NA: a required choice of three). Presets
match headers by name, so a moved column or another header row is still found, and the columns
that tell one layout from another (`PRESET_MARKERS`) pick the preset of an upload
(`detect_preset`). Standard questionnaires are licensed: AVIA knows their column headers only,
never their questions. A workbook of no known layout is read by the usual names of its headers
(`HEADER_NAMES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils import translation
from django.utils.translation import gettext_lazy

from questionnaires.spec import LANGUAGES

from .. import layout
from ..workbook import column_headers
from .tables import WorkbookTables, find_header_row

# Where a question's section comes from when no column holds it.
SECTION_FROM_SHEET, SECTION_FROM_CODE = "sheet", "code"


@dataclass(frozen=True)
class Preset:
    key: str
    label: Any
    headers: Mapping[str, tuple[str, ...]]  # field → the header texts that name it
    section_from: str
    default_type: str = "text"
    default_required: bool = False
    default_options: tuple[tuple[str, str, str], ...] = ()


# CSA's answer column is Yes / No / NA: a choice of three (AVIA's yes_no has "unknown", which
# is not "not applicable").
YES_NO_NA = (("yes", "Yes", "是"), ("no", "No", "否"), ("na", "Not applicable", "不適用"))


def _avia_headers() -> dict[str, tuple[str, ...]]:
    """AVIA's questionnaire workbook (spreadsheets.workbook): its header row in each language.
    The "How to answer" cell says whether a question is required, its type and its options."""
    by_language = {}
    for language in LANGUAGES:
        with translation.override(language):
            by_language[language] = {k: str(v) for k, v in column_headers().items()}
    english, chinese = by_language["en"], by_language["zh-hant"]
    how = (english[layout.HOW_COLUMN], chinese[layout.HOW_COLUMN])
    return {
        "code": (english[layout.CODE_COLUMN], chinese[layout.CODE_COLUMN]),
        "text_en": (english[layout.QUESTION_COLUMN],),
        "text_zh": (chinese[layout.QUESTION_COLUMN],),
        "help_en": (english[layout.HELP_COLUMN],),
        "help_zh": (chinese[layout.HELP_COLUMN],),
        "type": how,
        "options": how,
        "required": how,
    }


def _csa_preset(key: str, label: Any, *, help_headers: tuple[str, ...]) -> Preset:
    """A CSA layout: a question per row under "Question ID" and "Question", each a required
    Yes / No / NA, in a domain named by its code's prefix; only the help column's name differs."""
    return Preset(
        key=key,
        label=label,
        headers={"code": ("Question ID",), "text_en": ("Question",), "help_en": help_headers},
        section_from=SECTION_FROM_CODE,
        default_type="choice",
        default_required=True,
        default_options=YES_NO_NA,
    )


def presets() -> dict[str, Preset]:
    """The known layouts. CSA's column headers are as summarised from published copies of
    CAIQ v4.0.x and AI-CAIQ v1.x (header row 2, questions below); the presets match headers by
    name, so a moved column or another header row is still found."""
    return {
        "caiq-v4": _csa_preset(
            "caiq-v4",
            gettext_lazy("CSA CAIQ v4 (Question ID, Question, CSP CAIQ Answer)"),
            help_headers=("CCM Control Specification",),
        ),
        "ai-caiq": _csa_preset(
            "ai-caiq",
            gettext_lazy("CSA AI-CAIQ (Question ID, Question, Service Provider AI-CAIQ Answer)"),
            help_headers=("AICM Control Specification", "Control Specification"),
        ),
        "avia": Preset(
            key="avia",
            label=gettext_lazy("AVIA questionnaire workbook (one sheet per section)"),
            headers=_avia_headers(),
            section_from=SECTION_FROM_SHEET,
        ),
    }


# CSA's answer columns: what tells CAIQ v4 from AI-CAIQ (their other headers are alike).
PRESET_MARKERS = {
    "caiq-v4": ("CSP CAIQ Answer",),
    "ai-caiq": ("Service Provider AI-CAIQ Answer", "CSP AI-CAIQ Answer"),
}

# Header names of a workbook without a preset, matched case and punctuation aside.
HEADER_NAMES = {
    "code": ("code", "id", "question id", "question code", "ref", "ref id", "no", "代碼", "編號"),
    "section": ("section", "domain", "category", "section code", "部分", "類別", "範疇"),
    "text_en": ("question", "question en", "question english", "question text", "text"),
    "text_zh": ("question zh", "question zh hant", "question chinese", "問題", "題目"),
    "help_en": ("help", "help en", "help english", "guidance", "description", "notes"),
    "help_zh": ("help zh", "help zh hant", "help chinese", "說明"),
    "type": ("type", "answer type", "question type", "答案類型", "類型"),
    "options": ("options", "choices", "answer options", "allowed answers", "選項"),
    "required": ("required", "mandatory", "必答", "必填"),
}


def detect_preset(tables: WorkbookTables) -> str:
    """The preset whose layout the workbook has ("" if none)."""
    for key, markers in PRESET_MARKERS.items():
        if any(find_header_row(sheet, markers) for sheet in tables.sheets):
            return key
    avia = presets()["avia"]
    if any(
        find_header_row(sheet, avia.headers["required"]) is not None
        and find_header_row(sheet, avia.headers["code"]) is not None
        for sheet in tables.sheets
    ):
        return "avia"
    return ""
