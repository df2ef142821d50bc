"""AVIA settings. Everything an operator may change comes from the environment.

Defaults run out of the box on SQLite with a local Redis; see docs/operations.md for the list.
"""

import base64
import datetime as dt
import hashlib
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

# Settings kept in modules of their own, and settings here too (`X as X`: imported to be one).
from config.api_settings import REST_FRAMEWORK as REST_FRAMEWORK
from config.api_settings import SPECTACULAR_SETTINGS as SPECTACULAR_SETTINGS
from config.environment import env_bool, env_int, env_list, env_str
from config.file_storages import S3_TRANSFER as S3_TRANSFER
from config.file_storages import file_storage
from core.outbound import parse_networks

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", True)
DEVELOPMENT_SECRET_KEY = "avia-insecure-development-key-change-me-in-production"
SECRET_KEY = env_str("SECRET_KEY", DEVELOPMENT_SECRET_KEY)
if not DEBUG and SECRET_KEY == DEVELOPMENT_SECRET_KEY:
    # Sessions, password-reset links and CSRF tokens are signed with it: a published key lets
    # anyone forge a session. Refuse to run rather than warn.
    raise ImproperlyConfigured(
        "SECRET_KEY is the development key while DEBUG is false: set SECRET_KEY to a long random "
        "value (e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))')."
    )
# Django's own bar for a key (check --deploy's security.W009), refused rather than warned about.
SECRET_KEY_MIN_LENGTH, SECRET_KEY_MIN_UNIQUE_CHARACTERS = 50, 5
if not DEBUG and (
    len(SECRET_KEY) < SECRET_KEY_MIN_LENGTH
    or len(set(SECRET_KEY)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS
):
    raise ImproperlyConfigured(
        f"SECRET_KEY is too weak while DEBUG is false: it needs at least {SECRET_KEY_MIN_LENGTH} "
        f"characters, {SECRET_KEY_MIN_UNIQUE_CHARACTERS} of them different. Generate one with: "
        "python -c 'from django.core.management.utils import get_random_secret_key; "
        "print(get_random_secret_key())'"
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver")
# Hosts only this machine reaches (and the test client's): a site that names no other is not public.
LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "testserver"}
if DEBUG and "DEBUG" not in os.environ and set(ALLOWED_HOSTS) - LOCAL_HOSTS:
    # DEBUG is on by default for development on this machine. A deployment that names its
    # public host but forgot DEBUG=false would show tracebacks and settings to anyone, and sign
    # sessions with the published development key: refuse rather than serve it.
    raise ImproperlyConfigured(
        "DEBUG is on by default (development), but ALLOWED_HOSTS names "
        f"{', '.join(sorted(set(ALLOWED_HOSTS) - LOCAL_HOSTS))}: set DEBUG=false (and "
        "SECRET_KEY) to serve it, or DEBUG=true to debug on it deliberately."
    )
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000")

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    # Static files are served by WhiteNoise in development too (runserver --nostatic), so
    # DEBUG on and off behave alike.
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.forms",  # Django's own form templates, for the project's FORM_RENDERER
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "csp",
    "axes",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "core",
    "accounts",
    "sso",
    "questionnaires",
    "scoring",
    "assessments",
    "reports",
    "probes",
    "outbox",
    "webhooks",
    "notifications",
    "portfolio",
    "spreadsheets",
]

MIDDLEWARE = [
    "config.proxy.TrustedProxyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "config.middleware.PrivateResponsesMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "accounts.two_factor.TwoFactorRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "config.middleware.DatabaseBusyMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

# Content security policy (django-csp): every script, style, image, font and connection comes
# from this site, no inline script or style anywhere (htmx's own indicator styles are switched
# off; they live in avia.css), and no page may be framed. Nonce-free on purpose: nothing
# inline needs one.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "img-src": ["'self'", "data:"],  # the favicon placeholder and the inlined logo preview
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# Every form renders through the one field partial (label, help, error in one style):
# `{{ form }}`, `form.as_div` and `field.as_field_group` alike.
FORM_RENDERER = "core.forms.AviaFormRenderer"

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
                "notifications.context_processors.unread_notifications",
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
    # The web server and the workers share the file. WAL lets readers go on while one process
    # writes; IMMEDIATE takes the write lock when a transaction starts, where the busy timeout
    # applies (a deferred transaction that upgrades later fails at once with "database is
    # locked"); the timeout makes a writer wait its turn instead of failing. synchronous=NORMAL
    # is safe in WAL mode (no corruption; a power cut may lose the last commits).
    sqlite_options = DATABASES["default"].setdefault("OPTIONS", {})
    sqlite_options.setdefault("timeout", env_int("SQLITE_BUSY_TIMEOUT", 20))
    sqlite_options.setdefault("transaction_mode", "IMMEDIATE")
    sqlite_options.setdefault("init_command", "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

# Called with the user on each password sign-in; each may refuse it (ValidationError).
PASSWORD_SIGN_IN_CHECKS = ["sso.services.password_sign_in_check"]
AUTHENTICATION_BACKENDS = [
    # First, so that a locked-out account is refused before its password is even checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Sessions end after SESSION_AGE_HOURS since sign-in (and with the browser if asked).
SESSION_COOKIE_AGE = env_int("SESSION_AGE_HOURS", 12) * 3600
SESSION_EXPIRE_AT_BROWSER_CLOSE = env_bool("SESSION_EXPIRE_AT_BROWSER_CLOSE", False)

# Login throttling (django-axes): after AXES_FAILURE_LIMIT failed sign-ins to one account from
# one client address, that address is locked out of that account for LOGIN_LOCKOUT_MINUTES; the
# account stays open from every other address, so a guesser cannot lock its owner out. A client
# address that fails LOGIN_FAILURE_LIMIT_PER_ADDRESS sign-ins across accounts in that time is
# refused on every account (accounts.lockout). Failures are counted in the database, so the
# limits hold with Redis down and across web processes.
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = dt.timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
LOGIN_FAILURE_LIMIT_PER_ADDRESS = env_int("LOGIN_FAILURE_LIMIT_PER_ADDRESS", 50)
# axes.W006 warns that a lockout can be dodged by changing user agent or cookies; the lockout
# by account and address counts every attempt of the pair whatever they send.
# models.W040: SQLite ignores an index's INCLUDE columns (the dashboard's index covers the
# status on PostgreSQL, where it lets deep pages be read from the index alone).
SILENCED_SYSTEM_CHECKS = ["axes.W006", "models.W040"]
AXES_RESET_ON_SUCCESS = True
AXES_USERNAME_CALLABLE = "accounts.lockout.lockout_username"
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"
AXES_CLIENT_IP_CALLABLE = "config.proxy.client_address"
AXES_VERBOSE = False

# Emails anyone can make AVIA send, per hour (accounts.limits): per recipient address and per
# organization in the database, per client address in the cache (skipped while it is down).
RESET_LIMIT_PER_ADDRESS = env_int("RESET_LIMIT_PER_ADDRESS", 3)
RESET_LIMIT_PER_CLIENT = env_int("RESET_LIMIT_PER_CLIENT", 10)
INVITATION_LIMIT_PER_ADDRESS = env_int("INVITATION_LIMIT_PER_ADDRESS", 3)
INVITATION_LIMIT_PER_ORGANIZATION = env_int("INVITATION_LIMIT_PER_ORGANIZATION", 50)

# Two-factor authentication (django-otp): TOTP devices and one-time backup codes.
OTP_TOTP_ISSUER = env_str("OTP_TOTP_ISSUER", "AVIA")

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

# Where evidence files and reports live: one storage per kind, the same code for both backends
# (docs/operations.md, "Object storage"). By default the local disk under MEDIA_ROOT; with
# AVIA_STORAGE=s3, an S3-compatible object store shared by every host (no shared disk needed).
# Neither has a public address: files are streamed through permission-checked views.
AVIA_STORAGE = env_str("AVIA_STORAGE", "local")
if AVIA_STORAGE not in {"local", "s3"}:
    raise ImproperlyConfigured("AVIA_STORAGE must be 'local' or 's3'.")
AVIA_S3_PREFIX = env_str("AVIA_S3_PREFIX", "").strip("/")
# Each kind's options, and S3_TRANSFER (what a transfer holds in memory): config/file_storages.py.
STORAGES = {
    "default": {"BACKEND": "core.storage.PrivateFileStorage", "OPTIONS": {"subdirectory": ""}},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "evidence": file_storage("evidence", backend=AVIA_STORAGE, s3_prefix=AVIA_S3_PREFIX),
    "reports": file_storage("reports", backend=AVIA_STORAGE, s3_prefix=AVIA_S3_PREFIX),
}
if AVIA_STORAGE == "s3" and not STORAGES["evidence"]["OPTIONS"]["bucket_name"]:
    raise ImproperlyConfigured("AVIA_STORAGE=s3 needs AVIA_S3_BUCKET.")
EVIDENCE_MAX_BYTES = env_int("EVIDENCE_MAX_BYTES", 50 * 1024 * 1024)
# Questionnaire workbooks (spreadsheets): the upload, and the most its zip archive may unpack to.
WORKBOOK_MAX_BYTES = env_int("WORKBOOK_MAX_BYTES", 5 * 1024 * 1024)
WORKBOOK_MAX_UNPACKED_BYTES = env_int("WORKBOOK_MAX_UNPACKED_BYTES", 50 * 1024 * 1024)
# Request bodies other than file uploads (JSON, form fields) are refused above this size, and
# forms above this many fields; JSON is also refused nested deeper than API_JSON_MAX_DEPTH.
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 5 * 1024 * 1024)
DATA_UPLOAD_MAX_NUMBER_FIELDS = 1000
DATA_UPLOAD_MAX_NUMBER_FILES = 20
API_JSON_MAX_DEPTH = 32
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
# A multipart body above this is refused before it is read (config/uploads.py): several times
# the largest upload, so that a file somewhat over its own limit gets the message naming it.
REQUEST_MAX_BYTES = env_int("REQUEST_MAX_BYTES", 4 * max(EVIDENCE_MAX_BYTES, WORKBOOK_MAX_BYTES))
FILE_UPLOAD_HANDLERS = [
    "config.uploads.BoundedUploadHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

VENDOR_LINK_DAYS = env_int("VENDOR_LINK_DAYS", 30)

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "AVIA <no-reply@avia.local>")
# The mail server of the SMTP backend (Django's EMAIL_* settings, read from the environment).
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
# Seconds the mail server may take per email: one that stops answering must not hold a worker
# until the task's limit, nor keep an email claimed past the outbox's claim (5 minutes) while
# another sender takes it over.
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 30)
# An email the mail server refused is tried again after 1, 2, 4, … times this many seconds,
# up to OUTBOX_MAX_ATTEMPTS attempts in all; then it shows as failed in the outbox.
OUTBOX_RETRY_SECONDS = env_int("OUTBOX_RETRY_SECONDS", 60)
OUTBOX_MAX_ATTEMPTS = env_int("OUTBOX_MAX_ATTEMPTS", 6)
# Webhooks (webhooks/, docs/operations.md): a delivery the receiver did not take with a 2xx is
# tried again after 1, 2, 4, … times WEBHOOK_RETRY_SECONDS, up to WEBHOOK_MAX_ATTEMPTS
# attempts in all (8: about four hours with the default). Endpoints must be public https://
# addresses unless WEBHOOK_ALLOWED_NETWORKS lists theirs (CIDRs, e.g. 10.20.0.0/16 for a
# receiver inside the company's network; the demo and the tests allow 127.0.0.0/8).
WEBHOOK_RETRY_SECONDS = env_int("WEBHOOK_RETRY_SECONDS", 60)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 8)
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 10)
WEBHOOK_ALLOWED_NETWORKS = env_list("WEBHOOK_ALLOWED_NETWORKS", "")
# Single sign-on (sso/, docs/sso.md): the issuer an owner enters, and the token and key endpoints
# its discovery document names, are reached through the same policy (core.outbound); internal
# addresses only when listed here (CIDRs, e.g. 10.20.0.0/16 for a provider inside the company's
# network; the demo and the tests allow 127.0.0.0/8).
try:
    SSO_ALLOWED_NETWORKS = parse_networks(env_list("SSO_ALLOWED_NETWORKS", ""))
except ValueError as exc:
    raise ImproperlyConfigured(f"SSO_ALLOWED_NETWORKS: {exc}") from exc

REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/0")
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 300)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 240)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# The queue tasks are sent to (and a worker consumes unless told otherwise with --queues).
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "celery")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A message taken by a worker that then dies (SIGKILL, power loss) is handed out again once it
# has been unacknowledged this long; Redis is checked for such messages every 5 s. Longer tasks
# may be delivered twice, which the tasks are built for (idempotent, one result).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 60),
    "unacked_restore_interval": 5,
    "unacked_restore_throttle": 1,
    "socket_timeout": 10,
    "socket_connect_timeout": 3,
}
# Running tasks whose broker connection is lost are redelivered anyway: stop them.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
# The sweeper (reports.sweeper) re-queues scoring runs and reports the broker lost: queued for
# longer than SWEEPER_QUEUED_AFTER seconds, or running longer than their task's time limit.
SWEEPER_INTERVAL = env_int("SWEEPER_INTERVAL", 30)
SWEEPER_QUEUED_AFTER = env_int("SWEEPER_QUEUED_AFTER", 60)
# Celery beat (`celery -A config beat`, started by `make run`): the periodic work.
CELERY_BEAT_SCHEDULE = {
    "requeue-stuck-work": {
        "task": "reports.sweeper.requeue_stuck_task",
        "schedule": float(SWEEPER_INTERVAL),
        "options": {"expires": float(SWEEPER_INTERVAL)},
    },
    "resume-stalled-rescore-batches": {
        "task": "portfolio.tasks.resume_stalled_rescore_batches",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    "fail-abandoned-probe-runs": {
        "task": "probes.tasks.fail_abandoned_probe_runs",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    "retry-due-emails": {
        "task": "outbox.tasks.retry_due_emails",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    "retry-due-webhooks": {
        "task": "webhooks.tasks.retry_due_webhooks",
        "schedule": 60.0,
        "options": {"expires": 60.0},
    },
    "send-reminders": {
        "task": "portfolio.tasks.send_reminders",
        "schedule": float(env_int("REMINDER_SWEEP_SECONDS", 3600)),
        "options": {"expires": 600.0},
    },
}
# Each worker refreshes a key in Redis every WORKER_HEARTBEAT_INTERVAL s; /healthz reads them.
WORKER_HEARTBEAT_INTERVAL = env_int("WORKER_HEARTBEAT_INTERVAL", 10)
# Rescore batches: assessments per chunk task (chunks are spread over every worker process), and
# how long a batch may go without progress before the sweeper queues its unfinished items again.
RESCORE_CHUNK_SIZE = env_int("RESCORE_CHUNK_SIZE", 100)
RESCORE_STALL_SECONDS = env_int("RESCORE_STALL_SECONDS", 120)
# Reminders (portfolio.reminders): a reassessment opens this many days before the vendor is due;
# vendor contacts are reminded this many days before their due date (and once when it has
# passed); risk acceptances are announced this many days before they expire; the weekly digest
# looks this far ahead.
RENEWAL_NOTICE_DAYS = env_int("RENEWAL_NOTICE_DAYS", 30)
REMINDER_DAYS_BEFORE_DUE = env_int("REMINDER_DAYS_BEFORE_DUE", 7)
RISK_ACCEPTANCE_NOTICE_DAYS = env_int("RISK_ACCEPTANCE_NOTICE_DAYS", 14)
DIGEST_HORIZON_DAYS = env_int("DIGEST_HORIZON_DAYS", 30)
# A question to the vendor (a clarification thread) unanswered this long is reminded, once.
THREAD_REMINDER_DAYS = env_int("THREAD_REMINDER_DAYS", 3)

# Shared by every web process (the vendor-link rate limit counts failures across them); the
# development server and tests use a per-process cache unless CACHE_URL is set.
CACHE_URL = env_str("CACHE_URL", "" if DEBUG else REDIS_URL.rsplit("/", 1)[0] + "/1")
# A cache that stops answering reads as a miss (core.cache) within a second, not a hung page.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": CACHE_URL,
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }
    if CACHE_URL
    else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
}

# The isolation probe (probes/, docs/probe.md). Keys of the vendor's test
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
PROBE_ALLOW_HTTP = env_bool("PROBE_ALLOW_HTTP", False)  # plain http:// to any host it may reach
# The probe reaches public addresses only (core.outbound): loopback, private, link-local,
# unique-local and cloud metadata addresses are refused unless listed here (CIDRs,
# comma-separated). The demo and the tests list 127.0.0.0/8 (their reference vendor runs there),
# which also lets plain http:// reach it.
try:
    PROBE_ALLOWED_NETWORKS = parse_networks(env_list("PROBE_ALLOWED_NETWORKS", ""))
except ValueError as exc:
    raise ImproperlyConfigured(f"PROBE_ALLOWED_NETWORKS: {exc}") from exc
PROBE_BUDGET_TOKENS = env_int("PROBE_BUDGET_TOKENS", 3_000_000)
PROBE_RATE_PER_KEY = float(env_str("PROBE_RATE_PER_KEY", "2"))
PROBE_TIMEOUT_S = env_int("PROBE_TIMEOUT_S", 900)
PROBE_SAMPLES = env_int("PROBE_SAMPLES", 40)  # the most per design (sequential sampling)
PROBE_PREFIX_TOKENS = env_int("PROBE_PREFIX_TOKENS", 4096)

# The API (REST_FRAMEWORK, SPECTACULAR_SETTINGS) is set up in config/api_settings.py.

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

# -- behind HTTPS and a reverse proxy (see docs/operations.md, "Deploying") ------------------
if not DEBUG:
    SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
    CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", True)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # load balancers probe over plain HTTP
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# The proxy's header saying the client used HTTPS, as NAME=VALUE (e.g. X-Forwarded-Proto=https);
# set it only when the proxy always sets (or strips) that header.
if proxy_ssl_header := env_str("SECURE_PROXY_SSL_HEADER", ""):
    header_name, _separator, header_value = proxy_ssl_header.partition("=")
    SECURE_PROXY_SSL_HEADER = (
        "HTTP_" + header_name.strip().upper().replace("-", "_"),
        header_value.strip(),
    )
USE_X_FORWARDED_HOST = env_bool("USE_X_FORWARDED_HOST", False)
# Addresses (or networks) of reverse proxies allowed to name the client in X-Forwarded-For;
# config.proxy.TrustedProxyMiddleware then puts the client's address in REMOTE_ADDR, which the
# login lockout and the vendor-link limit count by.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")
