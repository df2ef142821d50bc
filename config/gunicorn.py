"""gunicorn settings: `gunicorn -c config/gunicorn.py` (what `make run` starts; docs/operations.md).

Everything can be overridden from the environment: HOST and PORT (or GUNICORN_BIND),
WEB_CONCURRENCY (worker processes), GUNICORN_THREADS, GUNICORN_TIMEOUT, TRUSTED_PROXIES.
"""

import multiprocessing
import os

wsgi_app = "config.wsgi:application"
# Loopback unless told otherwise: a reverse proxy (TLS) sits in front in production.
bind = os.environ.get("GUNICORN_BIND") or (
    f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
)
workers = int(os.environ.get("WEB_CONCURRENCY", min(2 * multiprocessing.cpu_count() + 1, 8)))
threads = int(os.environ.get("GUNICORN_THREADS", 2))
# Long enough for a 50 MB evidence upload to be stored and parsed; a stuck worker is replaced.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", 120))
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then, so a slow leak cannot grow without bound.
max_requests = 2000
max_requests_jitter = 200
# Request line and header limits stay at gunicorn's defaults (4094 bytes per line, 100 headers).
# Which proxies may say the request came over HTTPS (X-Forwarded-Proto); Django's
# SECURE_PROXY_SSL_HEADER and TRUSTED_PROXIES must agree with it.
forwarded_allow_ips = os.environ.get("TRUSTED_PROXIES", "127.0.0.1,::1")
# No runtime control socket: it would live at one path per user, shared by every instance.
control_socket_disable = True
accesslog = "-"
errorlog = "-"
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
