#!/usr/bin/env bash
# Starts a throwaway PostgreSQL 15 for the lineage store's tests: a new cluster in DIR (created by initdb), listening on
# 127.0.0.1:PORT only (its unix socket in DIR), with a database and login `lineage` whose password is
# $LINEAGE_STORE_PG_PASSWORD (default: lineage). Prints the store URL; the server's pid is in DIR/postgres.pid, and
# scripts/postgres/stop.sh DIR stops it by that pid. As root, initdb and the server run as the `postgres` user
# (created when missing), who is given DIR. $LINEAGE_STORE_PG_SETTINGS, when set, holds more server settings as
# NAME=VALUE words (for instance "shared_buffers=4GB max_wal_size=4GB"), each given to the server as `-c NAME=VALUE`.
#
#   bash scripts/postgres/start.sh /tmp/lineage-pg 54329
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 DIR PORT" >&2
  exit 2
fi
DIR="$1"
PORT="$2"
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
PASSWORD="${LINEAGE_STORE_PG_PASSWORD:-lineage}"
SETTINGS=""
for setting in ${LINEAGE_STORE_PG_SETTINGS:-}; do
  if [[ ! "$setting" =~ ^[a-z_]+=[A-Za-z0-9_.]+$ ]]; then
    echo "postgres/start.sh: $setting is not a server setting; write each as NAME=VALUE" >&2
    exit 2
  fi
  SETTINGS="$SETTINGS -c $setting"
done
if [ ! -x "$PG_BIN/initdb" ]; then
  echo "postgres/start.sh: no PostgreSQL 15 in $PG_BIN; install it with: apt-get install postgresql-15" >&2
  exit 1
fi
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
OWNER=postgres
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$OWNER" -- "$@"
  else
    "$@"
  fi
}
if [ "$(id -u)" = 0 ]; then
  id "$OWNER" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$OWNER"
  chown "$OWNER": "$DIR"
  chmod 700 "$DIR"
fi
if [ ! -s "$DIR/data/PG_VERSION" ]; then
  as_owner "$PG_BIN/initdb" -D "$DIR/data" -U postgres --encoding=UTF8 --locale=C --auth-local=trust \
    --auth-host=scram-sha-256 >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; exit 1; }
fi
as_owner "$PG_BIN/pg_ctl" -D "$DIR/data" -l "$DIR/postgres.log" -w -t 60 \
  -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c fsync=off$SETTINGS" start >/dev/null \
  || { tail -20 "$DIR/postgres.log" >&2; exit 1; }
head -1 "$DIR/data/postmaster.pid" >"$DIR/postgres.pid"
psql=("$PG_BIN/psql" -h "$DIR" -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt)
if [ "$(as_owner "${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = 'lineage'")" != 1 ]; then
  as_owner "${psql[@]}" -v password="$PASSWORD" <<'SQL'
CREATE ROLE lineage LOGIN PASSWORD :'password';
CREATE DATABASE lineage OWNER lineage;
SQL
fi
echo "postgresql://lineage@127.0.0.1:$PORT/lineage"
