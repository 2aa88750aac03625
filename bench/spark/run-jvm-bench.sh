#!/usr/bin/env bash
# JVM shuffle benchmark: RPMP's shuffle against Spark's own, in one run, alternating.
# Starts a local RPMP cluster (deploy/local-cluster.sh: etcd, 2 proxies, 3 servers) on
# a reserved port block (or RPMP_BASE_PORT) with its own run dir, then for each job (terasort: orderBy
# of ~100-byte rows; agg: groupBy(id % 1000003) sum/count; join: two tables joined on a
# key) runs <build>/jars/rpmp-spark-bench.jar with spark-submit, --rounds times on each
# shuffle, alternating which goes first. Prints its setup, one line per run (seconds, fetch
# wait, write time, bytes, GC, peak executor heap from the event log), the medians and the
# per-round ratios. Exits 1 when a run fails or the two shuffles disagree on the output
# (row count, row-hash sum, order). Stops the cluster and removes its pools at exit.
#
#   bench/spark/run-jvm-bench.sh [--jobs terasort,agg,join] [--rounds 3] [--scale 1.0]
#       [--replicas 1] [--partitions N] [--heap-sweep 200,2000,10000] [--jfr]
#       [--master 'local-cluster[2,1,2048]'] [--executor-memory 2g] [--build DIR]
#       [--only rpmp|sort] [--rpmp-conf K=V]... [--conf K=V]... [--keep] [--insecure]
#       [--old-build DIR --old-repo DIR] [--peer-no-tokens]
#
# --old-build/--old-repo: an older checkout (old-repo) and its build (old-build, with
# -DRPMP_JAVA=ON) run as a third shuffle, "rpmp-old", on a second local cluster of its
# own (its deploy/local-cluster.sh and binaries, base port +100), in the same rounds: the
# summary adds the ratio rpmp/rpmp-old ("no slower than before", same run, same load).
# With --only rpmp, those two alone.
# --peer-no-tokens: the third shuffle is this build again, on a second cluster whose
# proxies issue no tenant tokens (local-cluster.sh RPMP_ISSUE_TOKENS=0): the executors
# prove the cluster secret instead of a per-application token checked on every call.
# The ratio rpmp/rpmp-old is then what tenant tokens cost (docs/security.md, "Cost").
# The RPMP cluster is secured as local-cluster.sh makes it (cluster secret, mutual TLS);
# --insecure starts it without either, to measure what security costs.
# Sizes at --scale 1: terasort 10 M rows (orderBy, spark.sql.shuffle.partitions 200
# unless --partitions), agg 20 M rows over 2,000 partitions, join 5 M x 5 M rows (200
# partitions unless --partitions). --scale 0.1 is a quick run.
# --heap-sweep P1,P2,... runs the agg job on RPMP only at each partition count and prints
# the peak executor heap and execution memory per count (the writer's bound).
# --no-prefault starts the RPMP servers without --prefault (their pools fresh tmpfs pages).
# --jfr records a JFR profile of every executor of the RPMP and sort runs of round 1
# (in the work dir, kept; print the hot methods with `jfr print --events
# jdk.ExecutionSample FILE` or bench/spark/jfr-top.py).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
jobs=terasort,agg,join rounds=3 scale=1.0 replicas=1 partitions="" heap_sweep="" jfr=0
master="local-cluster[2,1,2048]" executor_memory=2g driver_memory=2g
build=${RPMP_BUILD:-$repo/build} only="" keep=0 insecure=0 prefault=1 old_build="" old_repo="" peer_no_tokens=0
rpmp_extra=() common_extra=()
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --replicas) replicas=$2; shift 2 ;;
    --partitions) partitions=$2; shift 2 ;;
    --heap-sweep) heap_sweep=$2; shift 2 ;;
    --jfr) jfr=1; shift ;;
    --master) master=$2; shift 2 ;;
    --executor-memory) executor_memory=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --rpmp-conf) rpmp_extra+=(--conf "$2"); shift 2 ;;
    --conf) common_extra+=(--conf "$2"); shift 2 ;;
    --keep) keep=1; shift ;;
    --insecure) insecure=1; shift ;;
    --no-prefault) prefault=0; shift ;;
    --old-build) old_build=$2; shift 2 ;;
    --old-repo) old_repo=$2; shift 2 ;;
    --peer-no-tokens) peer_no_tokens=1; shift ;;
    -h|--help) usage ;;
    *) echo "run-jvm-bench: unknown argument $1" >&2; usage ;;
  esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "run-jvm-bench: --rounds must be a positive integer" >&2; exit 2; }
case "$only" in ""|rpmp|sort) ;; *) echo "run-jvm-bench: --only rpmp|sort" >&2; exit 2 ;; esac
if [[ $peer_no_tokens -eq 1 ]]; then
  [[ -z "$old_build$old_repo" && $insecure -eq 0 && "$only" != sort ]] || {
    echo "run-jvm-bench: --peer-no-tokens takes no --old-build, --insecure or --only sort" >&2; exit 2; }
  old_build=$build old_repo=$repo
fi
if [[ -n "$old_build$old_repo" ]]; then
  [[ -n "$old_build" && -n "$old_repo" && "$only" != sort ]] || {
    echo "run-jvm-bench: --old-build and --old-repo go together, without --only sort" >&2; exit 2; }
  old_build=$(cd "$old_build" && pwd) old_repo=$(cd "$old_repo" && pwd)
  for f in "$old_build/jars/rpmp-spark.jar" "$old_build/bin/rpmp-server" "$old_repo/deploy/local-cluster.sh"; do
    [[ -e "$f" ]] || { echo "run-jvm-bench: missing $f" >&2; exit 2; }
  done
fi

build=$(cd "$build" && pwd)
jar="$build/jars/rpmp-spark.jar" bench_jar="$build/jars/rpmp-spark-bench.jar"
for f in "$jar" "$bench_jar" "$build/bin/rpmp-server" "$build/bin/rpmp-proxy"; do
  [[ -e "$f" ]] || { echo "run-jvm-bench: missing $f (build with -DRPMP_JAVA=ON)" >&2; exit 2; }
done
spark_submit=${SPARK_SUBMIT:-$(command -v spark-submit || true)}
[[ -x "$spark_submit" ]] || { echo "run-jvm-bench: spark-submit not found" >&2; exit 2; }
# A pip-installed spark-submit finds its Spark through the python3 first on PATH: its own.
export PATH="$(dirname "$spark_submit"):$PATH"
py=$(dirname "$spark_submit")/python3
[[ -x "$py" ]] || py=$(command -v python3)
spark_home=$("$py" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null || true)

work=$(mktemp -d /tmp/rpmp-jvm-bench.XXXXXX)
mkdir -p "$work/events" "$work/local" "$work/jfr"
# Ports: RPMP_BASE_PORT (and +100 for the old build's cluster) when set, else reserved
# blocks (tests/lib/port_block.sh), so that a run beside the test suite takes no port of it.
# shellcheck source=../../tests/lib/port_block.sh
source "$repo/tests/lib/port_block.sh"
blocks=()
if [[ -z "${RPMP_BASE_PORT:-}" ]]; then
  reserve_port_block || { echo "run-jvm-bench: no free port block" >&2; exit 1; }
  blocks+=("$PORT_BLOCK") RPMP_BASE_PORT=$PORT_BLOCK old_base=""
  if [[ -n "$old_build" ]]; then
    reserve_port_block || { echo "run-jvm-bench: no free port block" >&2; PORT_BLOCK=${blocks[0]} release_port_block; exit 1; }
    blocks+=("$PORT_BLOCK") old_base=$PORT_BLOCK
  fi
else
  old_base=$((RPMP_BASE_PORT + 100))
fi
export RPMP_BASE_PORT RPMP_RUN_DIR="$work/cluster" RPMP_BIN_DIR="$build/bin"
# Each server holds a third of a shuffle (times the replicas); a run's namespaces go at its
# end. Pools take RAM (/dev/shm) up front: no bigger than the largest job needs.
export RPMP_POOL_SIZE=${RPMP_POOL_SIZE:-$(awk -v s="$scale" -v r="$replicas" \
  'BEGIN { g = int(s * 1.5 * r + 0.999); if (g < 1) g = 1; print g "g" }')}
# A loaded shared machine must not make the proxies declare live servers dead mid-run.
# Steady state: a long-running server's pools have been written through, and devdax
# pages cost no first-touch fault; a fresh tmpfs pool would charge every page's fault to
# the first job (about 3 CPU-seconds a 1 GB shuffle here). --no-prefault measures that.
export RPMP_PREFAULT=$prefault
export RPMP_PROXY_FLAGS=${RPMP_PROXY_FLAGS:---heartbeat-timeout 30s --suspect-after 15s --heartbeat-interval 1s --session-ttl 10}
cluster_up=0 old_up=0 failed=0 app_ids=()
# old_cluster ARGS...: the older checkout's local-cluster.sh on its own ports, run dir, binaries.
old_cluster() {
  RPMP_BASE_PORT=$old_base RPMP_RUN_DIR="$work/old-cluster" RPMP_BIN_DIR="$old_build/bin" \
    RPMP_ISSUE_TOKENS=$((1 - peer_no_tokens)) "$old_repo/deploy/local-cluster.sh" "$@"
}
cleanup() {
  if [[ $cluster_up -eq 1 ]]; then "$repo/deploy/local-cluster.sh" stop --wipe >/dev/null 2>&1 || true; fi
  if [[ $old_up -eq 1 ]]; then old_cluster stop --wipe >/dev/null 2>&1 || true; fi
  if [[ -n "$spark_home" ]]; then
    for id in "${app_ids[@]}"; do [[ -n "$id" ]] && rm -rf "${spark_home:?}/work/$id"; done
  fi
  if [[ $keep -eq 1 || $failed -ne 0 || $jfr -eq 1 ]]; then echo "work dir kept: $work"; else rm -rf "$work"; fi
  for b in "${blocks[@]}"; do PORT_BLOCK=$b release_port_block; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ "$only" != sort ]]; then
  cluster_up=1
  security=--tls
  [[ $insecure -eq 1 ]] && security=--insecure
  "$repo/deploy/local-cluster.sh" start "$security" > "$work/cluster-start.log" 2>&1 || {
    failed=1; cat "$work/cluster-start.log" >&2; exit 1; }
  proxies=$(sed -n 's/^RPMP_PROXIES=//p' "$work/cluster-start.log" | tail -1)
fi
old_env=()
if [[ -n "$old_build" ]]; then
  old_up=1
  old_cluster start "$security" > "$work/old-cluster-start.log" 2>&1 || {
    failed=1; cat "$work/old-cluster-start.log" >&2; exit 1; }
  old_proxies=$(sed -n 's/^RPMP_PROXIES=//p' "$work/old-cluster-start.log" | tail -1)
  for v in RPMP_SECRET_FILE RPMP_TLS_DIR; do
    val=$(sed -n "s/^$v=//p" "$work/old-cluster-start.log" | tail -1)
    [[ $insecure -eq 1 || -n "$val" ]] || { failed=1; cat "$work/old-cluster-start.log" >&2; echo "old cluster: no $v" >&2; exit 1; }
    old_env+=("$v=$val")
  done
fi
if [[ "$only" != sort && $insecure -eq 0 ]]; then
  # The cluster is secured: the executors' librpmp reads the secret from RPMP_SECRET_FILE.
  RPMP_SECRET_FILE=$(sed -n 's/^RPMP_SECRET_FILE=//p' "$work/cluster-start.log" | tail -1)
  [[ -n "$RPMP_SECRET_FILE" ]] || { failed=1; cat "$work/cluster-start.log" >&2; echo "no RPMP_SECRET_FILE" >&2; exit 1; }
  export RPMP_SECRET_FILE
  # ... and the proxies serve mutual TLS: the driver's and executors' librpmp present the
  # application's client certificate from RPMP_TLS_DIR.
  RPMP_TLS_DIR=$(sed -n 's/^RPMP_TLS_DIR=//p' "$work/cluster-start.log" | tail -1)
  [[ -n "$RPMP_TLS_DIR" ]] || { failed=1; cat "$work/cluster-start.log" >&2; echo "no RPMP_TLS_DIR" >&2; exit 1; }
  export RPMP_TLS_DIR
fi
[[ $insecure -eq 0 ]] || unset RPMP_SECRET_FILE RPMP_TLS_DIR

common=(--master "$master" --driver-memory "$driver_memory" --executor-memory "$executor_memory"
  --class io.rpmp.bench.ShuffleBench
  --conf spark.ui.enabled=false
  --conf spark.eventLog.enabled=true --conf "spark.eventLog.dir=file://$work/events"
  --conf spark.eventLog.compress=false --conf spark.eventLog.rolling.enabled=false
  --conf spark.eventLog.logStageExecutorMetrics=true
  --conf spark.executor.metrics.pollingInterval=200ms
  --conf "spark.local.dir=$work/local" --conf spark.speculation=false
  --conf spark.network.timeout=600s --conf spark.executor.heartbeatInterval=30s)
common+=("${common_extra[@]}")
rpmp=(--conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager
  --conf "spark.rpmp.proxies=${proxies:-}" --conf "spark.rpmp.replicas=$replicas"
  --conf spark.rpmp.fallback=fail
  --conf "spark.driver.extraClassPath=$jar" --conf "spark.executor.extraClassPath=$jar")
rpmp+=("${rpmp_extra[@]}")
old_jar="$old_build/jars/rpmp-spark.jar"
rpmp_old=(--conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager
  --conf "spark.rpmp.proxies=${old_proxies:-}" --conf "spark.rpmp.replicas=$replicas"
  --conf spark.rpmp.fallback=fail
  --conf "spark.driver.extraClassPath=$old_jar" --conf "spark.executor.extraClassPath=$old_jar")
rpmp_old+=("${rpmp_extra[@]}")

rows_for() {  # job -> rows at --scale
  local base
  case "$1" in terasort) base=10000000 ;; agg) base=20000000 ;; join) base=5000000 ;; esac
  "$py" -c "import sys; print(max(1000, int(float(sys.argv[1]) * int(sys.argv[2]))))" "$scale" "$base"
}
parts_for() {
  if [[ -n "$partitions" ]]; then echo "$partitions"; elif [[ "$1" == agg ]]; then echo 2000; else echo 200; fi
}

echo "== RPMP JVM shuffle benchmark ($(date -u '+%Y-%m-%d %H:%M:%S UTC'))"
echo "jobs=$jobs rounds=$rounds scale=$scale replicas=$replicas master=$master" \
  "executor_memory=$executor_memory driver_memory=$driver_memory" \
  "spark=$("$py" -c 'import pyspark; print(pyspark.__version__)')"
for j in ${jobs//,/ }; do echo "job $j: rows=$(rows_for "$j") shuffle_partitions=$(parts_for "$j")"; done
echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2 " GiB RAM, " $7 " GiB available"}'); uptime:$(uptime)"
[[ "$only" == sort ]] || echo "rpmp: local cluster (3 servers, pools $RPMP_POOL_SIZE on /dev/shm, security $([[ $insecure -eq 1 ]] && echo off || echo "on: secret + mutual TLS"), pools prefaulted: $([[ $prefault -eq 1 ]] && echo yes || echo no)) proxies=$proxies; rpmp conf: ${rpmp_extra[*]:-(defaults)}"
if [[ $peer_no_tokens -eq 1 ]]; then
  echo "rpmp-old: this build on a second local cluster whose proxies issue no tenant tokens (executors prove the cluster secret) proxies=$old_proxies"
elif [[ -n "$old_build" ]]; then
  echo "rpmp-old: $(git -C "$old_repo" log -1 --format='%h %ad' --date=short) from $old_build, its own local cluster (same pools and security) proxies=$old_proxies"
fi
[[ ${#common_extra[@]} -eq 0 ]] || echo "extra conf (both): ${common_extra[*]}"
echo "work dir: $work"

results="$work/results.jsonl"
: > "$results"
# run_one JOB SHUFFLE ROUND [PARTITIONS]: one spark-submit; appends its figures to results.
run_one() {
  local job=$1 shuffle=$2 round=$3 parts=${4:-$(parts_for "$1")}
  local log="$work/$job-$shuffle-$round-$parts.log" rc=0 line args=("${common[@]}") envs=()
  [[ "$shuffle" == rpmp ]] && args+=("${rpmp[@]}")
  [[ "$shuffle" == rpmp-old ]] && { args+=("${rpmp_old[@]}"); envs=("${old_env[@]}"); }
  if [[ $jfr -eq 1 && "$round" == 1 ]]; then
    args+=(--conf "spark.executor.extraJavaOptions=-XX:StartFlightRecording=filename=$work/jfr/$job-$shuffle-{{EXECUTOR_ID}}.jfr,settings=profile,dumponexit=true")
  fi
  env "${envs[@]}" "$spark_submit" "${args[@]}" "$bench_jar" --job "$job" --rows "$(rows_for "$job")" \
    --partitions "$parts" > "$log" 2>&1 || rc=$?
  line=$(grep -a '^BENCH_RESULT ' "$log" | tail -1 | cut -d' ' -f2- || true)
  if [[ -z "$line" || $rc -ne 0 ]]; then
    echo "job=$job shuffle=$shuffle round=$round FAILED (exit $rc; log $log)"
    tail -25 "$log" | sed 's/^/  | /'
    failed=1
    return
  fi
  app_ids+=("$("$py" -c 'import json,sys; print(json.loads(sys.argv[1])["app_id"])' "$line")")
  if [[ "$shuffle" == rpmp* ]] && ! grep -q "stored in RPMP namespace" "$log"; then
    echo "job=$job shuffle=$shuffle round=$round FAILED: shuffle not stored in RPMP (log $log)"
    failed=1
  fi
  # --peer-no-tokens: each side must have run as labelled (the driver's log says which).
  if [[ $peer_no_tokens -eq 1 ]]; then
    local want="RPMP credential for .* issued"
    [[ "$shuffle" == rpmp-old ]] && want="RPMP proxies issue no per-application credentials"
    grep -q "$want" "$log" || { echo "job=$job shuffle=$shuffle round=$round FAILED: no '$want' in $log"; failed=1; }
  fi
  "$py" "$here/bench_eventlog.py" record "$line" "$shuffle" "$round" "$work/events" "$results" || failed=1
}

for j in ${jobs//,/ }; do
  for ((i = 1; i <= rounds; i++)); do
    if (( i % 2 == 1 )); then order=(rpmp sort); else order=(sort rpmp); fi
    # With an old build: rotate the three so each goes first, second and last in turn.
    if [[ -n "$old_build" ]]; then
      case $((i % 3)) in 1) order=(rpmp rpmp-old sort) ;; 2) order=(rpmp-old sort rpmp) ;; 0) order=(sort rpmp rpmp-old) ;; esac
    fi
    for s in "${order[@]}"; do
      [[ -z "$only" || "$only" == "${s%-old}" ]] || continue
      run_one "$j" "$s" "$i"
    done
  done
done
if [[ -n "$heap_sweep" && "$only" != sort ]]; then
  echo "== heap sweep: agg job on RPMP at partitions $heap_sweep"
  for p in ${heap_sweep//,/ }; do run_one agg rpmp "sweep" "$p"; done
fi

echo "== summary; uptime:$(uptime)"
"$py" "$here/bench_eventlog.py" summary "$results" || failed=1
if [[ $failed -ne 0 ]]; then echo "run-jvm-bench: FAILED"; exit 1; fi
echo "run-jvm-bench: all runs validated"
