"""What reading an uploaded catalogue gives: its data and where each entry is.

Its own module because two readers make it (the YAML file in `reading`, a spreadsheet in
`spreadsheets.catalogue_import.document`) and the checks use it to name the line or cell of a problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Path = tuple[str | int, ...]


@dataclass
class LineMap:
    """Where each entry of an uploaded file is: by path into the document (`("ruleset",
    "rules", 3)`), and by what it is and its code (`("rule", "R-1")`). A YAML file gives lines;
    a spreadsheet gives cells ("B7")."""

    by_path: dict[Path, int | str] = field(default_factory=dict)
    by_code: dict[tuple[str, str], list[int | str]] = field(default_factory=dict)

    def find(self, path: Path = (), code: tuple[str, str] | None = None) -> int | str | None:
        if code is not None and code in self.by_code:
            return self.by_code[code][0]
        while path:
            if path in self.by_path:
                return self.by_path[path]
            path = path[:-1]
        return None


@dataclass(frozen=True)
class CatalogueDocument:
    """A catalogue file read: its data and where each entry is."""

    data: Any
    source_name: str
    lines: LineMap = field(default_factory=LineMap)
