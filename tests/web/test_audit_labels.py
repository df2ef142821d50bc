"""Every action the code records reads as a sentence in the audit trail, in both languages.

An action without a label showed its code ("probe.finished") in the trail of the assessment
page and the report, in the middle of translated sentences. The codes are found where they are
written: each `audit_record(action="…")` / `audit_event(action="…")` call of the project."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from assessments.presenters.audit import audit_action_label

ROOT = Path(__file__).resolve().parents[2]
WRITERS = {"audit_record", "audit_event"}


def recorded_actions() -> set[str]:
    actions = set()
    for path in ROOT.glob("*/**/*.py"):
        if path.parts[len(ROOT.parts)] in {".venv", "tests"} or "migrations" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name not in WRITERS:
                continue
            for keyword in node.keywords:
                if keyword.arg == "action" and isinstance(keyword.value, ast.Constant):
                    actions.add(keyword.value.value)
    return actions


def test_the_scan_finds_the_actions_it_should() -> None:
    found = recorded_actions()
    # A scan that found nothing would pass the test below vacuously.
    assert {"answers.saved", "scoring.succeeded", "probe.finished"} <= found


@pytest.mark.parametrize("action", sorted(recorded_actions()))
def test_every_recorded_action_has_a_label_in_both_languages(action: str) -> None:
    english = audit_action_label(action, "en")
    chinese = audit_action_label(action, "zh-hant")
    assert english != action, f"{action} has no label"
    assert chinese != english, f"{action} has no Traditional Chinese label"
