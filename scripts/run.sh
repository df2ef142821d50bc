#!/usr/bin/env bash
# make run: migrate, load the catalogue and the demo workspace, start Redis, a Celery worker,
# Celery beat (the sweeper) and the web server (gunicorn, config/gunicorn.py). Stop with Ctrl-C:
# what this script started stops with it, and nothing else (a Redis it found running stays).
#
#   HOST=127.0.0.1 PORT=8000   where the web server listens (loopback unless told otherwise)
#   DEBUG=true                 Django's debug pages (off by default, as in production)
#   REDIS_PORT=6379            the preferred port of this checkout's own Redis
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export DJANGO_SETTINGS_MODULE=config.settings
export HOST=${HOST:-127.0.0.1}
export PORT=${PORT:-8000}
export DEBUG=${DEBUG:-false}
export WEB_CONCURRENCY=${WEB_CONCURRENCY:-2}   # gunicorn worker processes
url_host=$HOST; [[ $HOST == *:* ]] && url_host="[$HOST]"   # an IPv6 address in a URL
export SITE_URL=${SITE_URL:-http://${url_host}:${PORT}}
export ALLOWED_HOSTS=${ALLOWED_HOSTS:-localhost,127.0.0.1,[::1],${url_host}}
# Plain HTTP on this machine: cookies must not require HTTPS here (they do in production).
export SECURE_COOKIES=${SECURE_COOKIES:-false}
# The demo's reference vendor listens on loopback: the probe may reach it (and only it, of this
# machine's and this network's addresses: core.outbound).
export PROBE_ALLOWED_NETWORKS=${PROBE_ALLOWED_NETWORKS:-127.0.0.0/8}
# Webhooks to a receiver on this machine (docs/webhooks.md), as the demo shows them.
export WEBHOOK_ALLOWED_NETWORKS=${WEBHOOK_ALLOWED_NETWORKS:-127.0.0.0/8}
# Single sign-on to an OpenID provider on this machine (a local Keycloak, docs/sso.md).
export SSO_ALLOWED_NETWORKS=${SSO_ALLOWED_NETWORKS:-127.0.0.0/8}
mkdir -p var

# A secret key of this checkout's own (never the development key), kept under var/.
if [[ -z "${SECRET_KEY:-}" ]]; then
  if [[ ! -s var/secret-key ]]; then
    (umask 077; python -c 'import secrets; print(secrets.token_urlsafe(50))' >var/secret-key)
  fi
  SECRET_KEY=$(cat var/secret-key); export SECRET_KEY
fi
# Likewise the key that encrypts the probe's test-tenant API keys at rest (settings refuse to
# start without one when DEBUG is off).
if [[ -z "${PROBE_KEYS_FERNET_KEY:-}" ]]; then
  if [[ ! -s var/probe-keys-fernet-key ]]; then
    (umask 077; python -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())' >var/probe-keys-fernet-key)
  fi
  PROBE_KEYS_FERNET_KEY=$(cat var/probe-keys-fernet-key); export PROBE_KEYS_FERNET_KEY
fi

pids=()
redis_started=0
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ $redis_started == 1 ]]; then scripts/redis.sh stop "$REDIS_PORT"; fi
}
trap cleanup EXIT INT TERM

# Redis: this checkout's own, reused if it is already running; a port taken by anything else
# (e.g. Debian's system Redis on 6379) is left alone and a free port is used instead.
with_worker=0
if [[ -z "${REDIS_URL:-}" ]] && command -v redis-server >/dev/null; then
  REDIS_PORT=${REDIS_PORT:-6379}
  for _ in 1 2 3; do
    if state=$(scripts/redis.sh start "$REDIS_PORT" 2>/dev/null); then
      [[ $state == started ]] && redis_started=1
      with_worker=1
      break
    fi
    REDIS_PORT=$(python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  done
  export REDIS_URL=redis://127.0.0.1:${REDIS_PORT}/0
elif [[ -n "${REDIS_URL:-}" ]]; then
  with_worker=1
fi
if [[ $with_worker == 0 ]]; then
  echo "WARNING: Redis is not available (install the Debian package redis-server)."
  echo "         Falling back to running scoring tasks in-process (CELERY_TASK_ALWAYS_EAGER=1)."
  export CELERY_TASK_ALWAYS_EAGER=1
fi

python manage.py compilemessages --ignore=.venv -v 0
python manage.py migrate --noinput -v 0
python manage.py collectstatic --noinput -v 0
python manage.py load_catalog

# Two reference vendors (probes/reference_vendor.py) on private loopback ports, for the demo's
# isolation probes: one as the incident's launch day, one remediated. They stop with the rest.
free_port() { python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
declare -A vendor_urls
for mode in launch-day remediated; do
  port=$(free_port)
  python -m probes.reference_vendor --mode "$mode" --host 127.0.0.1 --port "$port" \
    >"var/reference-vendor-$mode.log" 2>&1 &
  pids+=($!)
  vendor_urls[$mode]="http://127.0.0.1:$port"
  for _ in $(seq 50); do
    grep -q "listening on" "var/reference-vendor-$mode.log" 2>/dev/null && break
    sleep 0.1
  done
done
echo "Reference vendors: launch-day ${vendor_urls[launch-day]}, remediated ${vendor_urls[remediated]}"

# The demo is scored (and probed) in-process; started afterwards, the worker finds it done.
# Its accounts get the published password only while no other machine reaches the site
# (ALLOWED_HOSTS): otherwise a random one, which the command prints and this banner repeats.
# Listening beyond loopback (HOST, or GUNICORN_BIND) also means other machines reach it, even
# with ALLOWED_HOSTS left local (any client can send "Host: localhost").
demo_args=()
case "${GUNICORN_BIND:-$HOST}" in
  127.*|localhost|localhost:*|::1|\[::1\]*) ;;
  *) demo_args=(--password "$(python -c 'import secrets; print(secrets.token_urlsafe(12))')") ;;
esac
demo_output=$(python manage.py load_demo --launch-day-vendor "${vendor_urls[launch-day]}" \
  --remediated-vendor "${vendor_urls[remediated]}" "${demo_args[@]}")
printf '%s\n' "$demo_output"
# The demo organization's own questionnaire (hk-genai-provider v1), loaded the way an
# organization loads one, with a scored example assessment and its PDF in both languages.
python manage.py load_demo_catalogue
demo_password=$(printf '%s\n' "$demo_output" | sed -n 's/^demo password: //p' | tail -n 1)
if [[ $with_worker == 1 ]]; then
  celery -A config worker --loglevel INFO --concurrency 2 >var/celery.log 2>&1 &
  pids+=($!)
  celery -A config beat --loglevel INFO --schedule var/celerybeat-schedule >var/celery-beat.log 2>&1 &
  pids+=($!)
  echo "Celery worker and beat started (logs: var/celery.log, var/celery-beat.log), broker $REDIS_URL"
fi

cat <<MSG

  AVIA is running:  ${SITE_URL}/
  Log in as         owner@demo.avia     (also assessor@, reviewer@, viewer@demo.avia)
  Password          ${demo_password}
  API docs          ${SITE_URL}/api/docs/

MSG
gunicorn -c config/gunicorn.py &
pids+=($!)
wait "${pids[-1]}"
