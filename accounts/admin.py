"""Admin registrations, used when django.contrib.admin is installed.

Tokens cannot be added here: a key must be shown to its owner once, which only the
UI and ``manage.py create_api_token`` do.
"""

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from accounts.models import ApiToken, Membership, Organization, User


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    ordering = ["email"]
    list_display = ["email", "first_name", "last_name", "is_active", "is_staff"]
    search_fields = ["email", "first_name", "last_name"]
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        (_("Personal info"), {"fields": ("first_name", "last_name", "preferred_language")}),
        (
            _("Permissions"),
            {"fields": ("is_active", "is_staff", "is_superuser", "groups", "user_permissions")},
        ),
        (_("Important dates"), {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    readonly_fields = ["created_at", "logo_content_type"]
    fields = [
        "name",
        "slug",
        "report_display_name",
        "brand_colour",
        "logo_content_type",
        "created_at",
    ]
    inlines = [MembershipInline]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "key_prefix",
        "user",
        "organization",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]
    list_filter = ["organization"]
    search_fields = ["name", "key_prefix", "user__email"]
    readonly_fields = [
        "user",
        "organization",
        "name",
        "key_prefix",
        "key_hash",
        "created_at",
        "last_used_at",
        "revoked_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
