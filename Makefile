# Two commands matter: `make run` and `make test`. Everything else is what they call.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
RUFF := $(VENV)/bin/ruff
PORT ?= 8000
STAMP := $(VENV)/.installed
# What `make lint` checks (everything by default; `make lint LINT_PATHS=catalog/http.py`).
LINT_PATHS ?= .

# The system programs a target needs, as PROGRAM:DEBIAN-PACKAGE for scripts/require-packages.sh:
# checked before anything else, installed with apt-get when run as root, otherwise one sentence
# naming the command to run. `make run` needs none of them.
# Playwright's own node binary (it drives Chromium) needs libatomic, which minimal Debian lacks.
# nginx is looked for by path: /usr/sbin is not on an ordinary user's PATH.
NGINX_PACKAGES := '/usr/sbin/nginx:nginx'
TEST_PACKAGES := "$${CHROMIUM_PATH:-chromium}:chromium" nix-instantiate:nix-bin \
	'/usr/lib/*/libatomic.so.1:libatomic1' $(NGINX_PACKAGES)
POSTGRES_PACKAGES := "$${PG_BIN:-/usr/lib/postgresql/*/bin}/initdb:postgresql" redis-server:redis-server
# The browser tests use the Chromium found on PATH unless CHROMIUM_PATH names one.
WITH_CHROMIUM := CHROMIUM_PATH="$${CHROMIUM_PATH:-$$(command -v chromium)}"

.PHONY: setup run test test-fast bench clean serve serve-proxy test-postgres lint \
	test-packages postgres-packages mutation

# Debian's python3 lacks ensurepip until python3-venv is installed; venv then fails half-way,
# leaving a .venv without pip that later runs would trip over: remove it and say what to do.
$(PY):
	@log=$$(mktemp); $(PYTHON) -m venv $(VENV) >"$$log" 2>&1 || { rm -rf $(VENV); \
	  echo "make needs Python's venv and ensurepip ($(PYTHON) -m venv failed, see $$log):" \
	    "run \`apt-get install python3-venv\` as root and try again." >&2; exit 1; }; rm -f "$$log"

# The suite runs in one pytest-xdist worker per core, at most 4 (each loads its own catalogue and
# starts its own Chromium); a whole test file goes to one worker, so a module's server starts
# once. `make test TEST_WORKERS=0` runs it in one process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); \
	if [ "$$n" -gt 4 ]; then n=4; fi; if [ "$$n" -lt 2 ]; then n=0; fi; echo $$n)
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

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

# The package check comes first, so a missing package stops the target before it spends a
# minute installing Python packages; setup follows through a sub-make to keep that order.
test: test-packages
	@$(MAKE) --no-print-directory setup
	$(WITH_CHROMIUM) $(PYTEST)

# The whole suite again on a throwaway PostgreSQL server (Debian's postgresql, loopback port),
# with a throwaway Redis beside it (tests/test_two_hosts.py runs two servers over both).
# Its database is migrated and loaded first, as `setup` does for SQLite, because some tests run
# manage.py in a subprocess against the configured (not the test) database.
test-postgres: postgres-packages
	@$(MAKE) --no-print-directory setup
	$(WITH_CHROMIUM) scripts/with-postgres.sh scripts/with-redis.sh sh -c '$(PY) manage.py migrate --noinput -v 0 && $(PY) manage.py load-catalogue -v 0 && $(PYTEST)'

test-fast:
	@scripts/require-packages.sh "make test-fast" nix-instantiate:nix-bin $(NGINX_PACKAGES)
	@$(MAKE) --no-print-directory setup
	$(PYTEST) -m "not browser"

test-packages:
	@scripts/require-packages.sh "make test" $(TEST_PACKAGES)

postgres-packages:
	@scripts/require-packages.sh "make test-postgres" $(TEST_PACKAGES) $(POSTGRES_PACKAGES)

# ruff (rules and line length in pyproject.toml), then migrations that models need but lack;
# all three run, and the target fails at the end if any did.
lint: $(STAMP)
	status=0; \
	$(RUFF) check $(LINT_PATHS) || status=1; \
	$(RUFF) format --check $(LINT_PATHS) || status=1; \
	$(PY) manage.py makemigrations --check --dry-run || status=1; \
	$(PY) -m mypy || status=1; \
	exit $$status

# Production mode under gunicorn: collectstatic (compressed, hashed), whitenoise, 127.0.0.1:$(PORT).
serve: setup
	PORT=$(PORT) PY=$(PY) scripts/serve.sh

# The same behind nginx (a config rendered into a temporary folder, nginx in the foreground), so
# that slow clients cannot hold the sync workers; HOSTS=2 starts two gunicorn servers behind it.
serve-proxy:
	@scripts/require-packages.sh "make serve-proxy" $(NGINX_PACKAGES)
	@$(MAKE) --no-print-directory setup
	PORT=$(PORT) PY=$(PY) scripts/serve-proxy.sh

# Every script in bench/ runs (a module without a main guard, such as bench/server.py, is a
# helper); the target fails at the end if any of them did.
bench:
	@scripts/require-packages.sh "make bench" wrk:wrk $(NGINX_PACKAGES)
	@$(MAKE) --no-print-directory setup
	status=0; for script in bench/*.py; do \
	  grep -q '__main__' $$script || continue; \
	  echo "== $$script"; $(PY) $$script || status=1; done; \
	exit $$status

# Mutation testing of the pure modules (scripts/mutation.py; minutes, so not part of `make test`).
# `make mutation MUTATION_ARGS="--limit 0 catalog/naming.py"` runs every mutant of one module.
MUTATION_ARGS ?=
mutation: $(STAMP)
	$(PY) scripts/mutation.py $(MUTATION_ARGS)

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles export .pytest_cache .ruff_cache .secret_key
