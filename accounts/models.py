import base64
import datetime as dt
from zoneinfo import ZoneInfo

from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.db import models
from django.db.models.functions import Length, Lower
from django.db.models.lookups import Exact, LessThanOrEqual
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.roles import Role
from accounts.validators import (
    BRAND_COLOUR_PATTERN,
    DEFAULT_TIME_ZONE,
    LOGO_MAX_BYTES,
    PNG_CONTENT_TYPE,
    SVG_CONTENT_TYPE,
    validate_brand_colour,
    validate_time_zone,
)


class UserManager(BaseUserManager["User"]):
    """Users log in with their email address; there is no separate username."""

    use_in_migrations = True

    def _create_user(self, email: str, password: str | None, **extra: object) -> "User":
        if not email:
            raise ValueError("An email address is required.")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(self, email: str, password: str | None = None, **extra: object) -> "User":
        extra.setdefault("is_staff", False)
        extra.setdefault("is_superuser", False)
        return self._create_user(email, password, **extra)

    def create_superuser(self, email: str, password: str | None = None, **extra: object) -> "User":
        extra["is_staff"] = True
        extra["is_superuser"] = True
        return self._create_user(email, password, **extra)


class User(AbstractUser):
    username = None  # type: ignore[assignment]
    email = models.EmailField(_("email address"), unique=True)
    preferred_language = models.CharField(
        _("preferred language"),
        max_length=10,
        choices=[("en", "English"), ("zh-hant", "繁體中文")],
        default="en",
    )

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []

    objects = UserManager()  # type: ignore[misc]

    def __str__(self) -> str:
        return self.get_full_name() or self.email


class LogoContentType(models.TextChoices):
    PNG = PNG_CONTENT_TYPE, "PNG"
    SVG = SVG_CONTENT_TYPE, "SVG"


class OrganizationKind(models.TextChoices):
    """What an organization is. A consultancy opens client workspaces (each an organization of
    its own, recorded by a `ClientEngagement`) and prepares their reports."""

    ORGANIZATION = "organization", _("Organization")
    CONSULTANCY = "consultancy", _("Consultancy")


class Organization(models.Model):
    """A tenant: every assessment, vendor and report belongs to exactly one."""

    name = models.CharField(_("name"), max_length=200, unique=True)
    slug = models.SlugField(_("slug"), max_length=200, unique=True)
    report_display_name = models.CharField(
        _("name shown on reports"),
        max_length=200,
        blank=True,
        help_text=_("Leave empty to use the organization's name."),
    )
    # Kept in the database rather than MEDIA_ROOT: it is small (at most 1 MB), private
    # to the organization, and must travel with the row into PDF rendering.
    logo = models.BinaryField(_("logo"), null=True, blank=True, editable=False)
    logo_content_type = models.CharField(
        _("logo content type"), max_length=20, choices=LogoContentType.choices, blank=True
    )
    brand_colour = models.CharField(
        _("brand colour"), max_length=7, blank=True, validators=[validate_brand_colour]
    )
    require_two_factor = models.BooleanField(
        _("require two-factor sign-in"),
        default=False,
        help_text=_("Members reach this organization only after a second factor."),
    )
    # Every time the app shows (pages, reports, emails, exports) is in this zone.
    time_zone = models.CharField(
        _("time zone"),
        max_length=64,
        default=DEFAULT_TIME_ZONE,
        validators=[validate_time_zone],
        help_text=_("An IANA time zone name, e.g. Asia/Hong_Kong."),
    )
    kind = models.CharField(
        _("kind"),
        max_length=20,
        choices=OrganizationKind.choices,
        default=OrganizationKind.ORGANIZATION,
    )
    # The name and reply-to address of the organization's emails; the envelope sender stays
    # the operator's DEFAULT_FROM_EMAIL (its domain is the one the mail server may send for).
    email_sender_name = models.CharField(
        _("email sender name"),
        max_length=100,
        blank=True,
        help_text=_("Leave empty to use the name shown on reports."),
    )
    email_reply_to = models.EmailField(
        _("reply-to address"),
        blank=True,
        help_text=_("Replies to the organization's emails go here. Leave empty for none."),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("organization")
        verbose_name_plural = _("organizations")
        constraints = [
            models.UniqueConstraint(Lower("name"), name="accounts_organization_name_ci_unique"),
            models.CheckConstraint(
                condition=~models.Q(name="") & ~models.Q(slug=""),
                name="accounts_organization_name_slug_not_empty",
            ),
            models.CheckConstraint(
                condition=models.Q(brand_colour="")
                | models.Q(brand_colour__regex=BRAND_COLOUR_PATTERN),
                name="accounts_organization_brand_colour_hex",
            ),
            models.CheckConstraint(
                condition=(models.Q(logo__isnull=True) & models.Q(logo_content_type=""))
                | (
                    models.Q(logo__isnull=False)
                    & models.Q(logo_content_type__in=LogoContentType.values)
                ),
                name="accounts_organization_logo_has_content_type",
            ),
            models.CheckConstraint(
                condition=models.Q(logo__isnull=True)
                | LessThanOrEqual(Length("logo"), LOGO_MAX_BYTES),
                name="accounts_organization_logo_max_size",
            ),
            models.CheckConstraint(
                condition=models.Q(kind__in=OrganizationKind.values),
                name="accounts_organization_kind_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def display_name(self) -> str:
        return self.report_display_name or self.name

    def local_date(self, moment: dt.datetime | None = None) -> dt.date:
        """The date on the organization's clock at `moment` (now by default). "Today",
        "overdue" and dates counted from an event are read on it wherever the code runs: a
        page, the API, a worker or the reminder sweep (their own clocks may differ)."""
        return timezone.localdate(moment, ZoneInfo(self.time_zone))

    @property
    def has_logo(self) -> bool:
        return bool(self.logo_content_type)

    @property
    def logo_data_uri(self) -> str | None:
        """The logo inlined as a data: URI (None without one), for the outputs that must fetch
        nothing: the PDF renderer, and the vendor portal's header (no route reaches the logo
        with a vendor's link)."""
        if not (self.has_logo and self.logo):
            return None
        encoded = base64.b64encode(bytes(self.logo)).decode("ascii")
        return f"data:{self.logo_content_type};base64,{encoded}"

    @property
    def is_consultancy(self) -> bool:
        return self.kind == OrganizationKind.CONSULTANCY

    def prepared_by(self) -> "Organization | None":
        """The consultancy that prepares this organization's outputs ("prepared by …" on its
        reports, emails and vendor pages): the one whose engagement is active, else None. Its
        logo is read when asked for (a page that only names it does not load it)."""
        return (
            Organization.objects.filter(
                client_engagements__client=self, client_engagements__ended_at__isnull=True
            )
            .defer("logo")
            .first()
        )

    @property
    def email_sender(self) -> str:
        """The name the organization's emails come from (the address stays the operator's)."""
        return self.email_sender_name or self.display_name


class ClientEngagement(models.Model):
    """A client workspace opened by a consultancy: the client is an organization of its own
    (its data is reached only through its own memberships, like any organization's), and this
    row records who opened it. While it is active (`ended_at` is null) the client's outputs say
    "prepared by <consultancy>"; the client can end it, which ends the consultancy members'
    memberships in the client. A client workspace is opened once: one row per client, kept
    after it ends."""

    consultancy = models.ForeignKey(
        Organization,
        on_delete=models.CASCADE,
        related_name="client_engagements",
        verbose_name=_("consultancy"),
    )
    client = models.OneToOneField(
        Organization,
        on_delete=models.CASCADE,
        related_name="consultancy_engagement",
        verbose_name=_("client"),
    )
    opened_by = models.ForeignKey(
        User, on_delete=models.SET_NULL, null=True, related_name="+", verbose_name=_("opened by")
    )
    opened_at = models.DateTimeField(_("opened at"), auto_now_add=True)
    ended_at = models.DateTimeField(_("ended at"), null=True, blank=True)
    ended_by = models.ForeignKey(
        User,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("ended by"),
    )

    class Meta:
        ordering = ["client__name"]
        verbose_name = _("client engagement")
        verbose_name_plural = _("client engagements")
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(consultancy=models.F("client")),
                name="accounts_engagement_not_own_client",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.consultancy_id} for {self.client_id}"

    @property
    def is_active(self) -> bool:
        return self.ended_at is None


class Membership(models.Model):
    """A user's one role in one organization; consultants hold several memberships."""

    user = models.ForeignKey(
        User, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("user")
    )
    organization = models.ForeignKey(
        Organization,
        on_delete=models.CASCADE,
        related_name="memberships",
        verbose_name=_("organization"),
    )
    role = models.CharField(_("role"), max_length=20, choices=Role.choices)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        constraints = [
            models.UniqueConstraint(
                fields=["user", "organization"], name="accounts_membership_one_per_user_and_org"
            ),
            models.CheckConstraint(
                condition=models.Q(role__in=Role.values), name="accounts_membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.organization} ({self.role})"


class MembershipInvitation(models.Model):
    """An organization's offer of a role to a user who already has an account: it binds them
    only once they accept it in the app (issue 28: another organization's owner could bind a
    user without asking, then require two-factor of them)."""

    user = models.ForeignKey(
        User, on_delete=models.CASCADE, related_name="invitations", verbose_name=_("user")
    )
    organization = models.ForeignKey(
        Organization,
        on_delete=models.CASCADE,
        related_name="invitations",
        verbose_name=_("organization"),
    )
    role = models.CharField(_("role"), max_length=20, choices=Role.choices)
    invited_by = models.ForeignKey(
        User, on_delete=models.SET_NULL, null=True, related_name="+", verbose_name=_("invited by")
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("membership invitation")
        verbose_name_plural = _("membership invitations")
        constraints = [
            models.UniqueConstraint(
                fields=["user", "organization"], name="accounts_invitation_one_per_user_and_org"
            ),
            models.CheckConstraint(
                condition=models.Q(role__in=Role.values), name="accounts_invitation_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} invited to {self.organization} ({self.role})"


# Tokens look like "avia_" + secrets.token_urlsafe(32); lists show the first 8 characters.
TOKEN_KEY_PREFIX = "avia_"
TOKEN_DISPLAY_PREFIX_LENGTH = 8


class ApiToken(models.Model):
    """A personal API token acting for one user within one organization.

    Only the SHA-256 of the key is stored; the key is shown once, when it is created.
    """

    user = models.ForeignKey(
        User, on_delete=models.CASCADE, related_name="api_tokens", verbose_name=_("user")
    )
    organization = models.ForeignKey(
        Organization,
        on_delete=models.CASCADE,
        related_name="api_tokens",
        verbose_name=_("organization"),
    )
    name = models.CharField(_("name"), max_length=100)
    key_prefix = models.CharField(_("key prefix"), max_length=TOKEN_DISPLAY_PREFIX_LENGTH)
    key_hash = models.CharField(_("key hash"), max_length=64, unique=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    last_used_at = models.DateTimeField(_("last used at"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")
        indexes = [models.Index(fields=["user", "organization"], name="accounts_token_user_org")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(key_hash__regex=r"^[0-9a-f]{64}$"),
                name="accounts_apitoken_key_hash_sha256_hex",
            ),
            models.CheckConstraint(
                condition=models.Q(key_prefix__startswith=TOKEN_KEY_PREFIX)
                & Exact(Length("key_prefix"), TOKEN_DISPLAY_PREFIX_LENGTH),
                name="accounts_apitoken_key_prefix_shape",
            ),
            models.CheckConstraint(
                condition=~models.Q(name=""), name="accounts_apitoken_name_not_empty"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.key_prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
