"""AVIA settings. Everything an operator may change comes from the environment.

Defaults run out of the box on SQLite with a local Redis; see the README for the list.
"""

import base64
import hashlib
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in env_str(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = env_str("SECRET_KEY", "avia-insecure-development-key-change-me-in-production")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000")

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "accounts",
    "questionnaires",
    "scoring",
    "assessments",
    "reports",
    "probes",
    "outbox",
    "portfolio",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
                "accounts.context_processors.organization",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and a worker share the file: wait for a lock instead of failing.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("timeout", 20)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hant", _("Traditional Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "Asia/Hong_Kong")
USE_I18N = True
FORMAT_MODULE_PATH = ["config.formats"]
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns on every request otherwise

# Evidence files and reports are private: MEDIA_ROOT is never served by URL, only
# through permission-checked views.
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(BASE_DIR / "var" / "media")))
EVIDENCE_MAX_BYTES = env_int("EVIDENCE_MAX_BYTES", 50 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024

VENDOR_LINK_DAYS = env_int("VENDOR_LINK_DAYS", 30)

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "AVIA <no-reply@avia.local>")
# An email the mail server refused is tried again after 1, 2, 4, … times this many seconds,
# up to OUTBOX_MAX_ATTEMPTS attempts in all; then it shows as failed in the outbox.
OUTBOX_RETRY_SECONDS = env_int("OUTBOX_RETRY_SECONDS", 60)
OUTBOX_MAX_ATTEMPTS = env_int("OUTBOX_MAX_ATTEMPTS", 6)

REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 300)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 240)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Rescore batches: assessments per chunk task (chunks are spread over every worker process), and
# how long a batch may go without progress before the sweeper queues its unfinished items again.
RESCORE_CHUNK_SIZE = env_int("RESCORE_CHUNK_SIZE", 25)
RESCORE_STALL_SECONDS = env_int("RESCORE_STALL_SECONDS", 120)
# Reminders (portfolio.reminders): a reassessment opens this many days before the vendor is due;
# vendor contacts are reminded this many days before their due date (and once when it has
# passed); risk acceptances are announced this many days before they expire; the weekly digest
# looks this far ahead.
RENEWAL_NOTICE_DAYS = env_int("RENEWAL_NOTICE_DAYS", 30)
REMINDER_DAYS_BEFORE_DUE = env_int("REMINDER_DAYS_BEFORE_DUE", 7)
RISK_ACCEPTANCE_NOTICE_DAYS = env_int("RISK_ACCEPTANCE_NOTICE_DAYS", 14)
DIGEST_HORIZON_DAYS = env_int("DIGEST_HORIZON_DAYS", 30)
# Celery beat (`celery -A config beat`, started by `make run`): the periodic work.
CELERY_BEAT_SCHEDULE = {
    "send-reminders": {
        "task": "portfolio.tasks.send_reminders",
        "schedule": float(env_int("REMINDER_SWEEP_SECONDS", 3600)),
        "options": {"expires": 600.0},
    },
    "resume-stalled-rescore-batches": {
        "task": "portfolio.tasks.resume_stalled_rescore_batches",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    "retry-due-emails": {
        "task": "outbox.tasks.retry_due_emails",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
}

# Shared by every web process (the vendor-link rate limit counts failures across them); the
# development server and tests use a per-process cache unless CACHE_URL is set.
CACHE_URL = env_str("CACHE_URL", "" if DEBUG else REDIS_URL.rsplit("/", 1)[0] + "/1")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
    if CACHE_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

# The isolation probe (probes/, README "The isolation probe"). Keys of the vendor's test
# tenants are encrypted at rest with Fernet; PROBE_KEYS_FERNET_KEY is a comma-separated list
# (the first encrypts, every one decrypts: add a new key in front to rotate).
PROBE_KEYS_FERNET_KEYS = env_list("PROBE_KEYS_FERNET_KEY", "")
if not PROBE_KEYS_FERNET_KEYS:
    if not DEBUG:
        raise ImproperlyConfigured(
            "PROBE_KEYS_FERNET_KEY is not set: production needs its own key to encrypt the "
            "probe's API keys at rest. Generate one with: python -c "
            '"from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
        )
    # Development: derived from SECRET_KEY, so the web process and every worker agree.
    PROBE_KEYS_FERNET_KEYS = [
        base64.urlsafe_b64encode(
            hashlib.sha256(b"avia-probe-keys:" + SECRET_KEY.encode()).digest()
        ).decode()
    ]
PROBE_ALLOW_HTTP = env_bool("PROBE_ALLOW_HTTP", False)  # plain http:// beyond loopback hosts
PROBE_BUDGET_TOKENS = env_int("PROBE_BUDGET_TOKENS", 3_000_000)
PROBE_RATE_PER_KEY = float(env_str("PROBE_RATE_PER_KEY", "2"))
PROBE_TIMEOUT_S = env_int("PROBE_TIMEOUT_S", 900)
PROBE_SAMPLES = env_int("PROBE_SAMPLES", 25)
PROBE_PREFIX_TOKENS = env_int("PROBE_PREFIX_TOKENS", 4096)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "AVIA API",
    "DESCRIPTION": "AI Vendor Isolation Assessment: questionnaires, assessments, findings, reports.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "AssessmentStatusEnum": "assessments.models.AssessmentStatus",
        "ReportStatusEnum": "reports.models.ReportStatus",
        "ProbeRunStatusEnum": "probes.models.ProbeRunStatus",
        "ChannelEnum": "assessments.models.Channel",
        "RescoreBatchStatusEnum": "portfolio.models.BatchStatus",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # WeasyPrint logs every layout step at INFO; httpx every request of the probe, which
    # logs its own (probes.client, at DEBUG).
    "loggers": {
        "weasyprint.progress": {"level": "WARNING"},
        "httpx": {"level": "WARNING"},
    },
}

if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
