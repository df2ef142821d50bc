#!/usr/bin/env bash
# make run: migrate, load the catalogue and the demo workspace, start Redis, a Celery worker and
# the web server. Stop with Ctrl-C (the worker and Redis stop with it).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export DJANGO_SETTINGS_MODULE=config.settings
PORT=${PORT:-8000}
REDIS_PORT=${REDIS_PORT:-6379}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:${REDIS_PORT}/0}
mkdir -p var

python manage.py compilemessages --ignore=.venv -v 0
python manage.py migrate --noinput -v 0
python manage.py load_catalog

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; scripts/redis.sh stop "$REDIS_PORT"; }
with_worker=0
if command -v redis-server >/dev/null && scripts/redis.sh start "$REDIS_PORT"; then
  trap cleanup EXIT INT TERM
  with_worker=1
else
  echo "WARNING: Redis is not available (install the Debian package redis-server)."
  echo "         Falling back to running scoring tasks in-process (CELERY_TASK_ALWAYS_EAGER=1)."
  export CELERY_TASK_ALWAYS_EAGER=1
fi

# The demo is scored in-process; started afterwards, the worker finds those runs done.
python manage.py load_demo
if [[ $with_worker == 1 ]]; then
  celery -A config worker --loglevel INFO --concurrency 2 >var/celery.log 2>&1 &
  pids+=($!)
  echo "Celery worker started (log: var/celery.log), broker $REDIS_URL"
fi

cat <<MSG

  AVIA is running:  http://127.0.0.1:${PORT}/
  Log in as         owner@demo.avia     (also assessor@, reviewer@, viewer@demo.avia)
  Password          avia-demo-2026
  API docs          http://127.0.0.1:${PORT}/api/docs/

MSG
python manage.py runserver "0.0.0.0:${PORT}"
