#!/usr/bin/env bash
# The unit tier, for a quick loop: every test but the integration (a real Redis and Celery
# worker), browser (Chromium) and real-engine ones, and the contract fuzzing (a gunicorn
# server); on SQLite, with no server to start, in two pytest-xdist workers. Arguments go to
# pytest (and run in one process). `make test` runs all.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export DJANGO_SETTINGS_MODULE=config.settings
export MEDIA_ROOT="$PWD/var/test-fast-media"
mkdir -p var
python manage.py compilemessages --ignore=.venv -v 0
tiers="not integration and not browser"
# the real inference engine's tests, where the marker is declared (pyproject.toml)
if grep -q '"real_engine' pyproject.toml; then tiers+=" and not real_engine"; fi
# The whole tier on both cores (pytest-xdist, a package per work unit: tests/parallel.py); a
# part of it (arguments) in this one process, where starting two workers costs more than it
# saves. AVIA_TEST_WORKERS sets the number of workers (0: one process).
workers=${AVIA_TEST_WORKERS:-$([[ $# -eq 0 ]] && echo 2 || echo 0)}
parallel=()
if [[ $workers != 0 ]]; then parallel=(-n "$workers" --dist loadgroup); fi
exec python -m pytest -q -p no:cacheprovider "${parallel[@]}" -m "$tiers" --ignore=tests/contract "$@"
