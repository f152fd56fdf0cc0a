#!/usr/bin/env bash
# Usage: start.sh FOLDER
# Starts the loopback Iceberg REST catalog in the background with its catalog (FOLDER/catalog.db), warehouse
# (FOLDER/warehouse) and output (FOLDER/server.log) in FOLDER, writes FOLDER/pid and FOLDER/port, waits until
# GET /v1/config answers and prints the server's URI. Builds first when needed (build.sh).
# Environment: ICEBERG_REST_PORT (default 0: a free port), ICEBERG_REST_START_TIMEOUT seconds (default 60),
# CATALOG_* (extra catalog properties, read by the server), ICEBERG_REST_TOKEN (every request must carry it as a
# bearer token) and ICEBERG_REST_CREDENTIAL (CLIENT_ID:SECRET, for which POST /v1/oauth/tokens vends the token).
set -euo pipefail

fail() { echo "iceberg-rest: $*" >&2; exit 1; }

# Checked first, with shell builtins only, so that the one sentence is what a machine without Java sees.
command -v java >/dev/null 2>&1 || fail "java is not installed; install Java 17 with 'apt-get install openjdk-17-jre-headless maven'."
[[ $# -eq 1 ]] || fail "usage: start.sh FOLDER"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v curl >/dev/null 2>&1 || fail "curl is not installed; install it with 'apt-get install curl'."
"$here/build.sh"

mkdir -p "$1"
folder="$(cd "$1" && pwd)"
if [[ -f "$folder/pid" ]] && kill -0 "$(cat "$folder/pid")" 2>/dev/null; then
  fail "a server is already running for $folder (pid $(cat "$folder/pid")); stop it with stop.sh $folder first."
fi
rm -f "$folder/pid" "$folder/port"

timeout="${ICEBERG_REST_START_TIMEOUT:-60}"
java -Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  -Dorg.slf4j.simpleLogger.showDateTime=true -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS \
  -cp "$here/target/classes:$here/target/lib/*" lineagegovernance.icebergrest.LoopbackRestServer \
  --folder "$folder" --port "${ICEBERG_REST_PORT:-0}" </dev/null >"$folder/server.log" 2>&1 &
pid=$!
echo "$pid" >"$folder/pid"

auth=()
[[ -n "${ICEBERG_REST_TOKEN:-}" ]] && auth=(-H "Authorization: Bearer $ICEBERG_REST_TOKEN")
deadline=$((SECONDS + timeout))
while ((SECONDS < deadline)); do
  if ! kill -0 "$pid" 2>/dev/null; then
    rm -f "$folder/pid"
    fail "the REST catalog server exited during start; see $folder/server.log."
  fi
  if [[ -s "$folder/port" ]]; then
    uri="http://127.0.0.1:$(cat "$folder/port")"
    if curl -fs -o /dev/null --max-time 2 "${auth[@]}" "$uri/v1/config"; then
      echo "$uri"
      exit 0
    fi
  fi
  sleep 0.1
done
kill "$pid" 2>/dev/null || true
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
rm -f "$folder/pid" "$folder/port"
fail "the REST catalog server did not answer GET /v1/config within ${timeout} s; see $folder/server.log."
