"""Real startup logs from outside the project (tests/fixtures/logs/real/), held to the values read
by hand in its manifest: engine, KV pool, context, role and whether the start failed.

The logs were found in public GitHub issues, pull requests and committed files; each is stored as
found (unrelated bulk trimmed). A wrong parse of any of them fails here with the file's name.
"""

from pathlib import Path

import pytest
import yaml

from scoring.evidence import parse_startup_log

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "real"
MANIFEST = yaml.safe_load((REAL / "manifest.yaml").read_text(encoding="utf-8"))["logs"]


def read_by_parser(path: Path) -> dict:
    result = parse_startup_log(path)
    roles = sorted({i.role for i in result.instances if i.role})
    return {
        "engine": result.engine,
        "pool": result.pool,
        "context": result.context,
        "role": roles[0] if len(roles) == 1 else (roles or None),
        "failed_start": result.failed_start,
    }


def read_by_hand(entry: dict) -> dict:
    return {
        "engine": entry["engine"],
        "pool": entry["pool"],
        "context": entry["context"],
        "role": entry["role"],
        "failed_start": entry.get("failed_start", False),
    }


def test_the_corpus_holds_at_least_30_logs_each_listed_once_with_its_source():
    files = sorted(p.name for p in REAL.iterdir() if p.name != "manifest.yaml")
    listed = [entry["file"] for entry in MANIFEST]
    assert len(listed) >= 30
    assert sorted(listed) == files  # every file is listed, nothing listed is missing
    assert len(set(listed)) == len(listed)
    assert all(entry["source"] and entry["layout"] for entry in MANIFEST)
    assert {entry["engine"] for entry in MANIFEST} == {"sglang", "vllm", "trtllm", "tgi"}


@pytest.mark.parametrize("entry", MANIFEST, ids=[entry["file"] for entry in MANIFEST])
def test_the_parser_reads_what_a_person_read_in_each_real_log(entry):
    assert read_by_parser(REAL / entry["file"]) == read_by_hand(entry)
