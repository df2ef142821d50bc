"""What is wrong with an uploaded catalogue: each problem with its file, line (or cell), code.

One place for the problem (`CatalogueProblem`), the refusal that carries the problems
(`CatalogueInvalid`), and the list the checks add to (`ProblemList`), which finds the line of
an entry from the document's `LineMap`. A problem keeps an English msgid and its parameters, so
it reads in the language of whoever reads it, wherever it is shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext, gettext_noop

from core.errors import ServiceError

from .document import CatalogueDocument, Path

# Problems shown at most (a hostile file could have a million).
PROBLEMS_SHOWN = 50


@dataclass(frozen=True)
class CatalogueProblem:
    """One thing wrong with an uploaded catalogue. `message` is an English msgid, translated
    with `params` when read, so the problem reads in the reader's language wherever it is
    shown; `detail` is what the CEL engine or the YAML reader said, quoted as is."""

    file: str
    message: str
    params: Mapping[str, Any] = field(default_factory=dict)
    code: str = ""  # the question, option, section or rule code, or the key
    line: int | None = None
    cell: str | None = None  # for spreadsheets: "B7"

    def text(self) -> str:
        return gettext(self.message) % dict(self.params) if self.params else gettext(self.message)

    def where(self) -> str:
        parts = [self.file]
        if self.line is not None:
            parts.append(gettext("line %(line)s") % {"line": self.line})
        if self.cell:
            parts.append(gettext("cell %(cell)s") % {"cell": self.cell})
        if self.code:
            parts.append(self.code)
        return ", ".join(parts)

    def __str__(self) -> str:
        return f"{self.where()}: {self.text()}"

    def as_dict(self) -> dict[str, Any]:
        """For the API and for tests: plain values in the active language."""
        return {
            "file": self.file,
            "line": self.line,
            "cell": self.cell,
            "code": self.code,
            "message": self.text(),
        }


class CatalogueInvalid(ServiceError):
    """An uploaded catalogue was refused; nothing was saved. `problems` says where and why."""

    def __init__(self, problems: Sequence[CatalogueProblem]) -> None:
        self.problems = list(problems[:PROBLEMS_SHOWN])
        if len(problems) > PROBLEMS_SHOWN:
            self.problems.append(
                CatalogueProblem(
                    problems[0].file,
                    gettext_noop("%(count)s more problems are not shown; fix these first."),
                    {"count": len(problems) - PROBLEMS_SHOWN},
                )
            )
        super().__init__({"document": self.problems})


class ProblemList:
    """The problems found so far in one document; `add` finds where the entry is."""

    def __init__(self, document: CatalogueDocument) -> None:
        self.document = document
        self.found: list[CatalogueProblem] = []

    def add(
        self,
        message: str,
        params: Mapping[str, Any] | None = None,
        *,
        path: Path = (),
        code: str = "",
        kind: str = "",
        field: str = "",
    ) -> None:
        lines = self.document.lines
        found = None
        if kind and code and field:
            found = lines.find((), (kind, f"{code}.{field}"))
        if found is None:
            found = lines.find(path, (kind, code) if kind and code else None)
        self.found.append(
            CatalogueProblem(
                self.document.source_name,
                message,
                params or {},
                code,
                line=found if isinstance(found, int) else None,
                cell=found if isinstance(found, str) else None,
            )
        )

    def raise_if_any(self) -> None:
        if self.found:
            raise CatalogueInvalid(self.found)
