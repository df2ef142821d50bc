import pytest

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.api.urls")]

DETAIL = "/api/v1/questionnaires/ai-inference-isolation/"


def question(body, code):
    return next(
        q for section in body["sections"] for q in section["questions"] if q["code"] == code
    )


def test_the_list_shows_every_published_questionnaire(personas, catalog, client_as):
    response = client_as(personas.vic).get("/api/v1/questionnaires/")

    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 3
    by_key = {q["key"]: q for q in body["results"]}
    assert set(by_key) == {f"ai-inference-isolation@{v}" for v in ("1", "2", "3")}
    assert len(by_key["ai-inference-isolation@1"]["sections"]) == 8
    assert len(by_key["ai-inference-isolation@2"]["sections"]) == 9  # + PRB, the probe
    assert len(by_key["ai-inference-isolation@3"]["sections"]) == 9  # KV-10 to KV-12 in KV


def test_the_detail_has_sections_in_both_languages(personas, catalog, client_as):
    body = client_as(personas.vic).get(DETAIL).json()

    assert (body["slug"], body["version"]) == ("ai-inference-isolation", "3")  # the newest
    assert [s["code"] for s in body["sections"]] == [
        "PRF", "CTX", "KV", "ISO", "CHG", "INC", "GOV", "PRB", "USE",
    ]  # fmt: skip
    use = body["sections"][-1]
    assert use["answered_by"] == "buyer"
    assert body["sections"][0]["answered_by"] == "vendor"
    assert set(use["title"]) == {"en", "zh-hant"}
    assert all(use["title"].values())


def test_questions_carry_type_required_unit_and_show_if(personas, catalog, client_as):
    body = client_as(personas.vic).get(DETAIL).json()

    ctx01 = question(body, "CTX-01")
    assert (ctx01["type"], ctx01["required"], ctx01["unit"]) == ("integer", True, "tokens")
    assert ctx01["show_if"] is None
    assert set(ctx01["text"]) == set(ctx01["help"]) == {"en", "zh-hant"}
    assert question(body, "PRF-08")["show_if"] == 'PRF_07 == "yes"'
    assert question(body, "PRF-09")["required"] is False
    assert question(body, "CTX-08")["type"] == "file"


def test_options_have_labels_and_the_exclusive_flag(personas, catalog, client_as):
    body = client_as(personas.vic).get(DETAIL).json()

    gov01 = question(body, "GOV-01")
    assert gov01["type"] == "multi_choice"
    options = {o["code"]: o for o in gov01["options"]}
    assert list(options) == ["soc2_type2", "iso27001", "iso42001", "csa_star", "none"]
    assert options["none"]["exclusive"] is True
    assert options["iso27001"]["exclusive"] is False
    assert set(options["iso27001"]["label"]) == {"en", "zh-hant"}
    assert [o["code"] for o in question(body, "PRF-03")["options"]] == [
        "shared_multi_tenant", "dedicated_instance", "customer_hosted",
    ]  # fmt: skip
    assert question(body, "PRF-07")["options"] == []  # yes_no: "yes", "no", "unknown"


def test_a_version_can_be_asked_for(personas, catalog, client_as):
    client = client_as(personas.vic)
    assert client.get(DETAIL, {"version": "1"}).json()["key"] == "ai-inference-isolation@1"
    assert client.get(DETAIL, {"version": "2"}).json()["key"] == "ai-inference-isolation@2"
    assert client.get(DETAIL, {"version": "3"}).json()["key"] == "ai-inference-isolation@3"
    assert client.get(DETAIL, {"version": "4"}).status_code == 404


def test_version_3_asks_how_cache_isolation_is_enforced(personas, catalog, client_as):
    body = client_as(personas.vic).get(DETAIL, {"version": "3"}).json()

    kv = next(section for section in body["sections"] if section["code"] == "KV")
    assert [q["code"] for q in kv["questions"]][-4:] == ["KV-09", "KV-10", "KV-11", "KV-12"]
    kv10, kv11, kv12 = (question(body, code) for code in ("KV-10", "KV-11", "KV-12"))
    assert (kv10["type"], kv10["required"], kv10["show_if"]) == (
        "choice", True, 'KV_05 == "per_tenant_isolated"',
    )  # fmt: skip
    assert [o["code"] for o in kv10["options"]] == [
        "salt_set_by_gateway", "salt_from_request", "separate_instances", "unknown",
    ]  # fmt: skip
    assert (kv11["type"], kv11["required"], kv11["show_if"]) == (
        "choice", True, 'KV_06 == "yes" && KV_05 == "per_tenant_isolated"',
    )  # fmt: skip
    assert [o["code"] for o in kv11["options"]] == ["yes_tested", "yes_documented", "no", "unknown"]
    assert (kv12["type"], kv12["required"], kv12["show_if"]) == ("text", False, 'KV_06 == "yes"')
    for new in (kv10, kv11, kv12):
        assert all(new["text"].values()) and all(new["help"].values())
        assert set(new["help"]) == {"en", "zh-hant"}


def test_the_newest_version_is_served_by_default(personas, catalog, client_as):
    from questionnaires.models import QuestionnaireVersion

    first = QuestionnaireVersion.objects.get(version="1")
    content = {**first.content, "version": "10"}
    QuestionnaireVersion.objects.create(
        slug=first.slug,
        version="10",
        title_en=first.title_en,
        title_zh_hant=first.title_zh_hant,
        content=content,
        content_hash="x",
    )
    QuestionnaireVersion.objects.create(
        slug=first.slug,
        version="9",
        title_en=first.title_en,
        title_zh_hant=first.title_zh_hant,
        content={**first.content, "version": "9"},
        content_hash="y",
    )

    # Versions compare as versions, not strings: 10 > 9.
    assert client_as(personas.vic).get(DETAIL).json()["version"] == "10"


def test_questionnaires_need_an_account(personas, catalog):
    from rest_framework.test import APIClient

    assert APIClient().get(DETAIL).status_code == 401
