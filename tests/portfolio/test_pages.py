"""The portfolio's member pages: assessments scored with an older ruleset, one action to rescore
them, the batch's progress and impact, its CSV; the reassessment policy, starting a
reassessment, and the outbox."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.urls import reverse

from assessments.models import Assessment, RenewalReason
from outbox.models import EmailKind, OutboundEmail
from outbox.services import email_enqueue
from portfolio.models import BatchStatus, RescoreBatch
from portfolio.selectors import batch_changes
from scoring.models import Ruleset

from .conftest import V1, V2, V3, expected

RESCORE = reverse("portfolio:rescore")


@pytest.fixture
def eager(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True


def start(client, capture, **filters):
    with capture(execute=True):
        return client.post(RESCORE, {"ruleset": V2, **filters})


def test_the_page_lists_what_v2_would_rescore_and_filters_it(client, personas, portfolio):
    (launch, remediated), other = portfolio
    client.force_login(personas.vic)
    page = client.get(RESCORE)
    assert page.status_code == 200
    listed = [a.pk for a in page.context["page"]]
    assert sorted(listed) == sorted([launch.pk, remediated.pk])  # not Other Org's
    assert page.context["ruleset"].key == V3  # the one choice by default: the newest
    assert b"Rescore these" not in page.content  # a viewer sees, but cannot rescore
    by_tier = client.get(RESCORE, {"ruleset": V2, "tier": remediated.risk_tier})
    assert [a.pk for a in by_tier.context["page"]] == [remediated.pk]
    by_vendor = client.get(RESCORE, {"ruleset": V2, "vendor": "inferno"})
    assert [a.pk for a in by_vendor.context["page"]] == [launch.pk]
    # Nothing is "older" than the oldest ruleset's own results.
    assert list(client.get(RESCORE, {"ruleset": V1}).context["page"]) == []


def test_one_action_rescores_the_filtered_set_and_shows_the_impact_worse_first(
    client, personas, portfolio, eager, django_capture_on_commit_callbacks
):
    (launch, remediated), _other = portfolio
    client.force_login(personas.ava)
    response = start(client, django_capture_on_commit_callbacks, tier=remediated.risk_tier)
    batch = RescoreBatch.objects.get()
    assert response["Location"] == reverse("portfolio:batch", args=[batch.pk])
    assert (batch.total, batch.filters) == (1, {"tier": remediated.risk_tier})
    assert Assessment.objects.get(pk=launch.pk).latest_run.ruleset.key == V1  # filtered out

    page = client.get(response["Location"])
    assert page.context["batch"].status == BatchStatus.DONE
    assert page.context["poll_interval"] is None
    (change,) = page.context["page"]
    want = expected(Assessment.objects.get(pk=remediated.pk), V2)
    assert (change.after.risk_score, change.after.risk_tier) == (
        want["risk_score"],
        want["risk_tier"],
    )
    html = page.content.decode()
    assert "Blue Harbour Compute" in html and "PROBE-NOT-RUN" in html
    assert f'<span class="assessment-ref">#{remediated.number}</span>' in html
    assert reverse("portfolio:batch_changes_csv", args=[batch.pk]) in html


def test_the_chinese_batch_page_names_the_tiers_in_chinese(
    client, personas, portfolio, eager, django_capture_on_commit_callbacks, settings
):
    client.force_login(personas.ava)
    response = start(client, django_capture_on_commit_callbacks)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hant"
    html = client.get(response["Location"]).content.decode()
    tiers = re.findall(r'<span class="tier tier-\w+">([^<]*)</span>', html)
    assert tiers and not {"critical", "high", "medium", "low"} & set(tiers), tiers
    assert set(tiers) <= {"嚴重", "高", "中", "低"}


def test_the_csv_download_lists_every_change(
    client, personas, portfolio, eager, django_capture_on_commit_callbacks
):
    client.force_login(personas.ava)
    start(client, django_capture_on_commit_callbacks)
    batch = RescoreBatch.objects.get()
    response = client.get(reverse("portfolio:batch_changes_csv", args=[batch.pk]))
    assert response["Content-Disposition"].endswith('-changes.csv"')
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [int(r["assessment"]) for r in rows] == [
        c.assessment_id for c in batch_changes(batch=batch)
    ]
    assert {r["after_ruleset"] for r in rows} == {V2}


def test_the_csv_download_is_kept_out_of_caches_as_every_export_is(
    client, personas, portfolio, eager, django_capture_on_commit_callbacks
):
    """The organization's vendors and scores: like the findings and portfolio exports and the
    reports, never stored by a browser or a proxy, and never sniffed as another type."""
    client.force_login(personas.ava)
    start(client, django_capture_on_commit_callbacks)
    batch = RescoreBatch.objects.get()
    response = client.get(reverse("portfolio:batch_changes_csv", args=[batch.pk]))
    exported = client.get(reverse("spreadsheets:portfolio_export", args=["csv"]))
    for header in ("Cache-Control", "X-Content-Type-Options"):
        assert response.get(header) == exported[header], header


def test_a_vendor_name_that_looks_like_a_formula_is_quoted_in_the_csv(
    client, personas, portfolio, eager, django_capture_on_commit_callbacks
):
    (launch, _remediated), _other = portfolio
    launch.vendor.name = '=HYPERLINK("http://evil.test")'
    launch.vendor.save()
    client.force_login(personas.ava)
    start(client, django_capture_on_commit_callbacks)
    batch = RescoreBatch.objects.get()
    text = client.get(reverse("portfolio:batch_changes_csv", args=[batch.pk])).content.decode()
    assert "'=HYPERLINK" in text


def test_a_running_batch_polls_and_reloads_once_finished(
    client, personas, portfolio, django_capture_on_commit_callbacks
):
    client.force_login(personas.ava)
    client.post(RESCORE, {"ruleset": V2})  # not committed here: the chunks never run
    batch = RescoreBatch.objects.get()
    url = reverse("portfolio:batch", args=[batch.pk])
    page = client.get(url)
    html = page.content.decode()
    assert f'hx-get="{url}?status=queued"' in html and "<noscript>" in html
    assert page.context["page"].paginator.count == 0
    same = client.get(url, {"status": "queued"}, HTTP_HX_REQUEST="true")
    assert same.status_code == 200 and "HX-Refresh" not in same
    RescoreBatch.objects.filter(pk=batch.pk).update(status=BatchStatus.DONE)
    moved = client.get(url, {"status": "queued"}, HTTP_HX_REQUEST="true")
    assert (moved.status_code, moved["HX-Refresh"]) == (204, "true")


def test_another_organizations_batch_is_not_found_and_viewers_cannot_start_one(
    client, personas, portfolio, eager, django_capture_on_commit_callbacks
):
    client.force_login(personas.ava)
    start(client, django_capture_on_commit_callbacks)
    batch = RescoreBatch.objects.get()
    client.force_login(personas.oscar)
    assert client.get(reverse("portfolio:batch", args=[batch.pk])).status_code == 404
    assert client.get(reverse("portfolio:batch_changes_csv", args=[batch.pk])).status_code == 404
    client.force_login(personas.vic)
    assert client.post(RESCORE, {"ruleset": V2}).status_code == 403
    assert RescoreBatch.objects.count() == 1


def test_nothing_left_to_rescore_is_said_and_saves_nothing(
    client, personas, portfolio, eager, django_capture_on_commit_callbacks
):
    client.force_login(personas.ava)
    start(client, django_capture_on_commit_callbacks)
    again = start(client, django_capture_on_commit_callbacks)
    assert again.status_code == 400
    assert "No assessment to rescore" in again.content.decode()
    assert RescoreBatch.objects.count() == 1


# -- policy, reassessment, outbox -----------------------------------------------------------


def test_the_owner_sets_the_policy_and_others_may_not(client, personas, catalog):
    url = reverse("portfolio:policy")
    client.force_login(personas.ava)
    assert client.get(url).status_code == 403
    client.force_login(personas.alice)
    form = client.get(url).context["form"]
    assert {name: form[name].value() for name in form.fields} == {
        "critical": 90,
        "high": 180,
        "medium": 365,
        "low": 730,
    }
    bad = client.post(url, {"critical": "0", "high": "180", "medium": "365", "low": "730"})
    assert bad.status_code == 400 and "critical" in bad.context["form"].errors
    good = client.post(url, {"critical": "60", "high": "120", "medium": "365", "low": "730"})
    assert good.status_code == 302
    assert client.get(url).context["form"]["critical"].value() == 60


def test_an_assessor_records_a_configuration_change_from_the_assessment_page(
    client, personas, portfolio
):
    (launch, _remediated), _other = portfolio
    client.force_login(personas.ava)
    detail = client.get(reverse("assessments:detail", args=[launch.pk])).content.decode()
    assert reverse("portfolio:reassess", args=[launch.pk]) in detail
    response = client.post(
        reverse("portfolio:reassess", args=[launch.pk]),
        {"changes": ["weights", "memory"], "note": "Llama 4 weights, 0.85 memory fraction."},
    )
    renewal = launch.renewals.get()
    assert response["Location"] == reverse("assessments:detail", args=[renewal.pk])
    assert renewal.renewal_reason == RenewalReason.CONFIGURATION_CHANGE
    page = client.get(response["Location"]).content.decode()
    assert "Llama 4 weights, 0.85 memory fraction." in page
    again = client.post(reverse("portfolio:reassess", args=[launch.pk]), {})
    assert again.status_code == 302 and launch.renewals.count() == 1  # one open at a time


def test_outsiders_and_viewers_cannot_reassess(client, personas, portfolio):
    (launch, _remediated), _other = portfolio
    client.force_login(personas.vic)
    assert client.post(reverse("portfolio:reassess", args=[launch.pk])).status_code == 403
    client.force_login(personas.oscar)
    assert client.post(reverse("portfolio:reassess", args=[launch.pk])).status_code == 404
    assert not launch.renewals.exists()


def test_the_outbox_shows_the_organizations_emails_and_why_one_failed(client, personas, catalog):
    for organization, key in ((personas.acme, "acme"), (personas.other, "other")):
        email_enqueue(
            event_key=key,
            kind=EmailKind.DIGEST,
            to=f"someone@{key}.test",
            language="en",
            template="password_reset",
            context={"url": "https://avia.test/reset/"},
            organization=organization,
        )
    OutboundEmail.objects.filter(event_key="acme").update(
        attempts=2, last_error="SMTPServerDisconnected: Connection unexpectedly closed"
    )
    client.force_login(personas.alice)
    html = client.get(reverse("portfolio:outbox")).content.decode()
    assert "someone@acme.test" in html and "someone@other.test" not in html
    assert "Connection unexpectedly closed" in html
    client.force_login(personas.ava)
    assert client.get(reverse("portfolio:outbox")).status_code == 403


def test_the_pages_read_in_traditional_chinese(client, personas, portfolio):
    client.force_login(personas.alice)
    client.cookies["django_language"] = "zh-hant"
    for url in (RESCORE, reverse("portfolio:policy"), reverse("portfolio:outbox")):
        html = client.get(url).content.decode()
        assert "Scored with an older ruleset" not in html and "Reassessment policy" not in html


def test_before_any_ruleset_is_loaded_the_page_says_so(client, personas):
    Ruleset.objects.all().delete()  # (the package's catalogue, if loaded: rolled back after)
    client.force_login(personas.vic)
    page = client.get(RESCORE)
    assert page.status_code == 200
    assert "No ruleset is loaded yet." in page.content.decode()
    assert list(page.context["page"]) == []
