#!/usr/bin/env bash
# Cluster-mode integration test of the RPMP shuffle plugin on real Spark: starts a local
# RPMP cluster (deploy/local-cluster.sh: etcd + 2 rpmp-proxy + 3 rpmp-server, in its own
# run dir on a free port range), runs spark_it_job.py with spark-submit --master
# local-cluster[2,1,1024] once with spark.rpmp.proxies (spark.rpmp.replicas=2) and once
# with Spark's sort shuffle, compares the results, checks the shuffles were stored with
# 2 replicas and that nothing of the app is left in RPMP afterwards (`rpmpctl ns ls
# spark/` empty). Prints "N passed, M failed"; exits non-zero on any failure.
# Needs pyspark==4.2.0 (spark-submit on PATH or SPARK_SUBMIT), etcd, and a build with
# <build>/bin/{rpmp-server,rpmp-proxy,rpmpctl} and <build>/jars/rpmp-spark.jar; exits 1
# (a failure, never a skip) when one is missing (spark-it-prereqs.sh).
#   spark-plugin/src/test/integration/run-spark-cluster-it.sh <cmake build dir>
set -euo pipefail
build_dir=$(cd "${1:?usage: run-spark-cluster-it.sh <cmake build dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
source "$here/spark-it-prereqs.sh"
# shellcheck source=spark-it-checks.sh
source "$here/spark-it-checks.sh"
spark_it_prereqs "$build_dir" rpmp-server rpmpctl rpmp-proxy etcd

work=$(mktemp -d /tmp/rpmp-spark-cluster-it.XXXXXX)
# shellcheck source=rpmp-cluster-lib.sh
source "$here/rpmp-cluster-lib.sh"
start_rpmp_cluster "$work" "$build_dir" "$repo" "$python_bin"
proxies=$RPMP_PROXIES
rpmpctl=("$build_dir/bin/rpmpctl" --proxy "$proxies")

source "$here/spark-it-common.sh"
common=("${spark_it_common[@]}")
# Each run logs its events to its own directory; spark_it_job.py reads them back.
mkdir "$work/events-rpmp"
rpmp=(--conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager
  --conf "spark.rpmp.proxies=$proxies" --conf spark.rpmp.replicas=2 --conf spark.rpmp.ttl=1h
  --conf spark.rpmp.fallback=fail --conf spark.rpmp.pushBufferSize=256k
  --conf "spark.driver.extraClassPath=$jar" --conf "spark.executor.extraClassPath=$jar")

echo "== RPMP shuffle, cluster mode (proxies $proxies)"
"$spark_submit" "${common[@]}" "${rpmp[@]}" --conf "spark.eventLog.dir=$work/events-rpmp" \
  "$here/spark_it_job.py" "$work/rpmp.json" \
  > "$work/rpmp.log" 2>&1 || { tail -50 "$work/rpmp.log"; echo "RPMP run failed"; exit 1; }
sort_reference "$spark_submit" "$here" "$work" || exit 1


stored=$(grep -c "Shuffle .* stored in RPMP namespace spark/.* (replicas 2 on nodes" "$work/rpmp.log" || true)
if [[ "$stored" -gt 0 ]]; then ok "$stored shuffles stored in RPMP with 2 replicas"
else bad "RPMP run did not store shuffles with 2 replicas"; fi

for check in $("$python_bin" -c 'import json,sys; print(" ".join(k for k in sorted(json.load(open(sys.argv[1]))) if "executor" not in k))' "$work/sort.json"); do
  a=$("$python_bin" -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$work/rpmp.json" "$check")
  b=$("$python_bin" -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$work/sort.json" "$check")
  if [[ "$a" == "$b" ]]; then ok "$check"; else bad "$check: rpmp=$a sort=$b"; fi
done
# Executor JVM killed mid-reduce (spark_it_job.py, from the event log): on RPMP in
# cluster mode the map stage ran once and no map task ran again.
loss=$("$python_bin" -c '
import json, sys
r = json.load(open(sys.argv[1]))["executor_loss"]
killed = bool(r["killed_executor_pid"]) and bool(r["reduce_tasks_lost"])
kept = r["map_stage_attempts"] == [0] and r["map_task_starts_in_later_attempts"] == 0 and r["map_task_starts_after_loss"] == 0
print("%d %d %s" % (killed, kept, r["map_stage_attempts"]))' "$work/rpmp.json")
read -r killed kept attempts <<<"$loss"
if [[ "$killed" == 1 ]]; then ok "executor JVM killed mid-reduce on RPMP (cluster mode)"
else bad "no executor was lost mid-reduce"; fi
if [[ "$kept" == 1 ]]; then ok "executor loss keeps RPMP map outputs (map stage attempts $attempts, no map task rerun)"
else bad "executor loss made RPMP rerun map work (map stage attempts $attempts)"; fi

# Nothing of the app (nor of any Spark app) left: stop() deleted spark/<appId>-<runId> recursively.
if left=$("${rpmpctl[@]}" ns ls spark/ 2>&1); then
  if [[ -z "$left" ]]; then ok "no spark/ namespaces left in RPMP"
  else bad "namespaces left in RPMP after the app: $left"; fi
else
  bad "rpmpctl ns ls failed: $left"
fi
echo "logs in $work"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
