#!/usr/bin/env bash
# Long-application test of sessions (issue 23, docs/security.md "How a session ends"):
# one Spark application of 100 queries x 3 shuffles (spark_sessions_job.py, >= 300 shuffles)
# on a local RPMP cluster (deploy/local-cluster.sh: etcd + 2 rpmp-proxy + 3 rpmp-server
# with pools of 512 MiB: issue 24's "100 SQL queries on 3 x 512 MiB" workload)
# with spark-submit --master local-cluster[2,1,1024], and the same application on Spark's
# sort shuffle (--master local[2]). Checks every job's result is the same, and from each server's metrics
# that sessions are per JVM, not per shuffle: no client (driver, spark-executor-N) ever
# held more than 2 sessions at once on any server, few sessions were opened in all, and
# no HELLO was refused by max_sessions_per_address. Prints "N passed, M failed"; exits
# non-zero on any failure, and 1 when a prerequisite (spark-submit, etcd, rpmp-proxy) is
# missing (a failure, never a skip).
#   spark-plugin/src/test/integration/run-spark-sessions-it.sh <cmake build dir>
set -euo pipefail
build_dir=$(cd "${1:?usage: run-spark-sessions-it.sh <cmake build dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
jobs=${RPMP_SESSIONS_JOBS:-100}
source "$here/spark-it-prereqs.sh"
# shellcheck source=spark-it-checks.sh
source "$here/spark-it-checks.sh"
spark_it_prereqs "$build_dir" rpmp-server rpmpctl rpmp-proxy etcd curl

work=$(mktemp -d /tmp/rpmp-spark-sessions-it.XXXXXX)
# shellcheck source=rpmp-cluster-lib.sh
source "$here/rpmp-cluster-lib.sh"
export RPMP_POOL_SIZE=${RPMP_POOL_SIZE:-512m}
start_rpmp_cluster "$work" "$build_dir" "$repo" "$python_bin"

common=(--driver-memory 1g
  --conf spark.ui.enabled=false --conf spark.sql.adaptive.enabled=false
  --conf spark.sql.shuffle.partitions=2)
# The reference run needs no executor JVMs: same queries, same sort shuffle, less time.
cluster=(--master "local-cluster[2,1,1024]") local=(--master "local[2]")
rpmp=(--conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager
  --conf "spark.rpmp.proxies=$RPMP_PROXIES" --conf spark.rpmp.replicas=2 --conf spark.rpmp.ttl=1h
  --conf spark.rpmp.fallback=fail
  --conf "spark.driver.extraClassPath=$jar" --conf "spark.executor.extraClassPath=$jar")

start=$(date +%s)
echo "== RPMP shuffle, $jobs jobs x 3 shuffles (proxies $RPMP_PROXIES)"
"$spark_submit" "${cluster[@]}" "${common[@]}" "${rpmp[@]}" "$here/spark_sessions_job.py" "$work/rpmp.json" "$jobs" \
  > "$work/rpmp.log" 2>&1 || { tail -50 "$work/rpmp.log"; echo "RPMP run failed"; exit 1; }
echo "== Spark sort shuffle (local[2])"
"$spark_submit" "${local[@]}" "${common[@]}" "$here/spark_sessions_job.py" "$work/sort.json" "$jobs" \
  > "$work/sort.log" 2>&1 || { tail -50 "$work/sort.log"; echo "sort run failed"; exit 1; }


read -r n ndiff first <<<"$(results_match "$work/rpmp.json" "$work/sort.json")"
if [[ "$n" == "$jobs" && "$ndiff" == 0 ]]; then ok "$n jobs: every result equals Spark's sort shuffle"
else bad "$ndiff of $n jobs differ from Spark's sort shuffle (first: ${first:-none})"; fi

shuffles=$(grep -c "Shuffle .* stored in RPMP namespace" "$work/rpmp.log" || true)
if [[ "$shuffles" -ge $((3 * jobs)) ]]; then ok "$shuffles shuffles stored in RPMP"
else bad "only $shuffles shuffles stored in RPMP (expected >= $((3 * jobs)))"; fi

# Each server's metrics (local-cluster.sh: BASE+30..32).
metric() {  # URL NAME [LABELS]: the sum of the series named NAME (with LABELS, if given)
  curl -sf "$1" | awk -v n="$2" -v l="${3:-}" '$1 == n || index($1, n "{") == 1 { if (l == "" || index($1, l)) s += $2 } END { print s + 0 }'
}
for i in 0 1 2; do
  url="http://127.0.0.1:$((RPMP_BASE_PORT + 30 + i))/metrics"
  per_client=$(metric "$url" rpmp_server_sessions_per_client_max)
  opened=$(metric "$url" rpmp_server_sessions_opened_total)
  limited=$(metric "$url" rpmp_server_session_limit_refusals_total)
  refused=$(metric "$url" rpmp_server_session_refusals_total)
  echo "   server $i: sessions_per_client_max=$per_client sessions_opened=$opened limit_refusals=$limited session_refusals=$refused"
  if [[ "$per_client" -ge 1 && "$per_client" -le 2 ]]; then ok "server $i: no client held more than 2 sessions at once ($per_client)"
  else bad "server $i: a client held $per_client sessions at once (expected 1..2)"; fi
  # Driver + 2 executors, one session each per server, plus the servers' replica links
  # and a reconnect or two: far below one per shuffle.
  if [[ "$opened" -ge 1 && "$opened" -le 20 ]]; then ok "server $i: $opened sessions opened for $shuffles shuffles"
  else bad "server $i: $opened sessions opened for $shuffles shuffles (expected 1..20)"; fi
  if [[ "$limited" == 0 ]]; then ok "server $i: no HELLO refused by max_sessions_per_address"
  else bad "server $i: $limited HELLOs refused by max_sessions_per_address"; fi
done
if grep -q "frame does not belong to session\|too many sessions" "$work/rpmp.log"; then
  bad "the application saw refused sessions: $(grep -m1 "frame does not belong to session\|too many sessions" "$work/rpmp.log")"
else ok "no refused session in the application's log"; fi
echo "took $(( $(date +%s) - start )) s; logs in $work"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
