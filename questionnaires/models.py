"""Published questionnaire versions, mirrored from the YAML catalogue for browsing and keys.

The stored `content` is the parsed YAML itself; `spec()` rebuilds the immutable
`QuestionnaireSpec` from it, so an assessment is always validated against exactly the version it
was created with, whatever the files in the repository say later.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from functools import cached_property
from typing import Any, TypeVar

from django.db import models
from django.utils.translation import gettext_lazy as _

from .spec import ANSWER_TYPES, AUDIENCES, QuestionnaireSpec, parse_questionnaire

T = TypeVar("T")


class PublishedCatalogVersion(models.Model):
    """A published version of catalogue content (a questionnaire or a ruleset): the parsed YAML
    as it was loaded, and its hash, which `load_catalog` compares to refuse any change."""

    slug = models.SlugField(max_length=100)
    version = models.CharField(max_length=20)
    title_en = models.CharField(max_length=200)
    title_zh_hant = models.CharField(max_length=200)
    content = models.JSONField()
    content_hash = models.CharField(max_length=64)
    published_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["slug", "version"]

    def __str__(self) -> str:
        return self.key

    @property
    def key(self) -> str:
        return f"{self.slug}@{self.version}"

    def parsed_once(self, parse: Callable[[], T], *also: Hashable) -> T:
        """`parse()`, once per process for this version (its id and content hash, and `also`:
        whatever else the result depends on). A published version never changes, so every
        scoring run and page that reaches it shares one parse; `content` may be deferred by
        the caller and is read only when this process has no copy. An unsaved version is
        parsed each time."""
        if self.pk is None or not self.content_hash:
            return parse()
        key = (type(self).__name__, self.pk, self.content_hash, *also)
        with _PARSED_LOCK:
            if key in _PARSED:
                _PARSED.move_to_end(key)
                return _PARSED[key]
        value = parse()
        with _PARSED_LOCK:
            _PARSED[key] = value
            while len(_PARSED) > _PARSED_KEPT:
                _PARSED.popitem(last=False)  # the least recently used
        return value


# The parses `parsed_once` keeps (a few catalogue versions are in use at a time).
_PARSED: OrderedDict[tuple[Hashable, ...], Any] = OrderedDict()
_PARSED_KEPT = 64
_PARSED_LOCK = threading.Lock()


class QuestionnaireVersion(PublishedCatalogVersion):
    class Meta(PublishedCatalogVersion.Meta):
        constraints = [
            models.UniqueConstraint(fields=["slug", "version"], name="unique_questionnaire_version")
        ]

    @cached_property
    def spec(self) -> QuestionnaireSpec:
        return self.parsed_once(lambda: parse_questionnaire(self.content, source=self.key))


class Section(models.Model):
    questionnaire = models.ForeignKey(
        QuestionnaireVersion, on_delete=models.CASCADE, related_name="sections"
    )
    code = models.CharField(max_length=20)
    position = models.PositiveIntegerField()
    answered_by = models.CharField(max_length=10, choices=[(a, a) for a in AUDIENCES])
    title_en = models.CharField(max_length=200)
    title_zh_hant = models.CharField(max_length=200)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["questionnaire", "code"], name="unique_section_code")
        ]
        ordering = ["questionnaire", "position"]

    def __str__(self) -> str:
        return f"{self.questionnaire.key} {self.code}"


class Question(models.Model):
    questionnaire = models.ForeignKey(
        QuestionnaireVersion, on_delete=models.CASCADE, related_name="questions"
    )
    section = models.ForeignKey(Section, on_delete=models.CASCADE, related_name="questions")
    code = models.CharField(max_length=20)
    position = models.PositiveIntegerField()
    answer_type = models.CharField(_("type"), max_length=20, choices=[(t, t) for t in ANSWER_TYPES])
    required = models.BooleanField(default=False)
    show_if = models.TextField(blank=True)
    unit = models.CharField(max_length=20, blank=True)
    text_en = models.TextField()
    text_zh_hant = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["questionnaire", "code"], name="unique_question_code")
        ]
        ordering = ["questionnaire", "position"]

    def __str__(self) -> str:
        return self.code


class Option(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="options")
    code = models.CharField(max_length=50)
    position = models.PositiveIntegerField()
    exclusive = models.BooleanField(default=False)
    label_en = models.CharField(max_length=200)
    label_zh_hant = models.CharField(max_length=200)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["question", "code"], name="unique_option_code")
        ]
        ordering = ["question", "position"]

    def __str__(self) -> str:
        return self.code
