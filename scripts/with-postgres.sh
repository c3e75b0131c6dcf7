#!/usr/bin/env bash
# Run a command with DATABASE_URL pointing at a throwaway PostgreSQL cluster.
#
#   scripts/with-postgres.sh .venv/bin/python -m pytest
#
# Starts Debian's PostgreSQL (initdb + pg_ctl, newest /usr/lib/postgresql/*/bin) on a free
# loopback port with a data directory under /tmp, creates the database `catalogue`, runs the
# command, then stops the server and deletes the directory, whatever the command's outcome.
# As root the server runs as the `postgres` user. Durability is switched off (fsync=off): the
# cluster is thrown away. Exit status: the command's.
set -euo pipefail

PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
  echo "with-postgres: PostgreSQL server binaries not found; install Debian's postgresql (apt-get install postgresql)." >&2
  exit 2
fi
PORT=${PG_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
DATA=$(mktemp -d /tmp/catalogue-pg.XXXXXX)

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
cleanup() {
  as_pg "$PG_BIN/pg_ctl" -D "$DATA/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$DATA"
}
trap cleanup EXIT INT TERM

if [ "$(id -u)" = 0 ]; then chown postgres "$DATA"; fi
as_pg "$PG_BIN/initdb" -D "$DATA/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$DATA/data" -l "$DATA/server.log" -w -t 60 start \
  -o "-p $PORT -k $DATA -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100" \
  >/dev/null || { cat "$DATA/server.log" >&2; exit 2; }
as_pg "$PG_BIN/createdb" -h 127.0.0.1 -p "$PORT" -U postgres catalogue

export DATABASE_URL="postgres://postgres@127.0.0.1:$PORT/catalogue"
echo "with-postgres: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT" >&2
set +e
"$@"
status=$?
set -e
exit $status
