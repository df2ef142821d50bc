"""The probe's second-edition figures as people read them (probe-v2.md "In the product"): served
against declared context, the samples used, the three tests in words, where a canary came from
and which model answered — in both languages, from the one presenter the findings page, the
probe page and the PDF share. Results stored by the first edition still read as before."""

from __future__ import annotations

import copy
import json

import pytest
from django.template.loader import render_to_string
from django.utils import translation

from assessments import factories
from assessments.presenters.evidence import evidence_views
from assessments.presenters.probe import probe_view
from questionnaires.models import QuestionnaireVersion

FIRST_EDITION = json.loads(
    (factories.EXAMPLES_DIR / "probe-launch-day.json").read_text(encoding="utf-8")
)


def second_edition() -> dict:
    """An over-claiming vendor's result: 8,192 tokens declared, 4,096 served, its prefix cache
    shared, a canary that came back in the model's reasoning."""
    document = copy.deepcopy(FIRST_EDITION)
    document.update(
        declared_context=8192,
        model="tiny-llama",
        served_model="tiny-llama-q8",
        tokens_measured=True,
    )
    document["checks"] = {
        "oversize": {
            "result": "overclaimed",
            "below": {
                "prompt_tokens": 7391,
                "status": 400,
                "measured": True,
                "target_tokens": 7373,
                "percent_of_declared": 90.22,
            },
            "above": None,
            "served_context": 4087,
            "limit_stated": 4096,
            "bisection_requests": 6,
            "reason": None,
        },
        "canary": {
            "result": "leak",
            "pairs": 3,
            "hits": [
                {
                    "canary": "c-5f0d8e1b2a4c4f6e9d3b7a1c0e2f4a6b",
                    "response": "B#2",
                    "offset": 120,
                    "excerpt": "the document: c-5f0d8e1b2a4c4f6e9d3b7a1c0e2f4a6b and",
                    "owner": "A",
                    "field": "reasoning_content",
                }
            ],
        },
        "prefix_cache": {
            "result": "shared",
            "samples": 10,
            "max_samples": 40,
            "looks": 1,
            "p_cross_tenant": 0.00002,
            "p_same_tenant": 0.00004,
            "p_cross_slower_than_same": 0.62,
            "median_ttft_ms": {"hit": 12.5, "miss": 88.1},
            "median_ttft_ms_same_tenant": {"hit": 12.9, "miss": 87.0},
            "median_hit_miss_ratio": {"cross_tenant": 0.142, "same_tenant": 0.148},
            "prefix_tokens": 1011,
        },
    }
    return document


def rendered(document: dict, language: str, **context) -> str:
    with translation.override(language):
        return render_to_string(
            "probes/_result.html", {"probe": probe_view(document, language), **context}
        )


def test_an_overclaimed_context_shows_served_against_declared():
    view = probe_view(second_edition(), "en")
    oversize = view.checks[0]

    assert oversize.status == "failed" and oversize.result_label == "over-claimed"
    assert oversize.summary == "Serves 4,087 tokens of the 8,192 tokens declared."
    figures = {figure.label: figure.value for figure in oversize.figures}
    assert figures["Largest prompt the endpoint accepted (served context)"] == "4,087 tokens"
    assert figures["Limit stated in the endpoint's refusal"] == "4,096 tokens"
    assert figures["Prompt of about 90 % of the context"] == (
        "7,391 tokens (90.2 % of the declared context) · HTTP 400"
    )
    assert "less context than the vendor claims" in oversize.meaning


def test_the_three_prefix_cache_tests_are_said_in_words():
    html = rendered(second_edition(), "en")

    assert "B&#x27;s requests were faster when A had sent the same text first: p &lt; 0.0001" in (
        html
    )
    assert "A&#x27;s requests were faster when A had sent the same text first" in html
    assert "B&#x27;s repeats were not measurably slower than A&#x27;s own repeats: p = 0.62" in (
        html
    )
    assert "10 of at most 40 per design" in html and "0.14" in html


def test_a_canary_names_the_field_it_came_in_and_a_different_model_is_marked():
    html = rendered(second_edition(), "en")

    assert "field." in html and '<span class="code" translate="no">reasoning_content</span>' in html
    assert "tiny-llama-q8" in html and "not the model asked for" in html


def test_the_rules_codes_show_on_member_pages_only():
    assert "probe.oversize = overclaimed" in rendered(second_edition(), "en", show_rule_input=True)
    assert "probe.oversize" not in rendered(second_edition(), "en")


@pytest.mark.parametrize("document", [FIRST_EDITION, second_edition()], ids=["first", "second"])
def test_every_new_sentence_is_in_chinese(document):
    english, chinese = rendered(document, "en"), rendered(document, "zh-hant")

    for sentence in (
        "Serves",
        "served context",
        "requests were",
        "per design",
        "Model that answered",
        "It came in",
        "Rules read",
        "five at a time",
        "partly the probe",
    ):
        assert sentence not in chinese, sentence
    assert "隔離" in chinese or "快取" in chinese
    assert english != chinese


def test_a_first_edition_result_still_reads():
    view = probe_view(FIRST_EDITION, "en")

    assert [check.result for check in view.checks] == ["accepted", "leak", "no_cache_seen"]
    assert view.served_model == "" and not view.model_mismatch
    assert "p = 0.41" in rendered(FIRST_EDITION, "en")


def test_the_evidence_chapter_gives_pool_rows_only_to_startup_logs(catalog):
    questionnaire = QuestionnaireVersion.objects.get(slug="ai-inference-isolation", version="2")
    snapshot = {
        "PRB-02": {
            "pool": None,
            "context": None,
            "files": [{"kind": "probe_result", "parsed": True, "probe": second_edition()}],
        }
    }

    views = evidence_views(snapshot, questionnaire.spec, "en")

    assert [view.code for view in views] == ["PRB-02"]
    assert [view.has_startup_logs for view in views] == [False]
