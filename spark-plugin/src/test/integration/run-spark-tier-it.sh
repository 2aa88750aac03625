#!/usr/bin/env bash
# A shuffle twice one node's fast pool, with 2 copies, on 3 nodes with a capacity tier
# (issue 24): a local RPMP cluster whose servers each have a 64 MiB pool on /dev/shm and
# a 256 MiB file pool of the capacity tier (RPMP_CAPACITY_POOL_SIZE), and a Spark job
# (spark_tier_job.py, local-cluster[2,1,1024]) shuffling about 128 MiB of 1 KiB rows
# with spark.rpmp.replicas=2: 256 MiB stored against 192 MiB of fast pools. Checks the
# job succeeds with the same count and sums as without the shuffle, that every node
# holds part of it, and that the capacity tier took what the fast pools could not.
# Prints "N passed, M failed"; exits non-zero on any failure.
#   spark-plugin/src/test/integration/run-spark-tier-it.sh <cmake build dir>
set -euo pipefail
build_dir=$(cd "${1:?usage: run-spark-tier-it.sh <cmake build dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
source "$here/spark-it-prereqs.sh"
# shellcheck source=spark-it-checks.sh
source "$here/spark-it-checks.sh"
spark_it_prereqs "$build_dir" rpmp-server rpmpctl rpmp-proxy etcd

rows=${RPMP_TIER_ROWS:-131072}  # x 1 KiB: twice the 64 MiB fast pool
work=$(mktemp -d /tmp/rpmp-spark-tier-it.XXXXXX)
# RPMP_TIER_CAPACITY: the capacity pool per server (default 256m; at least 69m; 96m makes
# the default shuffle larger than one node's whole pool).
export RPMP_POOL_SIZE=64m RPMP_CAPACITY_POOL_SIZE=${RPMP_TIER_CAPACITY:-256m}
# shellcheck source=rpmp-cluster-lib.sh
source "$here/rpmp-cluster-lib.sh"
start_rpmp_cluster "$work" "$build_dir" "$repo" "$python_bin"

echo "== RPMP shuffle of $rows KiB, replicas 2, 3 x ($RPMP_POOL_SIZE fast + $RPMP_CAPACITY_POOL_SIZE capacity)"
"$spark_submit" --master "local-cluster[2,1,1024]" --driver-memory 1g \
  --conf spark.ui.enabled=false --conf spark.shuffle.compress=false \
  --conf spark.sql.adaptive.enabled=false \
  --conf spark.cleaner.referenceTracking=false \
  --conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager \
  --conf "spark.rpmp.proxies=$RPMP_PROXIES" --conf spark.rpmp.replicas=2 \
  --conf spark.rpmp.fallback=fail \
  --conf "spark.driver.extraClassPath=$jar" --conf "spark.executor.extraClassPath=$jar" \
  "$here/spark_tier_job.py" "$work/result.json" "$rows" > "$work/rpmp.log" 2>&1 &
job=$!
# The job holds its shuffle until result.json.release exists: read the nodes meanwhile.
# (spark.cleaner.referenceTracking=false: Spark's ContextCleaner would otherwise delete the
# shuffle as soon as the driver's JVM collects its dependency; a CI run saw
# "Deleted RPMP namespace .../0" 2 s after the job, before the nodes were read.)
deadline=$((SECONDS + 900))
until [[ -f "$work/result.json" ]]; do
  kill -0 "$job" 2>/dev/null || { wait "$job" || true; tail -50 "$work/rpmp.log"; echo "FAIL the RPMP run ended without a result"; exit 1; }
  [[ $SECONDS -lt $deadline ]] || { kill "$job"; tail -50 "$work/rpmp.log"; echo "FAIL no result in 900 s"; exit 1; }
  sleep 0.5
done

read -r shuffled direct < <("$python_bin" -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(",".join(map(str, r["shuffled"])), ",".join(map(str, r["direct"])))' "$work/result.json")
if [[ "$shuffled" == "$direct" && "${shuffled%%,*}" == "$rows" ]]; then ok "shuffled rows, id sum and crc sum equal the unshuffled ones ($shuffled)"
else bad "shuffled $shuffled, without the shuffle $direct (rows $rows)"; fi
# Every node holds part of it; the capacity tier holds what the fast pools could not.
fast_total=0 capacity_total=0
for i in 0 1 2; do
  m=$(curl -sf "http://127.0.0.1:$((RPMP_BASE_PORT + 30 + i))/metrics") || { bad "metrics of server $i"; continue; }
  fast=$(awk '/^rpmp_server_tier_used_bytes\{.*tier="fast"/ {print int($NF)}' <<<"$m")
  cap=$(awk '/^rpmp_server_tier_used_bytes\{.*tier="capacity"/ {print int($NF)}' <<<"$m")
  echo "server $i: fast tier ${fast:-?} bytes used, capacity tier ${cap:-?}"
  if [[ $(( ${fast:-0} + ${cap:-0} )) -gt $((8 << 20)) ]]; then ok "server $i holds part of the shuffle"
  else bad "server $i holds $(( ${fast:-0} + ${cap:-0} )) bytes"; fi
  fast_total=$((fast_total + ${fast:-0})) capacity_total=$((capacity_total + ${cap:-0}))
done
stored=$((fast_total + capacity_total))
if [[ $stored -ge $((2 * rows * 1024)) ]]; then ok "$stored bytes stored: both copies of $((rows * 1024)) bytes of rows"
else bad "only $stored bytes stored for 2 copies of $((rows * 1024))"; fi
if [[ $capacity_total -gt 0 ]]; then ok "the capacity tier holds $capacity_total bytes"
else bad "nothing in the capacity tier"; fi
touch "$work/result.json.release"
if wait "$job"; then ok "the application ended cleanly"; else bad "spark-submit exited non-zero (log: $work/rpmp.log)"; fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
