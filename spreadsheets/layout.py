"""Where things are in a questionnaire workbook, and the signature that ties a workbook to its
assessment — shared by the writer (`workbook`) and the reader (`reading`).

Each section is a sheet named by its code; each question a row (code, question, help, how to
answer, answer, comment). A hidden sheet holds the layout signed with HMAC (Django's signing,
keyed by SECRET_KEY): the assessment, the questionnaire version, the language, and the sheet
and row of every code. An upload is read only at the signed positions, and only once the
signature holds: a workbook of another assessment or version, an edited signature, a moved
row or column is refused before any answer is looked at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core import signing

CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
SIGNATURE_SHEET = "avia"
LISTS_SHEET = "lists"  # hidden: the options of each drop-down
SIGNATURE_CELL = "A1"
_SALT = "avia.spreadsheets.questionnaire-workbook"
_FORMAT = 1

HEADER_ROW = 3
FIRST_QUESTION_ROW = 4
CODE_COLUMN = 1
QUESTION_COLUMN = 2
HELP_COLUMN = 3
HOW_COLUMN = 4
ANSWER_COLUMN = 5
COMMENT_COLUMN = 6
COLUMN_WIDTHS = {CODE_COLUMN: 10, QUESTION_COLUMN: 48, HELP_COLUMN: 60, HOW_COLUMN: 36}
ANSWER_WIDTH = 36
COMMENT_WIDTH = 36


@dataclass(frozen=True)
class QuestionPosition:
    sheet: str
    row: int
    code: str


@dataclass(frozen=True)
class WorkbookLayout:
    """What the signature vouches for."""

    assessment_id: int
    questionnaire: str  # slug@version
    language: str
    positions: tuple[QuestionPosition, ...]
    # The header row of every section sheet, column by column: a column added, removed or
    # moved shows there. Empty in a workbook signed before it was recorded.
    headers: tuple[str, ...] = ()

    def signed(self) -> str:
        return signing.dumps(
            {
                "format": _FORMAT,
                "assessment": self.assessment_id,
                "questionnaire": self.questionnaire,
                "language": self.language,
                "rows": [[p.sheet, p.row, p.code] for p in self.positions],
                "headers": list(self.headers),
            },
            salt=_SALT,
            compress=True,
        )

    @classmethod
    def from_signed(cls, text: str) -> WorkbookLayout:
        """The layout a signature vouches for; `signing.BadSignature` if it was changed."""
        payload: Any = signing.loads(text, salt=_SALT)
        try:
            return cls(
                assessment_id=int(payload["assessment"]),
                questionnaire=str(payload["questionnaire"]),
                language=str(payload["language"]),
                positions=tuple(
                    QuestionPosition(sheet=str(sheet), row=int(row), code=str(code))
                    for sheet, row, code in payload["rows"]
                ),
                headers=tuple(str(header) for header in payload.get("headers", ())),
            )
        except (KeyError, TypeError, ValueError):
            # Signed by this key but not in this format: as good as not signed.
            raise signing.BadSignature("unexpected layout") from None

    def sheets(self) -> Sequence[str]:
        return list(dict.fromkeys(p.sheet for p in self.positions))
