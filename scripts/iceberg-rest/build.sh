#!/usr/bin/env bash
# Resolves the REST catalog's jars into target/lib and compiles our launcher into target/classes, unless both
# are already newer than pom.xml and the launcher's source. Prints nothing when there is nothing to do.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
stamp="$here/target/.built"

fail() { echo "iceberg-rest: $*" >&2; exit 1; }

up_to_date() {
  [[ -f "$stamp" && -d "$here/target/lib" && -d "$here/target/classes" ]] || return 1
  [[ -z "$(find "$here/pom.xml" "$here/src" -newer "$stamp" -print -quit)" ]]
}

up_to_date && exit 0
command -v java >/dev/null 2>&1 || fail "java is not installed; install Java 17 with 'apt-get install openjdk-17-jre-headless maven'."
command -v javac >/dev/null 2>&1 || fail "javac is not installed; install a JDK with 'apt-get install openjdk-17-jdk-headless maven'."
command -v mvn >/dev/null 2>&1 || fail "mvn is not installed; install Maven with 'apt-get install openjdk-17-jre-headless maven'."

mkdir -p "$here/target"
exec 9>"$here/target/.build.lock"
flock 9
up_to_date && exit 0  # another caller built it while we waited for the lock
log="$here/target/build.log"
rm -rf "$here/target/lib" "$here/target/classes"  # copy-dependencies never removes a jar the pom stopped using
if ! mvn -B -q -f "$here/pom.xml" package >"$log" 2>&1; then
  fail "resolving the jars or compiling the launcher failed; see $log (Maven Central must be reachable on a cold cache)."
fi
touch "$stamp"
