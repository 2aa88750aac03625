#!/usr/bin/env bash
# YCSB B and C at 4 KiB against Redis, with librpmp's blocking callers waiting on the
# fabric themselves (ClientOptions::caller_waits, the default) and with replies handed
# over by the progress thread (RPMP_CLIENT_CALLER_WAITS=0), in one run: one rpmp-server
# (pool in /dev/shm) and one redis-server (persistence off), then ROUNDS rounds of three
# rpmp-kv-bench processes (redis, rpmp, rpmp-handover), the order rotating each round.
# Each line gives ops/s, latency and the CPU per operation of the client process and of
# the server (utime+stime over the run). Each round also runs rpmp-fabric-pingpong with
# as many clients as threads (a 64-byte request, a 4 KiB reply, every thread asleep in
# Fabric::Wait): the floor of RPMP's transport for these calls, no protocol or store.
# Prints the medians and the ratios to Redis and to that floor.
# Usage: bench/kv/caller_waits_ab.sh [BUILD_DIR]
#   env: AB_ROUNDS (3), AB_THREADS (2), AB_SECONDS (3), AB_KEYS (100000), AB_POOL_SIZE (2G)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
bin="$build/bin"
source bench/lib.sh
require_bins "$bin" rpmp-server rpmp-kv-bench rpmp-fabric-pingpong
command -v redis-server >/dev/null || { echo "caller_waits_ab: redis-server is missing (deploy/install-deps.sh)" >&2; exit 1; }
work=$(mktemp -d /tmp/rpmp-caller-waits.XXXXXX)
pool="/dev/shm/rpmp-caller-waits-$$.pool"
trap 'bench_stop_all; rm -rf "$work" "$pool"' EXIT
rounds=${AB_ROUNDS:-3} threads=${AB_THREADS:-2} secs=${AB_SECONDS:-3} keys=${AB_KEYS:-100000}

echo "== setup: $(nproc) cores, $(uname -r); $(redis-server --version | cut -d' ' -f1-3); $threads threads, 4 KiB, $keys keys, ${secs}s per workload, $rounds rounds"
rp=$(free_port) r1=$(free_port)
PMEM_IS_PMEM_FORCE=1 "$bin/rpmp-server" --listen "127.0.0.1:$rp" --pool "$pool:${AB_POOL_SIZE:-2G}" >"$work/server.log" 2>&1 &
server_pid=$!
bench_pids+=($server_pid)
redis-server --port "$r1" --bind 127.0.0.1 --dir "$work" --save '' --appendonly no >"$work/redis.log" 2>&1 &
redis_pid=$!
bench_pids+=($redis_pid)
wait_for "rpmp-server" 60 grep -q "rpmp-server ready" "$work/server.log"
wait_for "redis-server" 30 redis-cli -p "$r1" ping
echo "provider: $(grep -o 'provider [^ ,;]*' "$work/server.log" | head -1)"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# run LABEL: one rpmp-kv-bench process against LABEL's target; prints its lines, then
# the CPU per op of the client process (bash's `times` for the subshell's child) and of
# the server over the whole process (its load phase included).
run() {
  local label=$1 spec env=() srv out s0 s1 client_s
  case $label in
    redis) spec="redis:127.0.0.1:$r1" srv=$redis_pid ;;
    rpmp) spec="rpmp:127.0.0.1:$rp" srv=$server_pid env=(RPMP_CLIENT_CALLER_WAITS=1) ;;
    rpmp-handover) spec="rpmp:127.0.0.1:$rp" srv=$server_pid env=(RPMP_CLIENT_CALLER_WAITS=0) ;;
  esac
  out="$work/$label.$round"
  s0=$(ticks "$srv")
  client_s=$( (env "${env[@]}" "$bin/rpmp-kv-bench" --target "$label=$spec" --workloads B,C --sizes 4k \
      --keys "$keys" --threads "$threads" --seconds "$secs" >"$out" 2>&1 || echo failed >>"$out"; times) |
    awk 'NR == 2 {split($1, u, /[ms]/); split($2, s, /[ms]/); print u[1] * 60 + u[2] + s[1] * 60 + s[2]}')
  s1=$(ticks "$srv")
  if grep -q "^failed" "$out"; then cat "$out"; echo "caller_waits_ab: $label failed" >&2; exit 1; fi
  local ops
  ops=$(awk '/^workload=/ {for (i = 1; i <= NF; i++) if ($i ~ /^ops=/) {sub("ops=", "", $i); s += $i}} END {print s}' "$out")
  grep "^workload=" "$out" | sed "s/$/ round=$round/"
  awk -v l="$label" -v r="$round" -v c="$client_s" -v s=$((s1 - s0)) -v o="$ops" -v k="$keys" \
    'BEGIN {printf "cpu target=%s round=%s client_us_per_op=%.1f server_us_per_op=%.1f (over %d loads and %d ops)\n", l, r, c * 1e6 / (o + k), s * 1e4 / (o + k), k, o}'
}
# floor: the transport's own round trips (rpmp-fabric-pingpong), as many clients as threads.
floor() {
  "$bin/rpmp-fabric-pingpong" --clients "$threads" --request 64 --reply 4096 --seconds "$secs" --mode sleep |
    sed "s/$/ round=$round/"
}
labels=(redis rpmp rpmp-handover floor)
for round in $(seq 1 "$rounds"); do
  for k in 0 1 2 3; do
    label=${labels[$(( (k + round - 1) % 4 ))]}
    if [ "$label" = floor ]; then floor; else run "$label"; fi
  done
done | tee "$work/all"

median() { sort -n | awk '{a[NR] = $1} END {if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
ops_of() { awk -v w="workload=$1" -v t="target=$2" '$1 == w && $2 == t {for (i = 1; i <= NF; i++) if ($i ~ /^ops_per_s=/) {sub("ops_per_s=", "", $i); print $i}}' "$work/all" | median; }
echo "== medians over $rounds rounds"
fl=$(awk '$1 == "peer=fabric_pingpong" {for (i = 1; i <= NF; i++) if ($i ~ /^round_trips_per_s=/) {sub("round_trips_per_s=", "", $i); print $i}}' "$work/all" | median)
echo "median transport_floor round_trips_per_s=$fl (rpmp-fabric-pingpong, $threads clients, asleep in Fabric::Wait)"
for w in B C; do
  redis=$(ops_of "$w" redis) waits=$(ops_of "$w" rpmp) hand=$(ops_of "$w" rpmp-handover)
  echo "median workload=$w redis=$redis rpmp=$waits rpmp_handover=$hand"
  awk -v w="$w" -v r="$redis" -v a="$waits" -v h="$hand" -v f="$fl" 'BEGIN {
    printf "ratio workload=%s rpmp_over_redis=%.2f rpmp_handover_over_redis=%.2f rpmp_over_handover=%.2f rpmp_over_floor=%.2f redis_over_floor=%.2f\n", w, a / r, h / r, a / h, a / f, r / f }'
done
