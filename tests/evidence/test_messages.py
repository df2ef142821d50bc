"""Parse results keep notes as data; presenters render them in the reader's language."""

import re

import pytest

from scoring.evidence import NOTE_TEMPLATES, describe_parse_result, parse_notes, parse_reason
from scoring.evidence.messages import note

STORED = {
    "kind": "startup_log",
    "parsed": True,
    "engine": "sglang",
    "pool": 681280,
    "context": 1048576,
    "lines": [31],
    "instances": [{"engine": "sglang", "role": "prefill", "context_tokens": 1048576}],
    "notes": [note("rejections_disaggregated", role="prefill", count=2)],
    "reason": None,
}


def test_notes_and_descriptions_render_in_english_with_grouped_numbers():
    assert describe_parse_result(STORED, str) == (
        "SGLang log: pool 681,280 tokens, context 1,048,576 tokens, line 31"
    )
    assert parse_notes(STORED, str) == [
        "Oversized prompts rejected on a prefill instance (disaggregated): 2; check that clients"
        " received errors."
    ]


def test_the_callers_translation_and_number_format_are_used():
    catalogue = {
        "%(engine)s log": "%(engine)s 日誌",
        "pool %(tokens)s tokens": "KV 池 %(tokens)s 個詞元",
        "prefill": "預填充",
        NOTE_TEMPLATES["rejections_disaggregated"]: "%(role)s 實例拒絕了 %(count)s 個超長提示。",
    }

    def translate(text: str) -> str:
        return catalogue.get(text, text)

    def number(value: int | float) -> str:
        return f"<{value}>"

    assert describe_parse_result(STORED, translate, number).startswith(
        "SGLang 日誌: KV 池 <681280> 個詞元"
    )
    assert parse_notes(STORED, translate, number) == ["預填充 實例拒絕了 <2> 個超長提示。"]


def test_results_stored_before_notes_became_data_still_render():
    old = {
        "parsed": False,
        "engine": None,
        "notes": ["An English sentence from an older parser."],
        "reason": "no startup lines of a supported engine were found",
    }

    assert parse_notes(old, str) == ["An English sentence from an older parser."]
    assert parse_reason(old, str) == "no startup lines of a supported engine were found"
    assert describe_parse_result(old, str) == (
        "not parsed: no startup lines of a supported engine were found"
    )


def test_a_translation_that_lost_a_placeholder_falls_back_to_english():
    broken = {NOTE_TEMPLATES["rejections_single_node"]: "%(missing)s"}

    text = parse_notes(
        {"notes": [note("rejections_single_node", count=3)]}, lambda t: broken.get(t, t)
    )

    assert text == [NOTE_TEMPLATES["rejections_single_node"] % {"count": "3"}]


def test_an_unknown_note_id_cannot_be_written():
    with pytest.raises(KeyError):
        note("no_such_note")


@pytest.mark.parametrize("note_id", sorted(NOTE_TEMPLATES))
def test_every_template_renders_with_its_own_placeholders(note_id):
    names = re.findall(r"%\((\w+)\)s", NOTE_TEMPLATES[note_id])
    params = {name: ("prefill" if name.endswith("role") else 7) for name in names}

    [text] = parse_notes({"notes": [note(note_id, **params)]}, str)

    assert "%(" not in text


def test_django_gettext_renders_the_catalogue_in_traditional_chinese():
    from django.utils import translation

    with translation.override("zh-hant"):
        described = describe_parse_result(STORED, translation.gettext)
        notes = parse_notes(STORED, translation.gettext)

    assert (
        described == "SGLang 日誌：KV 快取池 681,280 個詞元，上下文長度 1,048,576 個詞元，第 31 行"
    )
    assert notes == [
        "在 prefill 實例（拆分推理）上被拒絕的超長提示：2 個；請核實用戶端確實收到錯誤。"
    ]
