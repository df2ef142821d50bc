#!/usr/bin/env bash
# Runs every test: lint, then pytest on SQLite (unit, integration with a real Redis and Celery
# worker, PDF and browser tests) and, beside it, the migrations, integration, API, permission
# and query plan tests on a private PostgreSQL cluster (scripts/postgres.sh). The two passes
# run at the same time — one pytest process leaves the second core mostly idle — each with
# its own Redis (the fault tests stop and start theirs) and its own media directory; the
# PostgreSQL pass's output follows the SQLite pass's. Artefacts (screenshots, rendered pages,
# worker logs) land in artifacts/. Arguments go to the SQLite pytest run and skip the
# PostgreSQL one (a targeted run); AVIA_TEST_POSTGRES=0 skips it too.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export DJANGO_SETTINGS_MODULE=config.settings
export AVIA_TEST_REDIS_PORT=${AVIA_TEST_REDIS_PORT:-6399}
export REDIS_URL="redis://127.0.0.1:${AVIA_TEST_REDIS_PORT}/0"
# A port of its own beside each Redis port, so parallel checkouts do not share a cluster.
export AVIA_TEST_POSTGRES_PORT=${AVIA_TEST_POSTGRES_PORT:-$((AVIA_TEST_REDIS_PORT + 9000))}
export MEDIA_ROOT="$PWD/var/test-media"
mkdir -p artifacts var

# What this run started, stopped when it ends (another run may be sharing the rest). A Redis
# on the port that this checkout did not start is used as it is (and never stopped).
cleanup=()
trap 'for command in "${cleanup[@]}"; do $command; done' EXIT
if ! redis-cli -p "$AVIA_TEST_REDIS_PORT" ping >/dev/null 2>&1; then
  if [[ $(scripts/redis.sh start "$AVIA_TEST_REDIS_PORT") == started ]]; then
    cleanup+=("scripts/redis.sh stop $AVIA_TEST_REDIS_PORT")
  fi
fi

python manage.py compilemessages --ignore=.venv -v 0
ruff check .
ruff format --check .
lint-imports --no-cache >/dev/null || lint-imports --no-cache  # quiet when the contracts hold
mypy

# Every migration applies from an empty database, on both databases.
check_migrations() {
  DATABASE_URL=$1 python manage.py makemigrations --check --dry-run >/dev/null || {
    echo "error: models changed without a migration (run: python manage.py makemigrations)" >&2
    exit 1; }
  DATABASE_URL=$1 python manage.py migrate -v 0
}
rm -f var/migrate-check.sqlite3
check_migrations "sqlite:///$PWD/var/migrate-check.sqlite3"
rm -f var/migrate-check.sqlite3

postgres=${AVIA_TEST_POSTGRES:-1}
if [[ $# -gt 0 ]]; then postgres=0; fi
if [[ $postgres == 1 ]]; then
  set +e; scripts/postgres.sh start "$AVIA_TEST_POSTGRES_PORT"; status=$?; set -e
  case $status in
    0) cleanup+=("scripts/postgres.sh stop $AVIA_TEST_POSTGRES_PORT") ;;
    3) postgres=0 ;;  # not installed: postgres.sh said so loudly
    *) exit "$status" ;;
  esac
fi

postgres_pid=""
postgres_log=var/test-postgres.log
if [[ $postgres == 1 ]]; then
  postgres_url=$(scripts/postgres.sh url "$AVIA_TEST_POSTGRES_PORT")
  psql -q "${postgres_url%/*}/postgres" -c "DROP DATABASE IF EXISTS avia_migrate_check" \
    -c "CREATE DATABASE avia_migrate_check"
  check_migrations "${postgres_url%/*}/avia_migrate_check"
  # Its own Redis, started (and stopped) like the first one.
  postgres_redis_port=${AVIA_TEST_POSTGRES_REDIS_PORT:-$((AVIA_TEST_REDIS_PORT + 1000))}
  if [[ $(scripts/redis.sh start "$postgres_redis_port") == started ]]; then
    cleanup+=("scripts/redis.sh stop $postgres_redis_port")
  fi
  DATABASE_URL=$postgres_url AVIA_TEST_REDIS_PORT=$postgres_redis_port \
    REDIS_URL="redis://127.0.0.1:${postgres_redis_port}/0" MEDIA_ROOT="$PWD/var/test-media-postgres" \
    setsid -w python -m pytest -p no:cacheprovider tests/integration tests/api \
    tests/test_permission_matrix.py tests/scale >"$postgres_log" 2>&1 &
  postgres_pid=$!
  # An interrupted run stops that pass and what it started (its own process group: setsid),
  # before the cleanup above stops the servers.
  cleanup=("kill_postgres_pass" "${cleanup[@]}")
fi
kill_postgres_pass() {
  if [[ -n $postgres_pid ]]; then
    kill -TERM -- "-$postgres_pid" 2>/dev/null || kill -TERM "$postgres_pid" 2>/dev/null || true
  fi
}

set +e; python -m pytest "$@"; sqlite_status=$?; set -e

if [[ $postgres == 1 ]]; then
  set +e; wait "$postgres_pid"; postgres_status=$?; set -e
  postgres_pid=""
  echo "--- the same integration, API, permission and query plan tests on PostgreSQL ---"
  cat "$postgres_log"
  if [[ $postgres_status != 0 ]]; then
    echo "!!! the PostgreSQL pass FAILED (exit status $postgres_status)" >&2
    exit "$postgres_status"
  fi
else
  echo "!!! PostgreSQL tests SKIPPED: only SQLite was tested" >&2
fi
exit "$sqlite_status"
