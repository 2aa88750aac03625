#!/usr/bin/env bash
# Replays every seed listed in a seeds file (one "SEED FAULTS [flags...]" per line,
# '#' comments) with chaos_campaign; fails if any seed fails. A seed that ends in an
# environment failure (exit 2: a server SIGKILLed from outside) runs once more. Used by CI
# (ctest chaos_failed_seeds) on tests/chaos/failed_seeds.txt.
# Each seed's output goes to a log; this prints one RESULT line per seed as it ends,
# then, for each seed that failed, its fault lines, what it found and its last lines
# (the client library's INFO lines left out), so that a failure reads first.
# Usage: run-seeds.sh CHAOS_CAMPAIGN_BINARY SEEDS_FILE
set -uo pipefail
bin=$1
seeds=$2
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
rc=0
n=0
failed=()
while read -r seed faults rest; do
  [[ -z "${seed:-}" || "$seed" == \#* ]] && continue
  n=$((n + 1))
  log="$logs/seed-$seed.log"
  # Exit 2 is an environment failure (a server SIGKILLed from outside: the OOM killer),
  # no verdict: the seed runs once more, and a second one fails like any failure.
  for try in 1 2; do
    start=$SECONDS
    # shellcheck disable=SC2086
    "$bin" --seed "$seed" --faults "${faults:-20}" $rest >"$log" 2>&1 &
    pid=$!
    wait $pid
    r=$?
    rm -rf /dev/shm/rpmp-test-$pid-*
    result=$(grep '^RESULT' "$log" | tail -1)
    echo "seed $seed (${faults:-20} faults $rest): exit $r after $((SECONDS - start))s: ${result:-no RESULT line}"
    [[ $r -eq 2 && $try -eq 1 ]] || break
    grep -E '^(ENVIRONMENT|  \| )' "$log" | tail -n 12
    echo "seed $seed: environment failure, not a verdict; running it once more"
  done
  if [[ $r -ne 0 ]]; then
    failed+=("$seed")
    rc=1
  fi
done < "$seeds"
for seed in ${failed[@]+"${failed[@]}"}; do
  log="$logs/seed-$seed.log"
  echo "=== seed $seed FAILED: faults and findings"
  grep -vE '^[0-9:.]+ rpmp (INFO|WARN): ' "$log" | grep -E '^(chaos |fault |phase|RESULT|HUNG|CRASH|ENVIRONMENT|  \| )|NOT RECOVERED|lost|stored|phantom|torn|differ|diverg|converge' | head -120
  echo "=== seed $seed: last lines"
  grep -vE '^[0-9:.]+ rpmp INFO: ' "$log" | tail -n 40
done
echo "replayed $n seeds, ${#failed[@]} failed${failed[*]:+: ${failed[*]}}"
exit $rc
