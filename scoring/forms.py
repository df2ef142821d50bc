"""The KV sizing calculator's form: a config.json (pasted or uploaded), the KV data type, and
optionally a number of tokens and the GPUs of a serving instance."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from scoring.evidence import BYTES_PER_VALUE, KVSizing, parse_model_config, parse_reason
from scoring.evidence.kv_sizing import MAX_CONFIG_BYTES

DTYPE_CHOICES = [
    ("bf16", _("BF16 (2 bytes per value)")),
    ("fp16", _("FP16 (2 bytes per value)")),
    ("fp8", _("FP8 (1 byte per value)")),
]


class KVSizingForm(forms.Form):
    config_text = forms.CharField(
        label=_("Paste the model's config.json"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false", "class": "code"}),
        max_length=MAX_CONFIG_BYTES,
    )
    config_file = forms.FileField(
        label=_("…or upload it"),
        required=False,
        help_text=_("Hugging Face format; a multimodal file's text_config is used."),
    )
    dtype = forms.ChoiceField(label=_("KV cache data type"), choices=DTYPE_CHOICES, initial="bf16")
    tokens = forms.IntegerField(
        label=_("Tokens to size (e.g. a declared KV pool or context)"),
        required=False,
        min_value=1,
        max_value=10**12,
    )
    gpus = forms.IntegerField(
        label=_("GPUs per serving instance"), required=False, min_value=1, max_value=100_000
    )
    gpu_memory_gib = forms.IntegerField(
        label=_("Memory per GPU (GiB)"), required=False, min_value=1, max_value=100_000
    )

    sizing: KVSizing | None = None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        upload = cleaned.get("config_file")
        text = (cleaned.get("config_text") or "").strip()
        if upload is None and not text:
            self.add_error("config_text", _("Paste a config.json or upload one."))
            return cleaned
        source = upload.read(MAX_CONFIG_BYTES + 1) if upload is not None else text.encode()
        result = parse_model_config(source, source_name=getattr(upload, "name", "config.json"))
        if not result.parsed or result.sizing is None:
            field = "config_file" if upload is not None else "config_text"
            self.add_error(field, parse_reason(result.to_dict(), gettext))
        self.sizing = result.sizing
        if (cleaned.get("gpus") is None) != (cleaned.get("gpu_memory_gib") is None):
            self.add_error(
                "gpus" if cleaned.get("gpus") is None else "gpu_memory_gib",
                _("Give both the number of GPUs and the memory per GPU, or neither."),
            )
        return cleaned

    @property
    def bytes_per_value(self) -> int:
        return BYTES_PER_VALUE[self.cleaned_data["dtype"]]
