from django.urls import path

from accounts import two_factor_views, views

app_name = "accounts"

urlpatterns = [
    path("login/", views.LoginView.as_view(), name="login"),
    path("logout/", views.LogoutView.as_view(), name="logout"),
    path("password-reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path("password-reset/sent/", views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "password-reset/<uidb64>/<token>/",
        views.PasswordSetView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "invitation/<uidb64>/<token>/",
        views.InvitationAcceptView.as_view(),
        name="invitation_accept",
    ),
    path("password-set/", views.PasswordSetDoneView.as_view(), name="password_set_done"),
    path("two-factor/", two_factor_views.two_factor, name="two_factor"),
    path("two-factor/verify/", two_factor_views.two_factor_verify_view, name="two_factor_verify"),
    path(
        "two-factor/disable/",
        two_factor_views.two_factor_disable_view,
        name="two_factor_disable",
    ),
    path("", views.organizations, name="organizations"),
    path("switch/", views.switch, name="switch_organization"),
    path(
        "invitations/<id:invitation_id>/<str:answer>/",
        views.invitation_respond_view,
        name="invitation_respond",
    ),
    path("language/", views.set_language, name="set_language"),
    # Shortcuts to the current organization's pages, for navigation links.
    path("current/<str:page>/", views.current_organization_page, name="current_page"),
    path("orgs/<slug:organization_slug>/tokens/", views.tokens, name="tokens"),
    path(
        "orgs/<slug:organization_slug>/tokens/<id:token_id>/revoke/",
        views.token_revoke,
        name="token_revoke",
    ),
    path("orgs/<slug:organization_slug>/members/", views.members, name="members"),
    path(
        "orgs/<slug:organization_slug>/members/<id:membership_id>/role/",
        views.member_change_role,
        name="member_change_role",
    ),
    path(
        "orgs/<slug:organization_slug>/members/<id:membership_id>/remove/",
        views.member_remove,
        name="member_remove",
    ),
    path(
        "orgs/<slug:organization_slug>/two-factor/",
        two_factor_views.organization_two_factor,
        name="organization_two_factor",
    ),
    path("orgs/<slug:organization_slug>/branding/", views.branding, name="branding"),
    path("orgs/<slug:organization_slug>/logo/", views.logo, name="logo"),
]
