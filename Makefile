# AVIA — two commands do everything on a fresh Debian machine:
#   make run    install what is missing, migrate, load the catalogue and demo data, start
#               Redis, a Celery worker and the web server
#   make test   install what is missing, start what the tests need, run every test
# and, while working (no Redis, no PostgreSQL):
#   make check      lint, format, import contracts, types, the migration check (under a minute)
#   make test-fast  the unit tests, on both cores: no integration, browser or real-engine tests
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python

.PHONY: run test check test-fast deps system-deps python-deps lint format messages bench clean

run: deps
	@scripts/run.sh

test: deps
	@scripts/test.sh

check: python-deps
	@scripts/check.sh

test-fast: python-deps
	@scripts/test-fast.sh

deps: system-deps python-deps

system-deps:
	@scripts/system-deps.sh

python-deps: $(VENV)/.requirements-installed

$(VENV)/.requirements-installed: requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

lint: python-deps
	@scripts/check.sh lint format

format: python-deps
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

messages: python-deps
	@PY=$(PY) scripts/messages.sh

bench: deps
	$(PY) bench/score.py
	$(PY) bench/report.py

clean:
	rm -rf var staticfiles db.sqlite3
