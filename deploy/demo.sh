#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, starts an
# rpmp-server on emulated PMem (a pool file in /dev/shm), and shows it working:
# put and get through rpmpctl, a restart that keeps the data, and a short benchmark.
# Leaves nothing running. Usage: deploy/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."

deploy/install-deps.sh
PATH="$(deploy/install-spark.sh):$PATH"
echo "== build (C++, Go proxy, Java client and Spark plugin)"
BUILD_DIR=build deploy/build.sh -DRPMP_JAVA=ON
BIN=build/bin
RUN=$(mktemp -d /tmp/rpmp-demo.XXXXXX)
POOL=/dev/shm/rpmp-demo-$$.pool
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
SERVER=127.0.0.1:$PORT
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  rm -f "$POOL"
}
trap cleanup EXIT

start_server() {
  "$BIN/rpmp-server" --listen "$SERVER" --pool "$POOL:1G" >"$RUN/server.out" 2>>"$RUN/server.log" &
  server_pid=$!
  for _ in $(seq 300); do  # wait for the ready line, not for a fixed time
    grep -q "rpmp-server ready" "$RUN/server.out" 2>/dev/null && return 0
    kill -0 "$server_pid" 2>/dev/null || { cat "$RUN/server.log"; return 1; }
    sleep 0.1
  done
  echo "rpmp-server did not become ready"; return 1
}

echo "== start rpmp-server on $SERVER with a 1 GiB pool at $POOL (log: $RUN/server.log)"
start_server
grep "medium" "$RUN/server.log" | sed 's/^/   /'
CTL="$BIN/rpmpctl --server $SERVER"
echo "== put and get"
echo "hello from RPMP" | $CTL put demo greeting -
printf '   get demo greeting -> '; $CTL get demo greeting -
head -c 8388608 /dev/urandom >"$RUN/blob"
$CTL put demo blob "$RUN/blob"
$CTL get demo blob "$RUN/blob.back"
cmp "$RUN/blob" "$RUN/blob.back" && echo "   8 MiB blob round-tripped byte for byte (by RDMA read/write over tcp;ofi_rxm)"
for i in 1 2 3; do echo "record $i" | $CTL append demo log - --tag $i; done
echo "   records of demo/log:"; $CTL meta demo log | sed 's/^/     /'
echo "== restart the server: acknowledged data survives"
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=""
start_server
printf '   after restart: '; $CTL get demo greeting -
$CTL get demo blob "$RUN/blob.back2" && cmp "$RUN/blob" "$RUN/blob.back2" && echo "   8 MiB blob intact"
$CTL stat | sed 's/^/   /'
echo "== a Spark job (pyspark 4.2.0, local-cluster with 2 executor JVMs) shuffling through RPMP"
JAR=$(pwd)/build/jars/rpmp-spark.jar
spark-submit --master "local-cluster[2,1,1024]" --driver-memory 1g \
  --conf spark.ui.enabled=false --conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager \
  --conf spark.rpmp.server="$SERVER" --conf spark.rpmp.fallback=fail \
  --conf spark.driver.extraClassPath="$JAR" --conf spark.executor.extraClassPath="$JAR" \
  deploy/spark_demo.py 2>"$RUN/spark.log" | sed 's/^/   /'
printf '   after the Spark application (it deletes its shuffles), the server holds: '; $CTL stat | grep -o 'namespaces [0-9]* keys [0-9]*'
echo "== benchmark (2 s per workload)"
"$BIN/rpmp-bench" --server "$SERVER" --workloads put,get --sizes 4k,1m --threads 2 --depth 4 --seconds 2
echo "== done (logs in $RUN)"
