#!/usr/bin/env bash
# The README's first command: installs what is missing, builds everything, starts a
# local RPMP cluster on emulated PMem (etcd, 2 rpmp-proxy, 3 rpmp-server with pools in
# /dev/shm), and shows it working: replicated writes, a server killed with kill -9
# while its data stays readable, a Spark job whose shuffles go through RPMP, and a
# benchmark. Stops the cluster at the end (after a failure its logs are kept, and
# their place printed).
# Usage: deploy/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

deploy/install-deps.sh
PATH="$(deploy/install-spark.sh):$PATH"
echo "== build (C++, Go proxy, Java client and Spark plugin)"
BUILD_DIR=build deploy/build.sh -DRPMP_JAVA=ON
export RPMP_BIN_DIR=$PWD/build/bin
export RPMP_RUN_DIR=${RPMP_RUN_DIR:-/tmp/rpmp-demo-cluster}
export RPMP_BASE_PORT=${RPMP_BASE_PORT:-7400}
BIN=$RPMP_BIN_DIR
# The cluster stops at the end; after a failure its logs stay (the pools go).
finish() {
  local rc=$?
  if [ "$rc" -eq 0 ]; then
    deploy/local-cluster.sh stop --wipe >/dev/null 2>&1 || true
  else
    deploy/local-cluster.sh stop >/dev/null 2>&1 || true
    rm -f /dev/shm/rpmp-cluster-"$RPMP_BASE_PORT"-*.pool
    echo "demo failed (exit $rc); the cluster's logs are in $RPMP_RUN_DIR" >&2
  fi
}
trap finish EXIT

echo "== start a local cluster (pools on /dev/shm, logs in $RPMP_RUN_DIR)"
deploy/local-cluster.sh stop --wipe >/dev/null 2>&1 || true
deploy/local-cluster.sh start | sed 's/^/   /'
eval "$(deploy/local-cluster.sh status | grep -E '^(RPMP_PROXIES|RPMP_SECRET_FILE|RPMP_TLS_DIR)=')"
# The cluster secret and a client certificate for the proxies' mutual TLS (docs/security.md).
export RPMP_PROXIES RPMP_SECRET_FILE RPMP_TLS_DIR
CTL="$BIN/rpmpctl --proxy $RPMP_PROXIES"

echo "== a namespace with 2 copies of every record"
$CTL ns create demo --replicas 2 | sed 's/^/   /'
echo "hello from RPMP" | $CTL put demo greeting -
head -c 8388608 /dev/urandom >"$RPMP_RUN_DIR/blob"
$CTL put demo blob "$RPMP_RUN_DIR/blob"
for i in 1 2 3; do echo "record $i" | $CTL append demo log - --tag $i; done
printf '   get demo greeting -> '; $CTL get demo greeting -
echo "   records of demo/log:"; $CTL meta demo log | sed 's/^/     /'

echo "== kill -9 one server holding the namespace: reads go on from the replica"
victim=$($CTL ns show demo | awk '/^  member/ {print $3; exit}')   # first member's endpoint
idx=$(( ${victim##*:} - RPMP_BASE_PORT - 20 ))
kill -9 "$(cat "$RPMP_RUN_DIR/server$idx.pid")"
echo "   killed server$idx ($victim) with kill -9"
$CTL get demo blob "$RPMP_RUN_DIR/blob.back" && cmp "$RPMP_RUN_DIR/blob" "$RPMP_RUN_DIR/blob.back" \
  && echo "   8 MiB blob read back byte for byte from the surviving replica"
printf '   get demo greeting -> '; $CTL get demo greeting -
echo "== restart it: it rejoins with its id and its data"
deploy/local-cluster.sh start >/dev/null
$CTL nodes | sed 's/^/   /'

echo "== a Spark job (pyspark 4.2.0, local-cluster with 2 executor JVMs) shuffling through the cluster"
JAR=$PWD/build/jars/rpmp-spark.jar
spark-submit --master "local-cluster[2,1,1024]" --driver-memory 1g \
  --conf spark.ui.enabled=false --conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager \
  --conf spark.rpmp.proxies="$RPMP_PROXIES" --conf spark.rpmp.fallback=fail \
  --conf spark.driver.extraClassPath="$JAR" --conf spark.executor.extraClassPath="$JAR" \
  deploy/spark_demo.py 2>"$RPMP_RUN_DIR/spark.log" | sed 's/^/   /'
printf '   namespaces of the application left after it ended: '; $CTL ns ls spark/ | wc -l

echo "== benchmark against the cluster (2 s per workload, R=1 then R=2)"
for r in 1 2; do
  "$BIN/rpmp-bench" --proxy "$RPMP_PROXIES" --replicas $r --workloads put,get --sizes 1m \
    --threads 2 --depth 4 --seconds 2 | sed 's/^/   /'
done
echo "== done (the cluster stops and its run directory $RPMP_RUN_DIR is removed)"
