"""How the probe reads what an endpoint answers (probe-v2.md changes 4, 5, 6): every text field,
the sizes a refusal states in each engine's words, what a request costs, and one spelling of a
base URL. Table-driven, no endpoint."""

from __future__ import annotations

import json

import pytest

from probes.client import Reply, refusal_read, reply_from_body, tokens_charged
from probes.endpoint import base_url_normalise, chat_completions_url


@pytest.mark.parametrize(
    "url",
    [
        "https://api.vendor.example",
        "https://api.vendor.example/",
        "https://api.vendor.example/v1",
        "https://api.vendor.example/v1/",
        " https://api.vendor.example/V1// ",
    ],
)
def test_a_base_url_with_or_without_v1_is_one_endpoint(url):
    assert base_url_normalise(url) == "https://api.vendor.example"
    assert chat_completions_url(url) == "https://api.vendor.example/v1/chat/completions"


def test_only_a_trailing_v1_path_is_dropped():
    assert (
        base_url_normalise("https://gateway.example/openai/v1") == "https://gateway.example/openai"
    )
    assert base_url_normalise("https://v1.example") == "https://v1.example"
    assert base_url_normalise("https://gateway.example/v1beta") == "https://gateway.example/v1beta"


def _answer(message: dict) -> bytes:
    return json.dumps(
        {
            "model": "glm-5.3-fp8",
            "choices": [{"index": 0, "message": message}],
            "usage": {"prompt_tokens": 12},
        }
    ).encode()


@pytest.mark.parametrize(
    ("message", "texts"),
    [
        ({"content": "hello"}, {"content": "hello"}),
        ({"content": "", "reasoning_content": "thinking"}, {"reasoning_content": "thinking"}),
        ({"content": None, "reasoning": "thinking"}, {"reasoning": "thinking"}),
        (
            {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"content": "ab"},
        ),
        ({"content": ""}, {}),
    ],
    ids=["content", "reasoning_content", "reasoning", "text-parts", "no-text"],
)
def test_every_text_field_is_read(message, texts):
    reply = reply_from_body(200, _answer(message))
    assert dict(reply.texts) == texts
    # A 200 without text is an answer, not a failure.
    assert reply.ok and reply.prompt_tokens == 12 and reply.model == "glm-5.3-fp8"


LLAMA_CPP = {
    "error": {
        "code": 400,
        "message": "request (8000 tokens) exceeds the available context size (4096 tokens), "
        "try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 8000,
        "n_ctx": 4096,
    }
}


@pytest.mark.parametrize(
    ("document", "stated_prompt", "limit"),
    [
        (LLAMA_CPP, 8000, 4096),
        (
            {"error": {"message": LLAMA_CPP["error"]["message"], "type": "x"}},  # no fields
            8000,
            4096,
        ),
        (
            {
                "object": "error",
                "message": "This model's maximum context length is 4096 tokens. However, you "
                "requested 8001 tokens (8000 in the messages, 1 in the completion).",
            },
            8000,
            4096,
        ),
        (
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, "
                    "your messages resulted in 9000 tokens. Please reduce the length.",
                    "code": "context_length_exceeded",
                }
            },
            9000,
            8192,
        ),
        (
            {
                "error": "Input validation error: `inputs` tokens + `max_new_tokens` must be "
                "<= 4096. Given: 8000 `inputs` tokens and 1 `max_new_tokens`"
            },
            8000,
            4096,
        ),
        (
            {
                "error": {
                    "message": "input (8000 tokens) is larger than the max context size "
                    "(4096 tokens). skipping"
                }
            },
            8000,
            4096,
        ),
        ({"error": {"message": "Invalid request"}}, None, None),
    ],
    ids=[
        "llama.cpp",
        "llama.cpp-message-only",
        "vllm",
        "openai",
        "tgi",
        "llama.cpp-context-shift",
        "says-nothing",
    ],
)
def test_a_refusal_s_stated_sizes_are_read(document, stated_prompt, limit):
    reply = refusal_read(400, document)
    assert (reply.stated_prompt_tokens, reply.limit_stated) == (stated_prompt, limit)
    assert reply.rejected_prompt and reply.counted_tokens == stated_prompt


@pytest.mark.parametrize(
    ("reply", "charged"),
    [
        (Reply(200, prompt_tokens=900), (900, True)),
        (Reply(401, error="Incorrect API key"), (0, True)),
        (Reply(403), (0, True)),
        (Reply(404), (0, True)),
        (Reply(429), (0, True)),
        (Reply(429, prompt_tokens=900), (900, True)),  # usage says it was processed
        (Reply(400, stated_prompt_tokens=8000), (8000, True)),
        (Reply(400), (1000, False)),
        (Reply(None, error="timed out waiting for https://x/v1/chat/completions"), (1000, False)),
        (Reply(None, error="cannot connect", connected=False), (0, True)),
    ],
    ids=[
        "usage",
        "401",
        "403",
        "404",
        "429",
        "429-with-usage",
        "stated",
        "silent-400",
        "timeout",
        "never-sent",
    ],
)
def test_a_request_costs_what_the_endpoint_counted_and_a_refusal_nothing(reply, charged):
    assert tokens_charged(reply, 1000) == charged
