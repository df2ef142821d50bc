"""The physical size of a token's KV cache, from the model's own architecture file (PRF-10).

A Hugging Face ``config.json`` (the language model's settings nested under ``text_config`` in
multimodal files) gives, for the whole model (all layers, all KV heads, before any parallel split):

* multi-head latent attention (the file has ``kv_lora_rank``):
  values/token = ``(kv_lora_rank + qk_rope_head_dim) × num_hidden_layers``;
* otherwise: values/token = ``2 × num_hidden_layers × num_key_value_heads × head_dim``, where
  ``num_key_value_heads`` defaults to ``num_attention_heads`` and ``head_dim`` to
  ``hidden_size / num_attention_heads``;

and bytes/token = values/token × bytes per value (2 for BF16/FP16, 1 for FP8, and 1 for "other"
or "unknown", which keeps any bound on the vendor's side). ``kv_gib(tokens)`` = tokens ×
bytes/token / 2^30. (``v2.md`` of the shared spec, "KV sizing".)

Pure Python: no Django.
"""

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from questionnaires.bounds import EVIDENCE_MAXIMUM
from scoring.evidence.json_evidence import read_json_evidence
from scoring.evidence.messages import describe_parse_result, note

__all__ = [
    "BYTES_PER_VALUE",
    "GIB",
    "KVSizing",
    "ModelConfigError",
    "ModelConfigParseResult",
    "kv_gib",
    "kv_sizing_from_config",
    "parse_model_config",
    "sizing_report",
]

GIB = 2**30
MAX_CONFIG_BYTES = 4 * 1024 * 1024  # a config.json is a few KB; anything larger is not one
BYTES_PER_VALUE: dict[str, int] = {"bf16": 2, "fp16": 2, "fp8": 1, "other": 1, "unknown": 1}


class ModelConfigError(ValueError):
    """The file is not a usable config.json; ``reason`` is a stored note (see messages)."""

    def __init__(self, reason: dict[str, Any]) -> None:
        super().__init__(describe_parse_result({"parsed": False, "reason": reason}, str))
        self.reason = reason


@dataclass(frozen=True)
class KVSizing:
    attention: str  # "mla" | "gqa" | "mha"
    layers: int
    kv_heads: int  # MLA: 1 (one latent vector per token and layer)
    head_dim: int  # MLA: kv_lora_rank + qk_rope_head_dim
    latent_parts: tuple[int, int] | None = None  # MLA: (kv_lora_rank, qk_rope_head_dim)

    @property
    def values_per_token(self) -> int:
        """KV values one token occupies in the whole model (keys and values; MLA: the latent)."""
        per_layer = self.kv_heads * self.head_dim
        return self.layers * per_layer * (1 if self.attention == "mla" else 2)

    def bytes_per_token(self, bytes_per_value: int) -> int:
        return self.values_per_token * bytes_per_value

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "attention": self.attention,
            "layers": self.layers,
            "kv_heads": self.kv_heads,
            "head_dim": self.head_dim,
            "values_per_token": self.values_per_token,
        }
        if self.latent_parts is not None:
            data["kv_lora_rank"], data["qk_rope_head_dim"] = self.latent_parts
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "KVSizing":
        try:
            return cls(
                attention=str(data["attention"]),
                layers=int(data["layers"]),
                kv_heads=int(data["kv_heads"]),
                head_dim=int(data["head_dim"]),
                latent_parts=(int(data["kv_lora_rank"]), int(data["qk_rope_head_dim"]))
                if "kv_lora_rank" in data
                else None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"not a stored KV sizing: {exc}") from exc


def kv_gib(tokens: int, bytes_per_token: int) -> float:
    """GiB of KV cache that ``tokens`` tokens occupy."""
    return tokens * bytes_per_token / GIB


def kv_sizing_from_config(config: object) -> tuple[KVSizing, list[dict[str, Any]]]:
    """The sizing of a parsed config.json and the notes on defaults it used.

    Raises ``ModelConfigError`` naming the first missing or unusable field, or when the KV
    values per token are beyond any real model (the sizing rules multiply them by a token count
    in 64-bit integers: questionnaires.bounds).
    """
    sizing, notes = _sizing_from_config(config)
    maximum = EVIDENCE_MAXIMUM["values_per_token"]
    if sizing.values_per_token > maximum:
        raise ModelConfigError(
            note(
                "value_out_of_range",
                field="values_per_token",
                value=sizing.values_per_token,
                maximum=maximum,
            )
        )
    return sizing, notes


def _sizing_from_config(config: object) -> tuple[KVSizing, list[dict[str, Any]]]:
    if not isinstance(config, Mapping):
        raise ModelConfigError(note("not_a_model_config", field="the top level (an object)"))
    notes: list[dict[str, Any]] = []
    text_config = config.get("text_config")
    if isinstance(text_config, Mapping):
        config = text_config
        notes.append(note("model_config_nested_text_config"))
    layers = _positive_int(config, "num_hidden_layers")
    if config.get("kv_lora_rank") is not None:
        parts = (_positive_int(config, "kv_lora_rank"), _positive_int(config, "qk_rope_head_dim"))
        return KVSizing("mla", layers, 1, sum(parts), latent_parts=parts), notes
    heads = _positive_int(config, "num_attention_heads")
    if config.get("num_key_value_heads") is None:
        kv_heads = heads
        notes.append(note("model_config_defaulted_kv_heads", kv_heads=kv_heads))
    else:
        kv_heads = _positive_int(config, "num_key_value_heads")
    if config.get("head_dim") is None:
        hidden = _positive_int(config, "hidden_size")
        if hidden % heads:
            raise ModelConfigError(note("not_a_model_config", field="head_dim"))
        head_dim = hidden // heads
        notes.append(note("model_config_defaulted_head_dim", head_dim=head_dim))
    else:
        head_dim = _positive_int(config, "head_dim")
    attention = "mha" if kv_heads == heads else "gqa"
    return KVSizing(attention, layers, kv_heads, head_dim), notes


def sizing_report(
    sizing: KVSizing,
    *,
    bytes_per_value: int,
    tokens: int | None = None,
    gpus: int | None = None,
    gpu_memory_gib: float | None = None,
) -> dict[str, Any]:
    """The JSON of ``manage.py kvsize`` (v2.md): the sizing, and the fit when asked."""
    bytes_per_token = sizing.bytes_per_token(bytes_per_value)
    report: dict[str, Any] = {
        "attention": sizing.attention,
        "layers": sizing.layers,
        "kv_heads": sizing.kv_heads,
        "head_dim": sizing.head_dim,
        "bytes_per_value": bytes_per_value,
        "bytes_per_token": bytes_per_token,
    }
    if tokens is not None:
        report["tokens"] = tokens
        report["kv_gib"] = round(kv_gib(tokens, bytes_per_token), 3)
    if gpus is not None and gpu_memory_gib is not None:
        total = gpus * gpu_memory_gib
        report["gpu_memory_gib"] = int(total) if float(total).is_integer() else total
        if tokens is not None:
            # Compared exactly (bytes), not on the rounded GiB figure.
            report["fits"] = tokens * bytes_per_token <= total * GIB
    return report


def _positive_int(config: Mapping[str, Any], field: str) -> int:
    value = config.get(field)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ModelConfigError(note("not_a_model_config", field=field))
    return value


# --------------------------------------------------------------------------------------------
# As evidence (PRF-10): kept, and marked "not parsed" when unreadable


@dataclass(frozen=True)
class ModelConfigParseResult:
    source_name: str
    parsed: bool
    sizing: KVSizing | None = None
    reason: dict[str, Any] | None = None
    notes: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "model_config",
            "source_name": self.source_name,
            "parsed": self.parsed,
            "sizing": self.sizing.to_dict() if self.sizing else None,
            "notes": list(self.notes),
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ModelConfigParseResult":
        sizing = data.get("sizing")
        return cls(
            source_name=str(data.get("source_name") or ""),
            parsed=bool(data.get("parsed")),
            sizing=KVSizing.from_dict(sizing) if isinstance(sizing, Mapping) else None,
            reason=data.get("reason"),
            notes=tuple(data.get("notes") or ()),
        )


def parse_model_config(
    source: str | os.PathLike | BinaryIO | bytes,
    *,
    source_name: str = "",
    max_bytes: int = MAX_CONFIG_BYTES,
) -> ModelConfigParseResult:
    """Read a config.json given as a path, a binary stream or bytes (never raises)."""
    read = read_json_evidence(
        source, source_name=source_name, max_bytes=min(max_bytes, MAX_CONFIG_BYTES)
    )
    name = read.name
    if read.reason is not None:
        return ModelConfigParseResult(name, False, reason=read.reason)
    try:
        sizing, notes = kv_sizing_from_config(read.document)
    except ModelConfigError as exc:
        return ModelConfigParseResult(name, False, reason=exc.reason)
    return ModelConfigParseResult(name, True, sizing=sizing, notes=tuple(notes))
