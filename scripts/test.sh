#!/usr/bin/env bash
# Runs every test: lint, then pytest on SQLite (unit, integration with a real Redis and Celery
# worker, PDF tests) and, beside it, the migrations, integration, API, permission, query plan
# and schemathesis contract tests on a private PostgreSQL cluster (scripts/postgres.sh), with
# the browser journeys and the tests that mostly wait on real processes there alone. The two passes run at the same time, each in its own process group, with its own Redis (the fault
# tests stop and start theirs) and its own media directory; the SQLite pass prints as it goes,
# the PostgreSQL pass's output follows it. Artefacts (screenshots, rendered pages, worker logs)
# land in artifacts/. Arguments go to the SQLite pytest run and skip the PostgreSQL one (a
# targeted run); AVIA_TEST_POSTGRES=0 skips it too.
# The SQLite pass runs in two pytest-xdist workers (docs/testing.md, "Both cores");
# AVIA_TEST_WORKERS=0 makes it one process.
#
# The real-engine tests (marker real_engine: the probe against llama.cpp's llama-server) need
# the engine that scripts/llama-server.sh builds once into ~/.cache/avia (10-20 minutes the
# first time, nothing after). A whole run starts that build (or its reuse) first, in the
# background beside lint and the passes, and runs the real-engine tests once it is there and
# one of the passes is over; a build that fails fails the run. A targeted run leaves it to
# the tests' fixture, which builds or reuses it the same way when a real-engine test is
# selected.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export DJANGO_SETTINGS_MODULE=config.settings
export AVIA_TEST_REDIS_PORT=${AVIA_TEST_REDIS_PORT:-6399}
export REDIS_URL="redis://127.0.0.1:${AVIA_TEST_REDIS_PORT}/0"
# A port of its own beside each Redis port, so parallel checkouts do not share a cluster.
export AVIA_TEST_POSTGRES_PORT=${AVIA_TEST_POSTGRES_PORT:-$((AVIA_TEST_REDIS_PORT + 9000))}
export MEDIA_ROOT="$PWD/var/test-media"
# The tests' reference vendors listen on loopback (core.outbound refuses it otherwise).
export PROBE_ALLOWED_NETWORKS=127.0.0.0/8
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

engine_pid=""
engine_log=var/engine-build.log
if [[ $# -eq 0 ]]; then
  # Its own process group (setsid), so that an interrupted run stops the compilers too.
  setsid -w scripts/llama-server.sh >var/engine-cache.txt 2>"$engine_log" &
  engine_pid=$!
  cleanup+=("stop_engine_build")
fi
stop_engine_build() {
  [[ -n $engine_pid ]] || return 0
  kill -TERM -- "-$engine_pid" 2>/dev/null || true
  wait "$engine_pid" 2>/dev/null || true
  engine_pid=""
}

python manage.py compilemessages --ignore=.venv -v 0
# Lint, format, import contracts, types and the check for a missing migration: the one script
# that `make check` and the pre-commit hooks run too.
scripts/check.sh

# Every migration applies from an empty database, on both databases.
check_migrations() {
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
# What runs in the PostgreSQL pass only (with no PostgreSQL, in the SQLite pass): the browser
# journeys (what they test is the pages, no less real on PostgreSQL) and the tests that mostly
# wait on real processes — a worker killed and redelivered after the visibility timeout, the
# probe journeys timed against the reference vendor, the two-host object store (its own
# PostgreSQL) — where PostgreSQL is what several workers run on in production. That leaves the
# two passes about as long (docs/testing.md has the figures).
postgres_only_paths=(tests/browser tests/integration/test_probe_journey.py
  tests/integration/test_rescore_batch.py tests/storage/test_two_hosts.py)
postgres_only_tests=(
  tests/integration/test_faults.py::test_a_worker_killed_during_scoring_and_rendering_leaves_one_result_each
)
postgres_only=()
sqlite_leaves_out=()
if [[ $postgres == 1 ]]; then
  postgres_only=("${postgres_only_paths[@]}" "${postgres_only_tests[@]}")
  sqlite_leaves_out=("${postgres_only_paths[@]/#/--ignore=}" "${postgres_only_tests[@]/#/--deselect=}")
fi

postgres_pid=""
postgres_log=var/test-postgres.log
sqlite_pid=""
engine_log_tests=var/test-real-engine.log
# Stops a pass and what it started (its own process group: setsid), and waits for it, before
# the cleanup stops the servers it uses.
stop_pass() {
  local pid=$1
  [[ -n $pid ]] || return 0
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
}
stop_passes() {
  stop_pass "$sqlite_pid"; sqlite_pid=""
  stop_pass "$postgres_pid"; postgres_pid=""
}
cleanup=("stop_passes" "${cleanup[@]}")
# Ctrl-C stops every pass (background passes do not get the terminal's signal).
trap 'exit 130' INT TERM HUP

if [[ $postgres == 1 ]]; then
  postgres_url=$(scripts/postgres.sh url "$AVIA_TEST_POSTGRES_PORT")
  psql -q "${postgres_url%/*}/postgres" -c "DROP DATABASE IF EXISTS avia_migrate_check" \
    -c "CREATE DATABASE avia_migrate_check"
  check_migrations "${postgres_url%/*}/avia_migrate_check"
  # Its own Redis (the fault tests stop and start theirs), started and stopped like the first.
  postgres_redis_port=${AVIA_TEST_POSTGRES_REDIS_PORT:-$((AVIA_TEST_REDIS_PORT + 1000))}
  state=$(scripts/redis.sh start "$postgres_redis_port")  # a port taken by another ends here
  if [[ $state == started ]]; then cleanup+=("scripts/redis.sh stop $postgres_redis_port"); fi
  postgres_redis="redis://127.0.0.1:${postgres_redis_port}"
  DATABASE_URL=$postgres_url AVIA_TEST_REDIS_PORT=$postgres_redis_port \
    REDIS_URL="$postgres_redis/0" CACHE_URL="${CACHE_URL:+$postgres_redis/1}" \
    MEDIA_ROOT="$PWD/var/test-media-postgres" \
    setsid -w python -m pytest -p no:cacheprovider tests/integration tests/api \
    tests/test_permission_matrix.py tests/scale tests/contract "${postgres_only[@]}" \
    >"$postgres_log" 2>&1 &
  postgres_pid=$!
fi

if [[ $# -gt 0 ]]; then
  set +e; python -m pytest "$@"; sqlite_status=$?; set -e
else
  # The SQLite pass prints as it goes, in the background (its own process group) so that this
  # shell can start the real-engine tests when one of the passes ends. What runs on
  # PostgreSQL alone is left out here (run here when there is no PostgreSQL).
  # Two pytest-xdist workers (tests/parallel.py: a Redis and media folder per worker, a
  # package per work unit, the longest first): the passes wait on workers, servers and
  # Chromium much of the time, so three processes keep two cores busier than two.
  # AVIA_TEST_WORKERS=0 makes it one process.
  workers=${AVIA_TEST_WORKERS:-2}
  parallel=()
  if [[ $workers != 0 ]]; then parallel=(-n "$workers" --dist loadgroup); fi
  setsid -w python -m pytest "${parallel[@]}" -m "not real_engine" "${sqlite_leaves_out[@]}" &
  sqlite_pid=$!
fi

# The real-engine tests, once the engine is built (or found in the cache) and one of the passes
# is over: they take the core it leaves rather than slow both passes. Their output follows the
# others'.
engine_status=0
postgres_status=0
# Waits for a pass that has ended (its status kept for later), or for one of the two to end.
wait_for_a_pass() {
  while [[ -n $sqlite_pid && -n $postgres_pid ]] && kill -0 "$sqlite_pid" 2>/dev/null \
    && kill -0 "$postgres_pid" 2>/dev/null; do
    sleep 1
  done
  if [[ -n $sqlite_pid ]] && ! kill -0 "$sqlite_pid" 2>/dev/null; then
    set +e; wait "$sqlite_pid"; sqlite_status=$?; set -e
    sqlite_pid=""
  elif [[ -n $postgres_pid ]] && ! kill -0 "$postgres_pid" 2>/dev/null; then
    set +e; wait "$postgres_pid"; postgres_status=$?; set -e
    postgres_pid=""
  fi
}
if [[ -n $engine_pid ]]; then
  set +e; wait "$engine_pid"; engine_status=$?; set -e
  engine_pid=""
  if [[ $engine_status != 0 ]]; then
    { cat "$engine_log"
      echo "!!! the real engine (llama-server) could not be built: real-engine tests FAILED"
    } >"$engine_log_tests"
  else
    wait_for_a_pass
    engine_cache=$(tail -n 1 var/engine-cache.txt)
    export AVIA_LLAMA_SERVER="$engine_cache/bin/llama-server"
    export AVIA_LLAMA_SOURCE="$engine_cache/src"
    if AVIA_TINY_MODEL=$(python scripts/make_tiny_llama.py "$engine_cache" 2>"$engine_log_tests"); then
      export AVIA_TINY_MODEL
      set +e
      python -m pytest -p no:cacheprovider -m real_engine >"$engine_log_tests" 2>&1
      engine_status=$?
      set -e
    else
      engine_status=1
      echo "!!! the tiny model could not be written: real-engine tests FAILED" >>"$engine_log_tests"
    fi
  fi
fi

if [[ -n $sqlite_pid ]]; then
  set +e; wait "$sqlite_pid"; sqlite_status=$?; set -e
  sqlite_pid=""
fi

if [[ $postgres == 1 ]]; then
  if [[ -n $postgres_pid ]]; then
    set +e; wait "$postgres_pid"; postgres_status=$?; set -e
    postgres_pid=""
  fi
  echo "--- on PostgreSQL: the integration, API, permission, query plan and contract tests again, and the tests that run there alone ---"
  cat "$postgres_log"
fi
if [[ $# -eq 0 ]]; then
  echo "--- real-engine tests (the probe against llama-server) ---"
  cat "$engine_log_tests"
fi
echo "--- SQLite pass: $([[ $sqlite_status == 0 ]] && echo passed || echo "FAILED ($sqlite_status)")"
if [[ $# -eq 0 ]]; then
  echo "--- real-engine pass: $([[ $engine_status == 0 ]] && echo passed || echo "FAILED ($engine_status)")"
fi
if [[ $postgres == 1 ]]; then
  echo "--- PostgreSQL pass: $([[ $postgres_status == 0 ]] && echo passed || echo "FAILED ($postgres_status)")"
else
  echo "!!! PostgreSQL tests SKIPPED: only SQLite was tested" >&2
fi
if [[ $sqlite_status != 0 ]]; then exit "$sqlite_status"; fi
if [[ $engine_status != 0 ]]; then exit "$engine_status"; fi
exit "$postgres_status"
