#!/usr/bin/env bash
# Runs every test: lint, then pytest (unit, integration with a real Redis and Celery worker,
# PDF and browser tests). Artefacts (screenshots, rendered pages) land in artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export DJANGO_SETTINGS_MODULE=config.settings
export AVIA_TEST_REDIS_PORT=${AVIA_TEST_REDIS_PORT:-6399}
export REDIS_URL="redis://127.0.0.1:${AVIA_TEST_REDIS_PORT}/0"
export MEDIA_ROOT="$PWD/var/test-media"
mkdir -p artifacts var

# Stop Redis at the end only if this run started it (another run may be sharing it). A Redis
# on the port that this checkout did not start is used as it is (and never stopped).
if ! redis-cli -p "$AVIA_TEST_REDIS_PORT" ping >/dev/null 2>&1; then
  if [[ $(scripts/redis.sh start "$AVIA_TEST_REDIS_PORT") == started ]]; then
    trap 'scripts/redis.sh stop "$AVIA_TEST_REDIS_PORT"' EXIT
  fi
fi

python manage.py compilemessages --ignore=.venv -v 0
ruff check .
ruff format --check .
lint-imports --no-cache >/dev/null || lint-imports --no-cache  # quiet when the contracts hold
mypy
python manage.py makemigrations --check --dry-run >/dev/null || {
  echo "error: models changed without a migration (run: python manage.py makemigrations)" >&2; exit 1; }
python -m pytest "$@"
