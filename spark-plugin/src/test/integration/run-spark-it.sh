#!/usr/bin/env bash
# Integration test of the RPMP shuffle plugin on real Spark: starts an rpmp-server,
# runs spark_it_job.py with spark-submit --master local-cluster[2,1,1024] once with
# spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager and once with Spark's sort
# shuffle, and compares the results. Needs pyspark==4.2.0 (spark-submit on PATH or
# SPARK_SUBMIT set) and a build with <build>/bin/rpmp-server and <build>/jars/rpmp-spark.jar.
#   spark-plugin/src/test/integration/run-spark-it.sh <cmake build dir>
set -euo pipefail
build_dir=$(cd "${1:?usage: run-spark-it.sh <cmake build dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/spark-it-prereqs.sh"
spark_it_prereqs "$build_dir" rpmp-server

work=$(mktemp -d /tmp/rpmp-spark-it.XXXXXX)
source "$here/rpmp-server-lib.sh"
trap stop_rpmp_server EXIT
start_rpmp_server "$work" "$build_dir" "$python_bin" 2G
port=$RPMP_SERVER_PORT

source "$here/spark-it-common.sh"
common=("${spark_it_common[@]}")
# Each run logs its events (JSON lines) to its own directory; the job reads them back.
mkdir "$work/events-rpmp"
rpmp=(--conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager
  --conf "spark.rpmp.server=127.0.0.1:$port" --conf spark.rpmp.fallback=fail
  --conf spark.rpmp.pushBufferSize=256k --conf spark.rpmp.writer.sortRunSize=256k
  --conf "spark.driver.extraClassPath=$jar" --conf "spark.executor.extraClassPath=$jar")

echo "== RPMP shuffle (server 127.0.0.1:$port)"
"$spark_submit" "${common[@]}" "${rpmp[@]}" --conf "spark.eventLog.dir=$work/events-rpmp" \
  "$here/spark_it_job.py" "$work/rpmp.json" > "$work/rpmp.log" 2>&1 \
  || { tail -50 "$work/rpmp.log"; echo "RPMP run failed"; exit 1; }
sort_reference "$spark_submit" "$here" "$work" || exit 1

grep -q "Shuffle .* stored in RPMP namespace" "$work/rpmp.log" \
  || { echo "RPMP run did not use RPMP"; exit 1; }
passed=0 failed=0
for check in $("$python_bin" -c 'import json,sys; print(" ".join(k for k in sorted(json.load(open(sys.argv[1]))) if "executor" not in k))' "$work/sort.json"); do
  a=$("$python_bin" -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$work/rpmp.json" "$check")
  b=$("$python_bin" -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$work/sort.json" "$check")
  if [[ "$a" == "$b" ]]; then echo "ok   $check"; passed=$((passed+1));
  else echo "FAIL $check: rpmp=$a sort=$b"; failed=$((failed+1)); fi
done
# Executor loss mid-reduce (from each run's event log): on RPMP the map stage ran once and
# no map task ran again; the reduce stage lost a task to the killed executor. Sort shuffle
# is printed as contrast only (it normally fetch-fails and resubmits the map stage).
loss_report=$("$python_bin" - "$work/rpmp.json" "$work/sort.json" <<'PY'
import json, sys
rpmp, sort = (json.load(open(p))["executor_loss"] for p in sys.argv[1:])
def show(name, r):
    print("     %s: killed executor pid %s; map stage attempts %s, map task starts %d "
          "(%d after the loss, %d in later attempts); reduce stage attempts %s, tasks lost "
          "to the executor %s with %d of %d reduce tasks unfinished, %d FetchFailed, "
          "%d reduce task starts after the loss; executors removed %s" % (
          name, r["killed_executor_pid"], r["map_stage_attempts"], r["map_task_starts"],
          r["map_task_starts_after_loss"], r["map_task_starts_in_later_attempts"],
          r["reduce_stage_attempts"], r["reduce_tasks_lost"], r["reduce_unfinished_at_loss"] or 0,
          r["reduce_tasks"], r["reduce_fetch_failed"], r["reduce_task_starts_after_loss"],
          r["executors_removed"]))
show("rpmp", rpmp)
show("sort", sort)
def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
check(bool(rpmp["killed_executor_pid"]) and bool(rpmp["reduce_tasks_lost"]),
      "executor JVM killed mid-reduce on RPMP (the reduce stage lost a task to it)")
check(rpmp["map_stage_attempts"] == [0] and rpmp["map_task_starts_in_later_attempts"] == 0
      and rpmp["map_task_starts_after_loss"] == 0,
      "executor loss keeps RPMP map outputs (map stage submitted once, no map task rerun)")
PY
) || { echo "$loss_report"; echo "FAIL reading the executor-loss results"; exit 1; }
echo "$loss_report"
passed=$((passed + $(grep -c '^ok ' <<<"$loss_report" || true)))
failed=$((failed + $(grep -c '^FAIL ' <<<"$loss_report" || true)))
echo "logs in $work"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
