#!/usr/bin/env bash
# What spreading a namespace over placement groups costs per append (docs/benchmarks.md,
# "Spreading"): one local cluster (deploy/local-cluster.sh, 3 servers), rpmp-bench small
# appends through the cluster client into one namespace (--groups 1, one primary) and into
# GROUPS namespaces (--groups N, the plugin's default of 2 x nodes: every server a
# primary), alternating in each round so machine noise hits both alike. Per run it prints
# rpmp-bench's line plus the servers' CPU per completed append (from /proc of the three
# rpmp-server processes over the run); then per side the medians and the ratios
# spread/one. The peer measured in the same run is rpmp-bench's loopback TCP baseline.
#
#   bench/append_spread.sh [BUILD_DIR] [ROUNDS] [SECONDS] [SIZE] [GROUPS] [RUN]
# RUN: consecutive appends per group before the next (rpmp-bench --group-run; the plugin
# uses runs of up to 32 partitions, RpmpShuffleCoordinates.groupOf; 1 = a new group per
# append). Defaults: build 3 1.5 4k 6 1. Runs on a reserved block of ports (tests/lib/port_block.sh)
# and its own run directory; stops its cluster on exit.
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
secs=${3:-1.5}
size=${4:-4k}
groups=${5:-6}
group_run=${6:-1}
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$build" && pwd)/bin
run=$(mktemp -d)
# shellcheck source=../tests/lib/port_block.sh
source "$repo/tests/lib/port_block.sh"
reserve_port_block || { echo "append_spread: no free port block" >&2; exit 1; }
export RPMP_BASE_PORT=$PORT_BLOCK RPMP_RUN_DIR="$run/cluster" RPMP_BIN_DIR="$bin"
cleanup() { "$repo/deploy/local-cluster.sh" stop --wipe >/dev/null 2>&1 || true; rm -rf "$run"; release_port_block; }
trap cleanup EXIT
trap 'exit 1' TERM INT
"$repo/deploy/local-cluster.sh" start --tls >"$run/start.log" 2>&1 || { cat "$run/start.log" >&2; exit 1; }
for v in RPMP_PROXIES RPMP_SECRET_FILE RPMP_TLS_DIR; do
  val=$(sed -n "s/^$v=//p" "$run/start.log" | tail -1)
  [ -n "$val" ] || { cat "$run/start.log" >&2; echo "append_spread: no $v from local-cluster.sh" >&2; exit 1; }
  export "$v=$val"
done
server_pids=$(cat "$RPMP_RUN_DIR"/server*.pid)
# CPU ticks (user + system) of the servers so far.
server_ticks() { local t=0 p; for p in $server_pids; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done; echo "$t"; }
hz=$(getconf CLK_TCK)
echo "append_spread: build=$bin servers=3 (one host) rounds=$rounds seconds=$secs size=$size groups=$groups group_run=$group_run cores=$(nproc)"
declare -A ops_s p50 cpu_client cpu_server
one() {  # one SIDE GROUPS
  local side=$1 g=$2 t0 t1 line ops
  t0=$(server_ticks)
  line=$("$bin/rpmp-bench" --proxy "$RPMP_PROXIES" --replicas 1 --workloads append --sizes "$size" \
    --threads 2 --depth 8 --seconds "$secs" --groups "$g" --group-run "$group_run" --namespace "spread-$side-$r" | grep '^workload=')
  t1=$(server_ticks)
  ops=$(sed -n 's/.* ops=\([0-9]*\) .*/\1/p' <<<"$line")
  [ "${ops:-0}" -gt 0 ] || { echo "append_spread: no appends completed: $line" >&2; exit 1; }
  local server_us; server_us=$(awk -v d=$((t1 - t0)) -v hz="$hz" -v n="$ops" 'BEGIN { printf "%.1f", d * 1e6 / hz / n }')
  echo "side=$side groups=$g $line server_cpu_us_per_op=$server_us"
  ops_s[$side]+="$(sed -n 's/.* ops_per_s=\([0-9]*\) .*/\1/p' <<<"$line") "
  p50[$side]+="$(sed -n 's/.* p50_us=\([0-9]*\) .*/\1/p' <<<"$line") "
  cpu_client[$side]+="$(sed -n 's/.* client_cpu_us_per_op=\([0-9.]*\) .*/\1/p' <<<"$line") "
  cpu_server[$side]+="$server_us "
}
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then one one 1; one spread "$groups"; else one spread "$groups"; one one 1; fi
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for m in ops_s p50 cpu_client cpu_server; do
  declare -n arr=$m
  a=$(median <<<"${arr[one]}") b=$(median <<<"${arr[spread]}")
  echo "median metric=$m one=$a spread=$b ratio_spread_over_one=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (a > 0) ? b / a : 0 }')"
done
