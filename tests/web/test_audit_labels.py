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
    """Every action code passed to a writer: a string, or a module's string constant. Any other
    argument fails the scan (an f-string's codes are the review's and risk decision's, which
    `audit_action_label` words from their decision), so that no code escapes it."""
    actions = set()
    for path in ROOT.glob("*/**/*.py"):
        if path.parts[len(ROOT.parts)] in {".venv", "tests"} or "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(), str(path))
        constants = {
            target.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name not in WRITERS:
                continue
            for keyword in node.keywords:
                if keyword.arg != "action":
                    continue
                value = keyword.value
                if isinstance(value, ast.Constant):
                    actions.add(value.value)
                elif isinstance(value, ast.Name) and value.id in constants:
                    actions.add(constants[value.id])
                elif not isinstance(value, ast.JoinedStr):
                    raise AssertionError(f"{path}:{node.lineno}: an action the scan cannot read")
    return actions


def test_the_scan_finds_the_actions_it_should() -> None:
    found = recorded_actions()
    # A scan that found nothing would pass the test below vacuously.
    assert {"answers.saved", "answers.imported", "scoring.succeeded", "probe.finished"} <= found


@pytest.mark.parametrize("action", sorted(recorded_actions()))
def test_every_recorded_action_has_a_label_in_both_languages(action: str) -> None:
    english = audit_action_label(action, "en")
    chinese = audit_action_label(action, "zh-hant")
    assert english != action, f"{action} has no label"
    assert chinese != english, f"{action} has no Traditional Chinese label"
