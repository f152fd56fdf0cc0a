#!/usr/bin/env bash
# Installs the Debian packages the test suite needs and the machine may lack: a compose client (the
# docker-compose.yaml test), headless Chromium (the scheduler suite's screenshots), a Java 17 JDK, Maven and curl
# (the Iceberg REST catalog server, built from source by scripts/iceberg-rest/build.sh, and the Marquez of
# tests/marquez, built from source by ../shared/marquez/start.sh) and PostgreSQL 15 (that Marquez's database, and
# the lineage store's tests, which start one of their own: scripts/postgres/start.sh; Airflow's metadata database in
# the distributed suite) and Redis (that suite's Celery broker: scripts/redis/start.sh). Idempotent: installs only
# what is missing. Needs root (as on CI).
set -euo pipefail
wanted=()
command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 || wanted+=(docker-compose)
command -v chromium >/dev/null 2>&1 || wanted+=(chromium)
command -v javac >/dev/null 2>&1 || wanted+=(openjdk-17-jdk-headless)
command -v curl >/dev/null 2>&1 || wanted+=(curl)
command -v mvn >/dev/null 2>&1 || wanted+=(maven)
[ -x /usr/lib/postgresql/15/bin/initdb ] || wanted+=(postgresql-15)
command -v redis-server >/dev/null 2>&1 || wanted+=(redis-server)
if [ ${#wanted[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-system-deps: missing ${wanted[*]}; install them with: sudo apt-get install ${wanted[*]}" >&2
  exit 1
fi
echo "install-system-deps: installing ${wanted[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${wanted[@]}" >/dev/null
