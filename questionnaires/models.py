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

from .spec import ANSWER_TYPES, AUDIENCES, QuestionnaireSpec, english_only, parse_questionnaire

T = TypeVar("T")


class CatalogStatus(models.TextChoices):
    """A version uploaded by an organization is a draft (replaceable, deletable, usable by no
    assessment) until its owner publishes it; then it never changes. Shipped versions
    (`load_catalog`) are published at once."""

    DRAFT = "draft", _("Draft")
    PUBLISHED = "published", _("Published")


class PublishedCatalogVersion(models.Model):
    """A version of catalogue content (a questionnaire or a ruleset): the parsed YAML as it was
    loaded, and its hash, which `load_catalog` compares to refuse any change.

    `organization` is the owner of a custom catalogue (uploaded through the web); None for the
    shipped catalogue, which every organization sees. Which versions an organization may see and
    use is decided in one place: `questionnaires.selectors` (and `scoring.selectors` for
    rulesets)."""

    organization = models.ForeignKey(
        "accounts.Organization", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    status = models.CharField(
        max_length=10, choices=CatalogStatus.choices, default=CatalogStatus.PUBLISHED
    )
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

    @property
    def is_draft(self) -> bool:
        return self.status == CatalogStatus.DRAFT

    @property
    def english_only(self) -> bool:
        """Written in English only (see `questionnaires.spec.english_only`)."""
        return english_only(self.content)

    @property
    def is_custom(self) -> bool:
        """Uploaded by an organization (not the shipped catalogue)."""
        return self.organization_id is not None

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


def catalog_version_constraints(prefix: str) -> list[models.BaseConstraint]:
    """A `slug@version` names one version per owner: one among the shipped versions, one among
    each organization's. A shipped version is always published."""
    return [
        models.CheckConstraint(
            condition=models.Q(status=CatalogStatus.PUBLISHED)
            | models.Q(status=CatalogStatus.DRAFT, organization__isnull=False),
            name=f"{prefix}_status_valid",
        ),
        models.UniqueConstraint(
            fields=["slug", "version"],
            condition=models.Q(organization__isnull=True),
            name=f"unique_shipped_{prefix}_version",
        ),
        models.UniqueConstraint(
            fields=["organization", "slug", "version"],
            condition=models.Q(organization__isnull=False),
            name=f"unique_custom_{prefix}_version",
        ),
    ]


class QuestionnaireVersion(PublishedCatalogVersion):
    class Meta(PublishedCatalogVersion.Meta):
        constraints = catalog_version_constraints("questionnaire")

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


class CatalogueShare(models.Model):
    """An organization's custom questionnaire (every published version of its slug, with the
    owner's rulesets for it) shared with another organization, e.g. a consultant's client
    workspace. Revoking it (`revoked_at`) stops new assessments; assessments already made with
    it keep their questionnaire and are scored as before."""

    owner = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="catalogue_shares_given"
    )
    slug = models.SlugField(max_length=100)
    shared_with = models.ForeignKey(
        "accounts.Organization", on_delete=models.CASCADE, related_name="catalogue_shares_received"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "slug", "shared_with"],
                condition=models.Q(revoked_at__isnull=True),
                name="unique_active_catalogue_share",
            ),
            models.CheckConstraint(
                condition=~models.Q(owner=models.F("shared_with")),
                name="catalogue_share_not_with_owner",
            ),
        ]
        ordering = ["slug", "created_at"]

    def __str__(self) -> str:
        return f"{self.slug}: {self.owner_id} → {self.shared_with_id}"

    @property
    def active(self) -> bool:
        return self.revoked_at is None
