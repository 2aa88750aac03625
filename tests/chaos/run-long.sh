#!/usr/bin/env bash
# Long fault campaign: runs chaos_campaign over many fresh seeds one after another and
# prints one RESULT line per seed plus a total. Seeds that fail are appended to
# tests/chaos/failed_seeds.txt (CI replays them) unless NO_RECORD=1.
# Usage: tests/chaos/run-long.sh [SEEDS=10] [FAULTS_PER_SEED=50] [extra chaos_campaign flags...]
# env: BUILD_DIR (default build), FIRST_SEED (default: from the clock), LOG_DIR (kept logs)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-$root/build}
seeds=${1:-10}
faults=${2:-50}
shift $(( $# > 2 ? 2 : $# ))
first=${FIRST_SEED:-$(date +%s)}
logs=${LOG_DIR:-$(mktemp -d /tmp/rpmp-chaos.XXXXXX)}
export RPMP_BIN_DIR=${RPMP_BIN_DIR:-$build/bin} PMEM_IS_PMEM_FORCE=0
echo "long campaign: $seeds seeds x $faults faults from seed $first, logs in $logs"
total=0 failed=0
for ((i = 0; i < seeds; i++)); do
  seed=$((first + i))
  "$build/tests/chaos_campaign" --seed "$seed" --faults "$faults" "$@" > "$logs/seed-$seed.log" 2>&1 &
  pid=$!
  wait $pid
  rc=$?
  rm -rf /dev/shm/rpmp-test-$pid-*  # pools and etcd data of a campaign that was killed
  line=$(grep '^RESULT' "$logs/seed-$seed.log" || echo "RESULT seed=$seed rc=$rc (no result line)")
  echo "$line"
  n=$(sed -n 's/.* faults=\([0-9]*\).*/\1/p' <<<"$line")
  total=$((total + ${n:-0}))
  if [[ $rc -eq 2 || $rc -ge 128 ]]; then  # setup failure, or killed (OOM killer, by hand)
    echo "seed $seed: setup or environment failure, rc=$rc (not a verdict; see $logs/seed-$seed.log)"
  elif [[ $rc -ne 0 ]]; then
    failed=$((failed + 1))
    [[ "${NO_RECORD:-0}" == 1 ]] || echo "$seed $faults $*" >> "$here/failed_seeds.txt"
  fi
done
echo "TOTAL seeds=$seeds faults=$total failed_seeds=$failed"
[[ $failed -eq 0 ]]
