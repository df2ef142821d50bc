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
exec python -m pytest -q -p no:cacheprovider \
  -m "not integration and not browser and not real_engine" --ignore=tests/contract "$@"
