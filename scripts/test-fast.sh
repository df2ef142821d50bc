#!/usr/bin/env bash
# The unit tier, for a quick loop: every test but the integration (a real Redis and Celery
# worker), browser (Chromium) and real-engine ones, and the contract fuzzing (a gunicorn
# server); on SQLite, with no server to start. Arguments go to pytest. `make test` runs all.
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
# AVIA_TEST_WORKERS=2 runs it on both cores (pytest-xdist, a package per work unit:
# tests/parallel.py); not the default yet (docs/testing.md, "Both cores").
workers=${AVIA_TEST_WORKERS:-0}
parallel=()
if [[ $workers != 0 ]]; then parallel=(-n "$workers" --dist loadgroup); fi
exec python -m pytest -q -p no:cacheprovider "${parallel[@]}" -m "$tiers" --ignore=tests/contract "$@"
