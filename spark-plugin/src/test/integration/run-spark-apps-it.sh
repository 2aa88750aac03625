#!/usr/bin/env bash
# Several Spark applications at once on one RPMP cluster, and one of them crashing
# (docs/spark-plugin.md, "What survives what"): a local RPMP cluster (rpmp-cluster-lib.sh:
# etcd + 2 rpmp-proxy + 3 rpmp-server, spark.rpmp.replicas=2) serves three applications
# started together, each spark-submit --master local-cluster[1,1,1024]:
#  - two that run JOBS queries of three shuffles each (spark_sessions_job.py, each on
#    its own data) to the end;
#  - a third, with spark.rpmp.ttl=TTL, whose driver JVM is killed (SIGKILL) once it has
#    stored shuffles and the other two are shuffling too.
# Checks: both survivors' results equal Spark's sort shuffle on the same queries; each
# stored at least 3 x JOBS shuffles; the killed driver's executors exit; its namespaces,
# which nothing deletes, expire after its TTL (polled, with a deadline); afterwards no
# spark/ namespace is left and all 3 servers are LIVE. Prints "N passed, M failed"; exits
# non-zero on any failure, and 1 when a prerequisite is missing (a failure, never a skip).
#   spark-plugin/src/test/integration/run-spark-apps-it.sh <cmake build dir>
#   env: RPMP_APPS_JOBS (20 per survivor), RPMP_APPS_VICTIM_TTL (10, seconds)
set -euo pipefail
build_dir=$(cd "${1:?usage: run-spark-apps-it.sh <cmake build dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
jobs=${RPMP_APPS_JOBS:-20}
ttl=${RPMP_APPS_VICTIM_TTL:-10}
source "$here/spark-it-prereqs.sh"
# shellcheck source=spark-it-checks.sh
source "$here/spark-it-checks.sh"
spark_it_prereqs "$build_dir" rpmp-server rpmpctl rpmp-proxy etcd

work=$(mktemp -d /tmp/rpmp-spark-apps-it.XXXXXX)
app_pids=() victim_family=()
# Whatever of ours is still running when the script ends (a failure midway) goes first,
# then the cluster (rpmp-cluster-lib.sh's trap, called from this one).
cleanup() {
  local p
  for p in "${app_pids[@]}" "${victim_family[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  stop_rpmp_cluster
}
# shellcheck source=rpmp-cluster-lib.sh
source "$here/rpmp-cluster-lib.sh"
export RPMP_POOL_SIZE=${RPMP_POOL_SIZE:-256m}
start_rpmp_cluster "$work" "$build_dir" "$repo" "$python_bin"
trap cleanup EXIT
rpmpctl=("$build_dir/bin/rpmpctl" --proxy "$RPMP_PROXIES")

# poll SECONDS WHAT CMD...: runs CMD every 0.2 s until it succeeds; false after SECONDS.
poll() {
  local secs=$1 what=$2 until
  until=$(( $(date +%s) + secs ))
  shift 2
  until "$@"; do
    if [[ $(date +%s) -gt $until ]]; then echo "   gave up after $secs s waiting for $what"; return 1; fi
    sleep 0.2
  done
}
# Every process below PID (children, theirs, ...): the driver's Python, its executors.
descendants() {
  local c
  for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do echo "$c"; descendants "$c"; done
}
alive() { local p; for p in "$@"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }

common=(--master "local-cluster[1,1,1024]" --driver-memory 1g --conf spark.ui.enabled=false
  --conf spark.sql.adaptive.enabled=false --conf spark.sql.shuffle.partitions=2)
rpmp=(--conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager
  --conf "spark.rpmp.proxies=$RPMP_PROXIES" --conf spark.rpmp.replicas=2
  --conf spark.rpmp.fallback=fail
  --conf "spark.driver.extraClassPath=$jar" --conf "spark.executor.extraClassPath=$jar")

start=$(date +%s)
echo "== three applications at once: a and b ($jobs jobs x 3 shuffles each), victim (ttl ${ttl}s, killed)"
"$spark_submit" "${common[@]}" "${rpmp[@]}" --conf spark.rpmp.ttl=1h \
  "$here/spark_sessions_job.py" "$work/a.json" "$jobs" 0 > "$work/a.log" 2>&1 &
a_pid=$!
"$spark_submit" "${common[@]}" "${rpmp[@]}" --conf spark.rpmp.ttl=1h \
  "$here/spark_sessions_job.py" "$work/b.json" "$jobs" "$jobs" > "$work/b.log" 2>&1 &
b_pid=$!
"$spark_submit" "${common[@]}" "${rpmp[@]}" --conf "spark.rpmp.ttl=${ttl}s" \
  "$here/spark_sessions_job.py" "$work/victim.json" 100000 1000 > "$work/victim.log" 2>&1 &
victim_pid=$!
app_pids=("$a_pid" "$b_pid" "$victim_pid")

stored() { grep -c "Shuffle .* stored in RPMP namespace" "$1" 2>/dev/null || true; }
# All three shuffling at once: the victim has finished two queries (6 shuffles), the
# survivors have each stored a shuffle. A run that ended already is a failure.
all_shuffling() {
  alive "$victim_pid" || { tail -30 "$work/victim.log"; echo "FAIL the victim ended by itself"; exit 1; }
  [[ $(grep -c "rpmp-sessions: job .* done" "$work/victim.log" || true) -ge 2 &&
     $(stored "$work/a.log") -ge 1 && $(stored "$work/b.log") -ge 1 ]]
}
if poll 600 "three applications shuffling at once" all_shuffling; then
  ok "three applications shuffling at once (stored so far: a $(stored "$work/a.log"), b $(stored "$work/b.log"), victim $(stored "$work/victim.log"))"
else
  tail -20 "$work/a.log" "$work/b.log" "$work/victim.log"; bad "the three applications did not all shuffle"; exit 1
fi

# The victim's namespaces: spark/<appId>-<runId>/<shuffleId>.
victim_prefix=$(grep -o "stored in RPMP namespace spark/[^/ ]*" "$work/victim.log" | head -1 | awk '{print $NF}')
[[ -n "$victim_prefix" ]] || { bad "no namespace in the victim's log"; exit 1; }
# How many are listed; "unknown" when rpmpctl fails (a leader election): never taken for 0.
victim_ns() {
  local out
  out=$("${rpmpctl[@]}" ns ls spark/ 2>/dev/null) || { echo unknown; return; }
  awk -v p="$victim_prefix/" 'index($1, p) == 1 {n++} END {print n + 0}' <<<"$out"
}

# The driver is spark-submit's JVM (spark-submit and spark-class exec into it).
[[ $(cat "/proc/$victim_pid/comm" 2>/dev/null) == java ]] || { bad "the victim's pid $victim_pid is not its driver JVM"; exit 1; }
mapfile -t victim_family < <(descendants "$victim_pid")
kill -9 "$victim_pid"
killed_at=$(date +%s)
wait "$victim_pid" 2>/dev/null || true
echo "   killed the victim's driver $victim_pid ($victim_prefix); its processes: ${victim_family[*]}"
before=$(victim_ns)
if [[ "$before" =~ ^[0-9]+$ && "$before" -ge 1 ]]; then ok "the killed driver left $before namespaces under $victim_prefix"
else bad "no namespace of the victim listed right after the kill"; fi
family_gone() { ! alive "${victim_family[@]}"; }
if poll 120 "the victim's executors and Python to exit" family_gone; then
  ok "the killed driver's ${#victim_family[@]} processes (executor, Python) exited on their own"
else
  bad "processes of the killed driver still running: ${victim_family[*]}"
fi
gone() { [[ $(victim_ns) == 0 ]]; }
if poll $((ttl + 60)) "the victim's namespaces to expire" gone; then
  ok "the victim's namespaces are gone $(( $(date +%s) - killed_at )) s after the kill (ttl ${ttl}s)"
else
  bad "the victim's namespaces still listed $((ttl + 60)) s after the kill: $(victim_ns)"
fi
# Gone by TTL expiry (the proxy leader logs it), not by anything else.
if grep -h "TTL expired, deleted namespaces" "$RPMP_RUN_DIR"/proxy*.log | grep -qF "$victim_prefix/"; then
  ok "the proxies' leader expired them by TTL"
else
  bad "no TTL expiry of $victim_prefix in the proxies' logs"
fi

for app in a b; do
  pid=$a_pid; [[ $app == b ]] && pid=$b_pid
  if wait "$pid"; then ok "application $app ended cleanly"
  else tail -30 "$work/$app.log"; bad "application $app failed (log: $work/$app.log)"; fi
done
app_pids=()

echo "== Spark sort shuffle (local[2]), the same $((2 * jobs)) queries"
"$spark_submit" --master "local[2]" --driver-memory 1g --conf spark.ui.enabled=false \
  --conf spark.sql.adaptive.enabled=false --conf spark.sql.shuffle.partitions=2 \
  "$here/spark_sessions_job.py" "$work/sort.json" $((2 * jobs)) 0 > "$work/sort.log" 2>&1 \
  || { tail -50 "$work/sort.log"; bad "the sort-shuffle run failed"; exit 1; }
for app in a b; do
  read -r n ndiff first <<<"$(results_match "$work/$app.json" "$work/sort.json")"
  if [[ "$n" == "$jobs" && "$ndiff" == 0 ]]; then ok "application $app: $n results equal Spark's sort shuffle"
  else bad "application $app: $ndiff of $n results differ from Spark's sort shuffle (first: ${first:-none})"; fi
  s=$(stored "$work/$app.log")
  if [[ "$s" -ge $((3 * jobs)) ]]; then ok "application $app stored $s shuffles in RPMP"
  else bad "application $app stored only $s shuffles (expected >= $((3 * jobs)))"; fi
done

if left=$("${rpmpctl[@]}" ns ls spark/ 2>&1); then
  if [[ -z "$left" ]]; then ok "no spark/ namespace left in RPMP"
  else bad "namespaces left in RPMP: $(echo "$left" | head -5 | tr '\n' ' ')"; fi
else
  bad "rpmpctl ns ls failed: $left"
fi
live=$("${rpmpctl[@]}" nodes 2>/dev/null | awk '$3 == "LIVE"' | wc -l)
if [[ "$live" == 3 ]]; then ok "all 3 servers LIVE after the crash"
else bad "$live of 3 servers LIVE after the crash"; fi
echo "took $(( $(date +%s) - start )) s; logs in $work"
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
