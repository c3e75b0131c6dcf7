# Two commands matter: `make run` and `make test`. Everything else is what they call.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
PORT ?= 8000
STAMP := $(VENV)/.installed

.PHONY: setup run test test-fast bench clean serve test-postgres

$(PY):
	$(PYTHON) -m venv $(VENV)

# Reinstall only when the pinned requirements or the project metadata change.
$(STAMP): requirements.txt pyproject.toml | $(PY)
	$(PIP) install --disable-pip-version-check -q -r requirements.txt
	$(PIP) install --disable-pip-version-check -q --no-deps -e .
	touch $(STAMP)

setup: $(STAMP)
	$(PY) manage.py migrate --noinput -v 0
	$(PY) manage.py load-catalogue

run: setup
	$(PY) manage.py runserver 127.0.0.1:$(PORT)

test: setup
	$(PY) -m pytest

# The whole suite again on a throwaway PostgreSQL server (Debian's postgresql, loopback port).
# Its database is migrated and loaded first, as `setup` does for SQLite, because some tests run
# manage.py in a subprocess against the configured (not the test) database.
test-postgres: setup
	scripts/with-postgres.sh sh -c '$(PY) manage.py migrate --noinput -v 0 && $(PY) manage.py load-catalogue -v 0 && $(PY) -m pytest'

# Production mode under gunicorn: collectstatic (compressed, hashed), whitenoise, 127.0.0.1:$(PORT).
serve: setup
	PORT=$(PORT) PY=$(PY) scripts/serve.sh

test-fast: setup
	$(PY) -m pytest -m "not browser"

bench: setup
	for script in bench/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles export .pytest_cache .secret_key
