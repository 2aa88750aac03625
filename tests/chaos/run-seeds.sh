#!/usr/bin/env bash
# Replays every seed listed in a seeds file (one "SEED FAULTS [flags...]" per line,
# '#' comments) with chaos_campaign; fails if any seed fails. Used by CI
# (ctest chaos_failed_seeds) on tests/chaos/failed_seeds.txt.
# Usage: run-seeds.sh CHAOS_CAMPAIGN_BINARY SEEDS_FILE
set -uo pipefail
bin=$1
seeds=$2
rc=0
n=0
while read -r seed faults rest; do
  [[ -z "${seed:-}" || "$seed" == \#* ]] && continue
  n=$((n + 1))
  # shellcheck disable=SC2086
  "$bin" --seed "$seed" --faults "${faults:-20}" $rest &
  pid=$!
  wait $pid
  r=$?
  rm -rf /dev/shm/rpmp-test-$pid-*
  if [[ $r -ne 0 ]]; then
    echo "seed $seed FAILED"
    rc=1
  fi
done < "$seeds"
echo "replayed $n seeds"
exit $rc
