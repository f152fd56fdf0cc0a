#!/usr/bin/env bash
# Makes build/tpc/{tpch,tpcds}.json: the TPC-H and TPC-DS queries and table schemas, dumped by DuckDB's own tpch
# and tpcds extensions (duckdb 1.5.5 and the extensions' wheels from PyPI, in a venv of their own under
# build/tpc-venv, since the project's duckdb cannot reach its extension server). A no-op once both files exist.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="$root/build/tpc-venv"
out="$root/build/tpc"
version=1.5.5

fail() { echo "tpc-corpus: $*" >&2; exit 1; }

[[ -f "$out/tpch.json" && -f "$out/tpcds.json" && "$out/tpch.json" -nt "$root/scripts/tpc/dump.py" ]] && exit 0
uv="${UV:-$root/.venv/bin/uv}"
[[ -x "$uv" ]] || uv="$(command -v uv || true)"
[[ -x "$uv" ]] || fail "uv is not found (set UV, or run 'make setup', which installs it into .venv)."
mkdir -p "$root/build"
exec 9>"$root/build/.tpc.lock"
flock 9
[[ -f "$out/tpch.json" && -f "$out/tpcds.json" && "$out/tpch.json" -nt "$root/scripts/tpc/dump.py" ]] && exit 0
if [[ ! -x "$venv/bin/python" ]]; then
  "$uv" venv -q --python 3.11 "$venv" || fail "making the venv $venv failed."
fi
"$uv" pip install -q --python "$venv/bin/python" "duckdb==$version" "duckdb-extension-tpch==$version" \
  "duckdb-extension-tpcds==$version" || fail "installing duckdb $version and its tpch/tpcds extension wheels failed (PyPI must be reachable on a cold cache)."
"$venv/bin/python" "$root/scripts/tpc/dump.py" "$out" || fail "dumping the queries and schemas failed."
