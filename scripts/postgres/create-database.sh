#!/usr/bin/env bash
# Adds a login and a database of the same NAME, owned by it, to the PostgreSQL that scripts/postgres/start.sh DIR
# PORT started (e.g. Airflow's metadata database beside the lineage store's); the password is $PG_PASSWORD
# (default: NAME, as docker-compose.yaml's throwaway services have it). Does nothing when the login exists.
#
#   bash scripts/postgres/create-database.sh /tmp/lineage-pg 54329 airflow
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 DIR PORT NAME" >&2
  exit 2
fi
DIR="$(cd "$1" && pwd)"
PORT="$2"
NAME="$3"
PASSWORD="${PG_PASSWORD:-$NAME}"
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}
psql=("$PG_BIN/psql" -h "$DIR" -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt)
if [ "$(as_owner "${psql[@]}" -v name="$NAME" <<'SQL'
SELECT 1 FROM pg_roles WHERE rolname = :'name';
SQL
)" != 1 ]; then
  as_owner "${psql[@]}" -v name="$NAME" -v password="$PASSWORD" <<'SQL'
CREATE ROLE :"name" LOGIN PASSWORD :'password';
CREATE DATABASE :"name" OWNER :"name";
SQL
fi
echo "postgresql://$NAME@127.0.0.1:$PORT/$NAME"
