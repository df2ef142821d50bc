"""The words the evidence parsers speak, kept apart from their numbers.

A parse result stores each note (and the reason a file was not parsed) as data:
``{"id": "...", "params": {...}}``. The English templates live here, once, marked with
``gettext_noop`` so that ``makemessages`` collects them; every page, API client and PDF renders
them through :func:`describe_parse_result` and :func:`parse_notes`, passing its own ``translate``
(e.g. Django's ``gettext`` in the current language) and, if it likes, its own number formatter.
Numbers stay numbers in the stored params: grouping digits is the presenter's job.

Results stored before notes became data hold English sentences; they still render (as they are).

Pure module: the ``gettext_noop`` import only marks strings, it needs no Django settings.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.utils.translation import gettext_noop

__all__ = [
    "NOTE_TEMPLATES",
    "Translate",
    "describe_parse_result",
    "format_number",
    "note",
    "parse_notes",
    "parse_reason",
]

Translate = Callable[[str], str]
NumberFormatter = Callable[[int | float], str]

# One template per note id. Params are %-style (Django's convention); a param holding a list of
# numbers is formatted and joined by the renderer.
NOTE_TEMPLATES: dict[str, str] = {
    # -- why a file was not parsed -------------------------------------------------------------
    "read_failed": gettext_noop("the file could not be read (%(error)s)"),
    "unsupported_source": gettext_noop("unsupported source (%(type)s)"),
    "parser_failed": gettext_noop("the parser failed on this file (%(error)s)"),
    "too_large": gettext_noop("too large: more than %(limit)s of text"),
    "too_large_gzip": gettext_noop("too large: more than %(limit)s of text once decompressed"),
    "corrupt_gzip": gettext_noop("corrupt gzip file (%(error)s)"),
    "corrupt_gzip_after": gettext_noop(
        "corrupt gzip file (the stream is corrupt or cut short after line %(line)s: %(error)s)"
    ),
    "unreadable_after": gettext_noop("unreadable (reading failed after line %(line)s: %(error)s)"),
    "empty_file": gettext_noop("empty file"),
    "empty_gzip": gettext_noop("empty file (empty gzip archive)"),
    "blank_lines_only": gettext_noop("empty file (blank lines only)"),
    "binary_file": gettext_noop("binary data, not a text file"),
    "engine_lines_without_figures": gettext_noop(
        "%(engines)s lines were found, but no KV pool or context line"
        " (is the startup part of the log missing?)"
    ),
    "no_supported_engine": gettext_noop(
        "no startup lines of a supported engine (SGLang, vLLM, TensorRT-LLM, TGI) were found"
    ),
    "not_json": gettext_noop("not a JSON file (%(error)s)"),
    "not_a_model_config": gettext_noop(
        "not a Hugging Face config.json: %(field)s is missing or not a positive whole number"
    ),
    # Results stored before the one bound (questionnaires.bounds) gave value_out_of_range:
    "model_config_implausible": gettext_noop(
        "not a usable config.json: %(values)s KV values per token is beyond any real model "
        "(at most %(limit)s)"
    ),
    "not_a_probe_result": gettext_noop("not an isolation probe result: %(problem)s"),
    "value_out_of_range": gettext_noop(
        "value out of range: %(field)s %(value)s (the largest accepted is %(maximum)s)"
    ),
    # -- startup logs ------------------------------------------------------------------------
    "partial_read": gettext_noop(
        "Only part of the file could be read: reading failed after line %(line)s (%(error)s)."
    ),
    "partial_read_gzip": gettext_noop(
        "Only part of the file could be read: the gzip stream is corrupt or cut short after line"
        " %(line)s (%(error)s)."
    ),
    "instance_without_figures": gettext_noop(
        "The %(engine)s instance starting at line %(line)s logs no KV pool or context line"
        " (is the log cut short?)."
    ),
    "instance_without_figures_role": gettext_noop(
        "The %(engine)s instance (%(role)s) starting at line %(line)s logs no KV pool or context"
        " line (is the log cut short?)."
    ),
    "vllm_failed_max_seq_len": gettext_noop(
        "vLLM refused to start (line %(line)s): one request at the model's max seq len"
        " (%(context)s tokens) does not fit in the KV cache; this log is a failed start, not a"
        " running configuration."
    ),
    "vllm_failed_max_seq_len_estimate": gettext_noop(
        "vLLM refused to start (line %(line)s): one request at the model's max seq len"
        " (%(context)s tokens) does not fit in the KV cache (vLLM estimates %(estimate)s tokens"
        " would fit); this log is a failed start, not a running configuration."
    ),
    "vllm_failed_no_memory": gettext_noop(
        "vLLM refused to start (line %(line)s): no GPU memory was left for the KV cache; this"
        " log is a failed start, not a running configuration."
    ),
    "ranks_differ_pool": gettext_noop(
        "Ranks of the %(engine)s instance starting at line %(line)s report different pools"
        " (%(values)s): the smallest is used."
    ),
    "ranks_differ_context": gettext_noop(
        "Ranks of the %(engine)s instance starting at line %(line)s report different contexts"
        " (%(values)s): the largest is used."
    ),
    "sglang_pool_from_kv_alloc": gettext_noop(
        "The SGLang instance starting at line %(line)s has no max_total_num_tokens line: the"
        " pool is taken from 'KV Cache is allocated' (line %(pool_line)s)."
    ),
    "sglang_context_from_server_args": gettext_noop(
        "The SGLang instance starting at line %(line)s has no scheduler context_len line: the"
        " context is the configured context_length from the server arguments (line"
        " %(context_line)s)."
    ),
    "sglang_context_unknown": gettext_noop(
        "The SGLang instance starting at line %(line)s sets context_length=None (the model's"
        " default) and has no scheduler line: its context is unknown."
    ),
    "vllm_context_from_max_model_len": gettext_noop(
        "The vLLM instance starting at line %(line)s has no 'Maximum concurrency' line: the"
        " context is the configured max_model_len (line %(context_line)s)."
    ),
    "vllm_concurrency_below_one": gettext_noop(
        "vLLM reports a maximum concurrency of %(concurrency)sx (line %(concurrency_line)s): one"
        " full-length request does not fit the pool."
    ),
    "vllm_blocks_stated_block_size": gettext_noop(
        "vLLM reports its KV cache in blocks (%(blocks)s GPU blocks, line %(blocks_line)s): with"
        " the block size the log states (%(block_size)s tokens, line %(block_size_line)s) the"
        " pool is %(tokens)s tokens."
    ),
    "vllm_blocks_default_block_size": gettext_noop(
        "vLLM reports its KV cache in blocks (%(blocks)s GPU blocks, line %(blocks_line)s) and"
        " the log states no block size: with vLLM's CUDA default of 16 tokens per block the pool"
        " is %(tokens)s tokens."
    ),
    "vllm_blocks_concurrency_agrees": gettext_noop(
        "The 'Maximum concurrency' line (line %(concurrency_line)s) agrees: %(context)s tokens x"
        " %(concurrency)s is about %(product)s tokens."
    ),
    "vllm_blocks_concurrency_block_size": gettext_noop(
        "vLLM reports its KV cache in blocks (%(blocks)s GPU blocks, line %(blocks_line)s) and"
        " the log states no block size; its 'Maximum concurrency' line (line"
        " %(concurrency_line)s: %(context)s tokens x %(concurrency)s, about %(product)s tokens)"
        " shows %(block_size)s tokens per block, so the pool is %(tokens)s tokens."
    ),
    "vllm_blocks_concurrency_disagrees": gettext_noop(
        "The 'Maximum concurrency' line (line %(concurrency_line)s: %(context)s tokens x"
        " %(concurrency)s, about %(product)s tokens) does not match %(blocks)s blocks of"
        " %(block_size)s tokens: check the block size."
    ),
    "trtllm_context_reduced": gettext_noop(
        "TensorRT-LLM lowered its maximum sequence length to %(context)s tokens (line"
        " %(context_line)s) because a full-length sequence did not fit the KV cache."
    ),
    "trtllm_pool_from_blocks": gettext_noop(
        "The TensorRT-LLM instance starting at line %(line)s prints no token count for its KV"
        " cache: the pool is %(blocks)s primary blocks x %(tokens_per_block)s tokens per block"
        " (lines %(blocks_line)s and %(tokens_per_block_line)s)."
    ),
    "tgi_context_unknown": gettext_noop(
        "The TGI instance starting at line %(line)s prints no max_total_tokens (Args or default):"
        " its context is unknown."
    ),
    "truncations": gettext_noop(
        "Prompts silently truncated to fit the KV pool or context on the %(engine)s instance"
        " starting at line %(line)s (--allow-auto-truncate): %(count)s."
    ),
    "rejections_disaggregated": gettext_noop(
        "Oversized prompts rejected on a %(role)s instance (disaggregated): %(count)s; check that"
        " clients received errors."
    ),
    "rejections_single_node": gettext_noop(
        "Oversized prompts rejected on a single-node instance: %(count)s (on a single node the"
        " client receives the engine's error)."
    ),
    "rejections_role_unknown": gettext_noop(
        "Oversized prompts rejected on a %(engine)s instance whose role the log does not state:"
        " %(count)s; if it is disaggregated, check that clients received errors."
    ),
    "unknown_disaggregation_mode": gettext_noop(
        "Unknown disaggregation mode '%(mode)s' on the %(engine)s instance starting at line"
        " %(line)s."
    ),
    "pool_and_context_from_different_instances": gettext_noop(
        "The smallest pool (%(pool)s tokens, line %(pool_line)s, %(pool_role)s) and the"
        " largest context (%(context)s tokens, line %(context_line)s, %(context_role)s) come"
        " from different instances."
    ),
    # -- model config (KV sizing) ------------------------------------------------------------
    "model_config_nested_text_config": gettext_noop(
        "The file nests the language model's settings under text_config: those are used."
    ),
    "model_config_defaulted_kv_heads": gettext_noop(
        "num_key_value_heads is not set: it defaults to num_attention_heads (%(kv_heads)s)."
    ),
    "model_config_defaulted_head_dim": gettext_noop(
        "head_dim is not set: it defaults to hidden_size / num_attention_heads (%(head_dim)s)."
    ),
}

# Fragments of the one-line description.
_PHRASES: dict[str, str] = {
    "not_parsed": gettext_noop("not parsed: %(reason)s"),
    "unknown_reason": gettext_noop("unknown reason"),
    "engine_log": gettext_noop("%(engine)s log"),
    "mixed_log": gettext_noop("Mixed-engine log (%(engines)s)"),
    "instances": gettext_noop("%(count)s instances"),
    "pool": gettext_noop("pool %(tokens)s tokens"),
    "context": gettext_noop("context %(tokens)s tokens"),
    "failed_start_max_seq_len": gettext_noop(
        "failed start (max seq len %(tokens)s tokens did not fit the KV cache)"
    ),
    "failed_start_no_memory": gettext_noop(
        "failed start (no GPU memory was left for the KV cache)"
    ),
    "failed_starts": gettext_noop("failed starts: %(count)s"),
    "line": gettext_noop("line %(line)s"),
    "lines_range": gettext_noop("lines %(first)s–%(last)s"),
    "lines_list": gettext_noop("lines %(lines)s and %(last)s"),
    "head_and_parts": gettext_noop("%(head)s: %(parts)s"),
    "list_separator": gettext_noop(", "),
    "role_prefill": gettext_noop("prefill"),
    "role_decode": gettext_noop("decode"),
    "role_single": gettext_noop("single node"),
    "role_unknown": gettext_noop("role not stated"),
    "model_config": gettext_noop(
        "Model architecture: %(attention)s, %(layers)s layers, %(bytes_per_value_2)s bytes of KV"
        " per token in BF16/FP16, %(bytes_per_value_1)s in FP8"
    ),
    "probe_result": gettext_noop(
        "Isolation probe of %(endpoint)s: oversized prompts %(oversize)s, cross-tenant echo"
        " %(canary)s, prefix cache %(prefix_cache)s"
    ),
    "probe_not_run": gettext_noop("not run"),
}

_PROBE_OUTCOMES = {
    "accepted": gettext_noop("accepted"),
    "rejected": gettext_noop("rejected"),
    "overclaimed": gettext_noop("over-claimed"),
    "inconclusive": gettext_noop("inconclusive"),
    "leak": gettext_noop("leak"),
    "clean": gettext_noop("clean"),
    "shared": gettext_noop("shared"),
    "isolated": gettext_noop("isolated"),
    "no_cache_seen": gettext_noop("no cache seen"),
}

ATTENTION_LABELS = {
    "mla": gettext_noop("multi-head latent attention"),
    "gqa": gettext_noop("grouped-query attention"),
    "mha": gettext_noop("multi-head attention"),
}

# Engine names are proper nouns: never translated.
ENGINE_LABELS: dict[str, str] = {
    "sglang": "SGLang",
    "vllm": "vLLM",
    "trtllm": "TensorRT-LLM",
    "tgi": "TGI",
}


def note(note_id: str, **params: Any) -> dict[str, Any]:
    """A note as stored in a parse result (``id`` must be a key of NOTE_TEMPLATES)."""
    if note_id not in NOTE_TEMPLATES:
        raise KeyError(f"unknown evidence note {note_id!r}")
    return {"id": note_id, "params": params}


def format_number(value: int | float) -> str:
    """Default grouping: 1,048,576 and 0.50 (the presenter may pass a locale-aware one)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.2f}"


def render_note(item: object, translate: Translate, number: NumberFormatter = format_number) -> str:
    """One stored note (structured, or an English string from before notes became data)."""
    if isinstance(item, str):
        return item
    if not isinstance(item, Mapping) or item.get("id") not in NOTE_TEMPLATES:
        return str(item)
    params = item.get("params") or {}
    values = {
        # Role codes ("prefill", "decode", "single", None) are words of the reader's language.
        key: _role_label(value, translate)
        if key == "role" or key.endswith("_role")
        else _param(value, translate, number)
        for key, value in params.items()
    }
    try:
        return translate(NOTE_TEMPLATES[item["id"]]) % values
    except (KeyError, TypeError, ValueError):
        # A translation that lost a placeholder must not break a page: fall back to English.
        return NOTE_TEMPLATES[item["id"]] % values


def parse_notes(
    data: Mapping[str, Any], translate: Translate, number: NumberFormatter = format_number
) -> list[str]:
    """The notes of a stored parse result, as sentences in the caller's language."""
    return [render_note(item, translate, number) for item in data.get("notes") or ()]


def parse_reason(
    data: Mapping[str, Any], translate: Translate, number: NumberFormatter = format_number
) -> str:
    """Why a stored parse result was not parsed ("" when it was)."""
    reason = data.get("reason")
    if reason is None or reason == "":
        return "" if data.get("parsed") else translate(_PHRASES["unknown_reason"])
    return render_note(reason, translate, number)


def describe_parse_result(
    data: Mapping[str, Any], translate: Translate, number: NumberFormatter = format_number
) -> str:
    """One line for the UI and the report, for any kind of parsed evidence, e.g.
    "SGLang log: pool 681,280 tokens, context 1,048,576 tokens, line 31"."""
    if not data.get("parsed"):
        return _phrase("not_parsed", translate, reason=parse_reason(data, translate, number))
    kind = data.get("kind") or "startup_log"
    if kind == "model_config":
        return _describe_model_config(data, translate, number)
    if kind == "probe_result":
        return _describe_probe_result(data, translate)
    return _describe_startup_log(data, translate, number)


# -- helpers ---------------------------------------------------------------------------------


def _phrase(key: str, translate: Translate, **params: Any) -> str:
    template = _PHRASES[key]
    try:
        return translate(template) % params if params else translate(template)
    except (KeyError, TypeError, ValueError):
        return template % params if params else template


def _param(value: Any, translate: Translate, number: NumberFormatter) -> Any:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return number(value)
    if isinstance(value, list | tuple):
        separator = _phrase("list_separator", translate)
        return separator.join(str(_param(item, translate, number)) for item in value)
    return value


def _role_label(role: object, translate: Translate) -> str:
    if role in ("prefill", "decode", "single"):
        return _phrase(f"role_{role}", translate)
    return _phrase("role_unknown", translate)


def _lines_text(lines: Sequence[int], translate: Translate, number: NumberFormatter) -> str:
    if len(lines) == 1:
        return _phrase("line", translate, line=lines[0])
    if len(lines) == 2 and lines[1] == lines[0] + 1:
        return _phrase("lines_range", translate, first=lines[0], last=lines[1])
    separator = _phrase("list_separator", translate)
    head = separator.join(str(n) for n in lines[:-1])
    return _phrase("lines_list", translate, lines=head, last=lines[-1])


def _describe_startup_log(
    data: Mapping[str, Any], translate: Translate, number: NumberFormatter
) -> str:
    instances = [i for i in data.get("instances") or () if isinstance(i, Mapping)]
    engine = data.get("engine") or ""
    separator = _phrase("list_separator", translate)
    if engine == "mixed":
        labels = sorted(
            {ENGINE_LABELS.get(str(i.get("engine")), str(i.get("engine"))) for i in instances}
        )
        head = _phrase("mixed_log", translate, engines=separator.join(labels))
    else:
        head = _phrase("engine_log", translate, engine=ENGINE_LABELS.get(engine, engine or "?"))
    if len(instances) > 1:
        head += separator + _phrase("instances", translate, count=number(len(instances)))
        if any(i.get("role") for i in instances):
            roles = separator.join(_role_label(i.get("role"), translate) for i in instances)
            head += f" ({roles})"
    parts: list[str] = []
    if data.get("pool") is not None:
        parts.append(_phrase("pool", translate, tokens=number(data["pool"])))
    if data.get("context") is not None:
        parts.append(_phrase("context", translate, tokens=number(data["context"])))
    lines = [n for n in data.get("lines") or () if isinstance(n, int)]
    failed = [i for i in instances if i.get("failed_start")]
    if failed and not parts:
        first = failed[0]
        if first.get("context_tokens") is not None:
            parts.append(
                _phrase(
                    "failed_start_max_seq_len", translate, tokens=number(first["context_tokens"])
                )
            )
        else:
            parts.append(_phrase("failed_start_no_memory", translate))
        where = first.get("context_line") or first.get("pool_line")
        lines = [where] if isinstance(where, int) else []
    elif failed:
        parts.append(_phrase("failed_starts", translate, count=number(len(failed))))
    text = _phrase("head_and_parts", translate, head=head, parts=separator.join(parts))
    if lines:
        text += separator + _lines_text(lines, translate, number)
    return text


def _describe_model_config(
    data: Mapping[str, Any], translate: Translate, number: NumberFormatter
) -> str:
    sizing = data.get("sizing") or {}
    attention = translate(ATTENTION_LABELS.get(str(sizing.get("attention")), "?"))
    values = int(sizing.get("values_per_token") or 0)  # bytes/token = values x bytes/value
    return _phrase(
        "model_config",
        translate,
        attention=attention,
        layers=number(sizing.get("layers") or 0),
        bytes_per_value_2=number(values * 2),
        bytes_per_value_1=number(values),
    )


def probe_outcome_label(outcome: object, translate: Translate) -> str:
    """A probe check's result in words ("leak", "no cache seen"); "not run" when it has none."""
    if isinstance(outcome, str) and outcome in _PROBE_OUTCOMES:
        return translate(_PROBE_OUTCOMES[outcome])
    return _phrase("probe_not_run", translate)


def _describe_probe_result(data: Mapping[str, Any], translate: Translate) -> str:
    checks = data.get("checks") or {}

    def outcome(name: str) -> str:
        return probe_outcome_label(checks.get(name), translate)

    return _phrase(
        "probe_result",
        translate,
        endpoint=str(data.get("endpoint") or "?"),
        oversize=outcome("oversize"),
        canary=outcome("canary"),
        prefix_cache=outcome("prefix_cache"),
    )
