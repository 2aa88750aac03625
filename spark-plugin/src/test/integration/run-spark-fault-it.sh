#!/usr/bin/env bash
# Fault and dynamic-allocation integration test of the RPMP shuffle plugin on real Spark
# (spark-submit --master local-cluster[2,1,1024]) against a real local RPMP cluster
# (rpmp-cluster-lib.sh: etcd + 2 rpmp-proxy + 3 rpmp-server, spark.rpmp.replicas=2):
#  1. spark_fault_job.py: reduceByKey jobs with exactly known results while a reduce task
#     deletes a partition's object (both copies), while a map task kills server0 and
#     pauses server1 for 5 s, and while a reduce task kills server2. As an operator would,
#     the job restarts each killed server (same pool) once the proxies report it DEAD
#     and polls `rpmpctl nodes` until it is LIVE again, while its Spark job runs (a
#     namespace whose last in-sync member died waits for it: unavailable, never stale).
#     Every result must be exact; where data was truly gone the event log must show the
#     map stage rerun after a FetchFailed.
#  2. spark_dynalloc_job.py with spark.dynamicAllocation.enabled=true, shuffleTracking off,
#     no external shuffle service and spark.shuffle.sort.io.plugin.class=
#     io.rpmp.spark.RpmpShuffleDataIO: the executors that ran the map stage are released
#     (event log) and the reduce stage still gives the exact result on new executors.
# Prints "N passed, M failed"; exits non-zero on any failure. Needs what
# run-spark-cluster-it.sh needs (a missing prerequisite is a failure, never a skip).
#   spark-plugin/src/test/integration/run-spark-fault-it.sh <cmake build dir>
set -euo pipefail
build_dir=$(cd "${1:?usage: run-spark-fault-it.sh <cmake build dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
source "$here/spark-it-prereqs.sh"
# shellcheck source=spark-it-checks.sh
source "$here/spark-it-checks.sh"
spark_it_prereqs "$build_dir" rpmp-server rpmp-proxy rpmpctl etcd

# Small pools: these jobs shuffle a few MB, and a big pool takes long to create under load.
export RPMP_POOL_SIZE=${RPMP_POOL_SIZE:-256m}
work=$(mktemp -d /tmp/rpmp-spark-fault-it.XXXXXX)
# shellcheck source=rpmp-cluster-lib.sh
source "$here/rpmp-cluster-lib.sh"
start_rpmp_cluster "$work" "$build_dir" "$repo" "$python_bin"

common=(--master "local-cluster[2,1,1024]" --driver-memory 1g --py-files "$here/spark_it_job.py"
  --conf spark.ui.enabled=false
  --conf spark.eventLog.enabled=true --conf spark.eventLog.compress=false
  --conf spark.eventLog.rolling.enabled=false
  --conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager
  --conf "spark.rpmp.proxies=$RPMP_PROXIES" --conf spark.rpmp.replicas=2
  --conf spark.rpmp.ttl=1h --conf spark.rpmp.fallback=fail --conf spark.rpmp.pushBufferSize=64k
  --conf "spark.driver.extraClassPath=$jar" --conf "spark.executor.extraClassPath=$jar")
mkdir "$work/events-fault" "$work/events-dynalloc"

field() { "$python_bin" -c 'import json,sys; d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d=d[k]
print(d)' "$1" "$2"; }

echo "== faults during map and reduce stages (proxies $RPMP_PROXIES)"
if "$spark_submit" "${common[@]}" --conf "spark.eventLog.dir=$work/events-fault" \
    "$here/spark_fault_job.py" "$work/fault.json" > "$work/fault.log" 2>&1; then
  expected=$(field "$work/fault.json" expected)
  for g in data-lost map-faults reduce-kill; do
    if [[ $(field "$work/fault.json" "results.$g") == "$expected" ]]; then
      ok "$g: exact result ($(field "$work/fault.json" "spark.$g.map_stage_attempts") map stage attempts, $(field "$work/fault.json" "spark.$g.reduce_fetch_failed") FetchFailed)"
    else bad "$g: result differs"; fi
  done
  # The job's shuffles (PySpark: no JVM map-side combine, few partitions) take the bypass
  # writer, so the faults above hit its appends.
  writers=$(grep -o "stored in RPMP namespace .*map writer [a-z]*" "$work/fault.log" | sed 's/.*map writer //' | sort | uniq -c | xargs)
  if [[ "$writers" =~ ^[0-9]+\ bypass$ ]]; then ok "map writer under the faults: bypass ($writers)"
  else bad "map writer under the faults: expected bypass only, got '$writers'"; fi
  for f in lost map map-restart reduce reduce-restart; do
    echo "     fault $f: $(field "$work/fault.json" "faults.$f")"
  done
  rerun=$("$python_bin" -c 'import json,sys; r=json.load(open(sys.argv[1]))["spark"]["data-lost"]
print(int(max(r["map_stage_attempts"]) >= 1 and r["reduce_fetch_failed"] >= 1 and r["map_task_starts_in_later_attempts"] > 0))' "$work/fault.json")
  if [[ $rerun == 1 ]]; then ok "data truly gone: FetchFailed and a map-stage rerun in the event log"
  else bad "data truly gone but no FetchFailed + map-stage rerun: $(field "$work/fault.json" spark.data-lost)"; fi
else
  grep -n "WRONG RESULT\|Error\|Exception" "$work/fault.log" | tail -20
  bad "fault job failed (see $work/fault.log)"
fi

echo "== dynamic allocation without an external shuffle service"
if "$spark_submit" "${common[@]}" --conf "spark.eventLog.dir=$work/events-dynalloc" \
    --conf spark.dynamicAllocation.enabled=true \
    --conf spark.dynamicAllocation.shuffleTracking.enabled=false \
    --conf spark.shuffle.service.enabled=false \
    --conf spark.shuffle.sort.io.plugin.class=io.rpmp.spark.RpmpShuffleDataIO \
    --conf spark.dynamicAllocation.minExecutors=0 --conf spark.dynamicAllocation.initialExecutors=2 \
    --conf spark.dynamicAllocation.maxExecutors=2 \
    --conf spark.dynamicAllocation.executorIdleTimeout=2s \
    --conf spark.dynamicAllocation.schedulerBacklogTimeout=1s \
    "$here/spark_dynalloc_job.py" "$work/dynalloc.json" > "$work/dynalloc.log" 2>&1; then
  d="$work/dynalloc.json"
  if [[ $(field "$d" result) == "$(field "$d" expected)" ]]; then ok "dynamic allocation: exact result after the executors were released"
  else bad "dynamic allocation: result differs"; fi
  released=$("$python_bin" -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(int(bool(d["map_executors"]) and set(d["map_executors"]) <= set(d["executors_removed"]) and d["map_stage_submissions"] == 1))' "$d")
  if [[ $released == 1 ]]; then ok "map-stage executors $(field "$d" map_executors) released (removed: $(field "$d" executors_removed)); map stage not rerun"
  else bad "map-stage executors not released or map stage rerun: $(cat "$d")"; fi
else
  grep -n "Error\|Exception" "$work/dynalloc.log" | tail -20
  bad "dynamic allocation job failed (see $work/dynalloc.log)"
fi

if left=$("$build_dir/bin/rpmpctl" --proxy "$RPMP_PROXIES" ns ls spark/ 2>&1); then
  if [[ -z "$left" ]]; then ok "no spark/ namespaces left in RPMP"
  else bad "namespaces left in RPMP after the apps: $left"; fi
else
  bad "rpmpctl ns ls failed: $left"
fi
echo "logs in $work"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
