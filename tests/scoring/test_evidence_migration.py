"""Findings stored before evidence became data are rewritten into the same items the engine
emits today."""

import importlib

migration = importlib.import_module("assessments.migrations.0002_structured_finding_evidence")


def test_stored_lines_become_answer_derived_and_log_items():
    assert migration._item("CTX-01 = 1048576") == {
        "kind": "answer",
        "code": "CTX-01",
        "value": 1048576,
    }
    assert migration._item("KV-01 = overwritten_only") == {
        "kind": "answer", "code": "KV-01", "value": "overwritten_only",
    }  # fmt: skip
    assert migration._item("pool = 681280") == {"kind": "derived", "name": "pool", "value": 681280}
    assert migration._item("CTX-08 prefill.log line 42: max_total_num_tokens=681280") == {
        "kind": "log", "code": "CTX-08", "file": "prefill.log", "line": 42,
        "text": "max_total_num_tokens=681280",
    }  # fmt: skip


def test_items_already_stored_as_data_are_left_alone():
    item = {"kind": "answer", "code": "CTX-01", "value": 5}
    assert migration._item(item) is item
