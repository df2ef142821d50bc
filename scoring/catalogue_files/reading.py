"""Reading an uploaded catalogue file: YAML turned into a document, bounded, with line marks.

Before anything is checked the text is held to the sizes in `questionnaires.bounds` (bytes,
YAML events), must be UTF-8, and is read with YAML's safe loader; anchors and aliases are
refused, since a few aliases of aliases expand a small file into billions of entries. Each
entry's line is kept (`LineMap`) so that every later problem names it.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from django.utils.translation import gettext_noop

from core.text import shown_safely
from questionnaires import bounds

from .document import CatalogueDocument, LineMap, Path
from .problems import CatalogueInvalid, CatalogueProblem


def read_catalogue_file(data: bytes, *, source_name: str) -> CatalogueDocument:
    """Read an uploaded YAML file (bounded, safe loader, no aliases), keeping each entry's
    line. Raises `CatalogueInvalid`."""
    if len(data) > bounds.CATALOGUE_FILE_BYTES_MAX:
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop("The file is %(size)s bytes; the limit is %(limit)s bytes."),
                    {"size": len(data), "limit": bounds.CATALOGUE_FILE_BYTES_MAX},
                )
            ]
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop("The file is not UTF-8 text (byte %(position)s)."),
                    {"position": exc.start},
                )
            ]
        ) from exc
    try:
        # libyaml's safe loader when the system has it (ten times faster), keeping line marks.
        safe_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        for count, event in enumerate(yaml.parse(text, Loader=safe_loader)):
            if count >= bounds.CATALOGUE_YAML_EVENTS_MAX:
                mark: Any = event.start_mark
                raise _TooManyEntries(mark.line + 1)
        loader = safe_loader(text)
        try:
            node = loader.get_single_node()
            lines = LineMap()
            if node is not None:
                _record_lines(node, (), lines, set())
            loaded = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except _TooManyEntries as too_many:
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop(
                        "The file has more than %(limit)s entries (reached at this line): far"
                        " more than a questionnaire needs. Split it, or remove what is repeated."
                    ),
                    {"limit": bounds.CATALOGUE_YAML_EVENTS_MAX},
                    line=too_many.line,
                )
            ]
        ) from None
    except _AliasFound as alias:
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop("Anchors and aliases (& and *) are not accepted in an upload."),
                    line=alias.line,
                )
            ]
        ) from None
    except RecursionError:
        raise CatalogueInvalid(
            [CatalogueProblem(source_name, gettext_noop("The file nests entries too deeply."))]
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop("The file is not valid YAML: %(detail)s."),
                    {"detail": shown_safely(exc.problem or exc.context or "", 200)},
                    line=mark.line + 1 if mark else None,
                )
            ]
        ) from exc
    except yaml.YAMLError as exc:
        raise CatalogueInvalid(
            [
                CatalogueProblem(
                    source_name,
                    gettext_noop("The file is not valid YAML: %(detail)s."),
                    {"detail": shown_safely(exc, 200)},
                )
            ]
        ) from exc
    # Through JSON and back, as the shipped catalogue is read: what is stored is what is hashed
    # (YAML dates become ISO strings).
    plain = json.loads(json.dumps(loaded, default=str, ensure_ascii=False))
    return CatalogueDocument(data=plain, source_name=source_name, lines=lines)


class _AliasFound(Exception):
    def __init__(self, line: int) -> None:
        self.line = line


class _TooManyEntries(_AliasFound):
    pass


def _record_lines(node: yaml.Node, path: Path, lines: LineMap, seen: set[int]) -> None:
    """Record where each entry is; a node met twice is an alias (`*name`), refused: a few
    aliases of aliases expand a small file into billions of entries ("billion laughs")."""
    if id(node) in seen:
        raise _AliasFound(node.start_mark.line + 1)
    seen.add(id(node))
    lines.by_path[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        keys = [k.value if isinstance(k, yaml.ScalarNode) else "?" for k, _v in node.value]
        named = "code" in keys or "id" in keys
        for key, (_key_node, value_node) in zip(keys, node.value, strict=True):
            if named and key in ("code", "id") and isinstance(value_node, yaml.ScalarNode):
                kind = _kind_of(path)
                code = value_node.value
                lines.by_code.setdefault((kind, code), []).append(node.start_mark.line + 1)
                # Each entry's fields too (`("rule", "R-1.when")`): the line of a condition.
                for other, (_k, other_node) in zip(keys, node.value, strict=True):
                    lines.by_code.setdefault((kind, f"{code}.{other}"), []).append(
                        other_node.start_mark.line + 1
                    )
            _record_lines(value_node, (*path, key), lines, seen)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(item, (*path, index), lines, seen)


def _kind_of(path: Path) -> str:
    """What an entry with a `code` or `id` is, from where it sits."""
    named = [part for part in path if isinstance(part, str)]
    last = named[-1] if named else ""
    return {
        "sections": "section",
        "add_sections": "section",
        "questions": "question",
        "options": "option",
        "rules": "rule",
        "frameworks": "framework",
    }.get(last, "question" if last in ("add_questions",) or len(named) >= 2 else last)
