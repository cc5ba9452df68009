#!/usr/bin/env bash
# Java for Spark (tests/routing/test_summary_scale.py runs the Spark SQL summary query in pyspark's local mode).
# pyspark 4.x runs on Java 17 or 21 (spark.apache.org/docs/latest: "Spark runs on Java 17/21"). Idempotent: a Java
# 17+ already on PATH is kept; else Debian / Ubuntu's headless JRE 17 is installed (apt-get, as root or with sudo).
# Exits non-zero when no Java 17+ can be had: CI fails then, rather than skip the Spark test.
set -u

version() {  # the major version of `java` on PATH; empty without one
    command -v java >/dev/null 2>&1 || return 0
    java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1
}

have=$(version)
if [ -n "$have" ] && [ "$have" -ge 17 ]; then
    echo "java.sh: java $have at $(command -v java)"
    exit 0
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
command -v apt-get >/dev/null 2>&1 || { echo "java.sh: no Java 17+ and no apt-get; install a JRE 17 or 21" >&2; exit 1; }
echo "java.sh: installing openjdk-17-jre-headless (found: ${have:-no java})" >&2
$sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq openjdk-17-jre-headless >&2 \
    || { echo "java.sh: apt-get could not install openjdk-17-jre-headless" >&2; exit 1; }
have=$(version)
[ -n "$have" ] && [ "$have" -ge 17 ] || { echo "java.sh: java on PATH is still ${have:-missing}" >&2; exit 1; }
echo "java.sh: java $have at $(command -v java)"
