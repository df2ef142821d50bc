"""Assessor pages of the scoring app: the KV sizing calculator (v2.md, "KV sizing")."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext

from accounts.decorators import member_page
from accounts.tenancy import OrgContext
from core.web import error_summary
from scoring.evidence import GIB, sizing_report
from scoring.evidence.messages import ATTENTION_LABELS

from .forms import KVSizingForm


@member_page
def kvsize(request: HttpRequest, org: OrgContext) -> HttpResponse:
    """Paste or upload a config.json: the KV bytes per token, and for N tokens whether they fit
    the instance's GPU memory, with the formula worked out in the figures given."""
    form = KVSizingForm(request.POST or None, request.FILES or None)
    context: dict[str, object] = {"form": form, "gib": GIB, "error_summary": error_summary(form)}
    if request.method == "POST" and form.is_valid() and form.sizing is not None:
        data = form.cleaned_data
        context["sizing"] = form.sizing
        context["attention_label"] = gettext(ATTENTION_LABELS[form.sizing.attention])
        context["report"] = sizing_report(
            form.sizing,
            bytes_per_value=form.bytes_per_value,
            tokens=data["tokens"],
            gpus=data["gpus"],
            gpu_memory_gib=data["gpu_memory_gib"],
        )
    return render(request, "scoring/kvsize.html", context)
