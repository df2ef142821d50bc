#!/usr/bin/env bash
# The fast checks, with no Redis and no PostgreSQL: lint, format, import contracts, types and
# the migration check. `make check`, the pre-commit hooks and scripts/test.sh all run this one
# script. Arguments name one check (lint, format, imports, types, migrations); none runs all.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"
export DJANGO_SETTINGS_MODULE=config.settings

lint() { ruff check .; }
format() { ruff format --check .; }
imports() { lint-imports >/dev/null || lint-imports; }  # quiet when the contracts hold
types() { mypy; }
migrations() {
  # models changed without a migration; on a throwaway SQLite file, so no server is needed
  mkdir -p var
  local database="var/makemigrations-check.sqlite3"
  rm -f "$database"
  DATABASE_URL="sqlite:///$PWD/$database" python manage.py makemigrations --check --dry-run \
    >/dev/null || {
    echo "error: models changed without a migration (run: python manage.py makemigrations)" >&2
    rm -f "$database"
    exit 1
  }
  rm -f "$database"
}

checks=("$@")
if [[ ${#checks[@]} -eq 0 ]]; then checks=(lint format imports types migrations); fi
for check in "${checks[@]}"; do
  case $check in
    lint | format | imports | types | migrations) "$check" ;;
    *) echo "unknown check: $check (lint, format, imports, types, migrations)" >&2; exit 2 ;;
  esac
done
