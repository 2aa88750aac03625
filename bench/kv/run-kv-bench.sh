#!/usr/bin/env bash
# The key-value benchmark of issue 12, in one run on this machine: starts an
# rpmp-server (pool in /dev/shm) and Debian's redis-server twice (persistence off, and
# appendonly with appendfsync everysec), measures libfabric's own 4 KiB ping-pong
# (fi_pingpong: tcp msg, and tcp;ofi_rxm rdm with one and two pairs, the round trips
# per second the provider itself reaches) and the loopback TCP limit (rpmp-bench's
# baseline), then drives
# YCSB A/B/C/F with rpmp-kv-bench against all three with the same keys and threads,
# and a depth-1 4 KiB read-only run for latency. Where libfabric offers the native TCP
# provider (`net` in 1.17), its ping-pong (one and two pairs) and a second rpmp-server
# on it (`--provider net`, target rpmp-net) join the same run: the fastest provider's
# own ceiling beside Redis. Everything it started is stopped.
# Usage: bench/kv/run-kv-bench.sh [BUILD_DIR] [rpmp-kv-bench flags...]
#   e.g. bench/kv/run-kv-bench.sh build --seconds 2 --keys 100000
#   env: KV_POOL_SIZE (default 6G), KV_THREADS (default 2), KV_DEPTH1_KEYS (100000),
#        KV_DEPTH1_SECONDS (3), KV_PINGPONG_ITERS (20000), KV_POLL_WORKLOADS (C,B: the
#        depth-1 workloads run against the polling server)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
shift || true
bin="$build/bin"
for b in rpmp-server rpmp-kv-bench rpmp-bench; do
  [ -x "$bin/$b" ] || { echo "run-kv-bench: $bin/$b is missing (build first)" >&2; exit 1; }
done
for c in redis-server fi_pingpong; do
  command -v "$c" >/dev/null || { echo "run-kv-bench: $c is missing (deploy/install-deps.sh)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/rpmp-kv-bench.XXXXXX)
pool="/dev/shm/rpmp-kv-bench-$$.pool"
source bench/lib.sh
cleanup() {
  bench_stop_all
  rm -rf "$work" "$pool" "$pool.poll" "$pool.net"
}
trap cleanup EXIT

threads=${KV_THREADS:-2}
echo "== setup: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -r); $(redis-server --version | cut -d' ' -f1-3)"

# pingpong ENDPOINT PROVIDER OUT [PORT]: fi_pingpong 4 KiB on loopback; prints its table
# into OUT. Its usec/xfer is one way (a round trip is two transfers).
pingpong() {
  local ep=$1 prov=$2 out=$3 fp=${4:-} fps try
  [ -n "$fp" ] || fp=$(free_port)
  timeout 60 fi_pingpong -p "$prov" -e "$ep" -S 4096 -I "${KV_PINGPONG_ITERS:-20000}" -B "$fp" >"$out.server" 2>&1 &
  fps=$!
  # The server has no readiness signal: the client retries its connect.
  for try in 1 2 3 4 5 6 7 8 9 10; do
    if timeout 60 fi_pingpong -p "$prov" -e "$ep" -S 4096 -I "${KV_PINGPONG_ITERS:-20000}" -P "$fp" 127.0.0.1 >"$out" 2>&1; then break; fi
    sleep 0.5
  done
  wait "$fps" || true
  cat "$out"
}
export FI_TCP_IFACE=lo
echo "== libfabric's own 4 KiB ping-pong (fi_pingpong, loopback): tcp msg endpoints, and"
echo "   tcp;ofi_rxm rdm endpoints (the provider stack RPMP itself runs on)"
pingpong msg tcp "$work/fi_pingpong"
fi_us=$(awk '$1=="4k" {print $7}' "$work/fi_pingpong")
echo "baseline fi_pingpong_4k_usec_per_xfer=${fi_us:-unknown}"
pingpong rdm "tcp;ofi_rxm" "$work/fi_pingpong_rdm"
fi_rdm_us=$(awk '$1=="4k" {print $7}' "$work/fi_pingpong_rdm")
echo "baseline fi_pingpong_rdm_4k_usec_per_xfer=${fi_rdm_us:-unknown}"
# The provider's own ceiling for synchronous callers: round trips per second of the
# rdm ping-pong (two transfers each), with one pair, and with two pairs at once (the
# shape of the 2-thread YCSB runs: every process polls, as RPMP's polling path does).
roundtrips() { awk -v u="$1" 'BEGIN { if (u > 0) printf "%.0f", 1e6 / (2 * u) }'; }
fi_rdm_rt=$(roundtrips "${fi_rdm_us:-0}")
echo "baseline fi_pingpong_rdm_4k_roundtrips_per_s=${fi_rdm_rt:-unknown}"
# pingpong_2pairs PROVIDER TAG: two rdm ping-pongs at once; prints their round trips
# per second in all.
pingpong_2pairs() {
  local prov=$1 tag=$2 a b pid
  a=$(free_port) b=$(free_port)
  pingpong rdm "$prov" "$work/fi_pingpong_${tag}_a" "$a" >/dev/null &
  pid=$!
  pingpong rdm "$prov" "$work/fi_pingpong_${tag}_b" "$b" >/dev/null
  wait "$pid" || true
  awk '$1=="4k" {s += 1e6 / (2 * $7)} END {if (s > 0) printf "%.0f", s}' \
    "$work/fi_pingpong_${tag}_a" "$work/fi_pingpong_${tag}_b"
}
fi_rdm2_rt=$(pingpong_2pairs "tcp;ofi_rxm" rdm)
echo "baseline fi_pingpong_rdm_4k_2pairs_roundtrips_per_s=${fi_rdm2_rt:-unknown}"
# The native TCP provider (libfabric 1.17 `net`, 1.18+ `tcp`), when offered: the
# fastest RDM provider on a host without RDMA (docs/benchmarks.md "Providers").
net_prov=""
for p in net tcp; do
  if fi_info -p "$p" -t FI_EP_RDM >/dev/null 2>&1; then net_prov=$p; break; fi
done
if [ -n "$net_prov" ]; then
  pingpong rdm "$net_prov" "$work/fi_pingpong_net" >/dev/null
  fi_net_us=$(awk '$1=="4k" {print $7}' "$work/fi_pingpong_net")
  fi_net_rt=$(roundtrips "${fi_net_us:-0}")
  echo "baseline fi_pingpong_${net_prov}_4k_usec_per_xfer=${fi_net_us:-unknown}"
  echo "baseline fi_pingpong_${net_prov}_4k_roundtrips_per_s=${fi_net_rt:-unknown}"
  fi_net2_rt=$(pingpong_2pairs "$net_prov" net)
  echo "baseline fi_pingpong_${net_prov}_4k_2pairs_roundtrips_per_s=${fi_net2_rt:-unknown}"
fi

rp=$(free_port)
PMEM_IS_PMEM_FORCE=1 "$bin/rpmp-server" --listen "127.0.0.1:$rp" --pool "$pool:${KV_POOL_SIZE:-6G}" \
  >"$work/server.log" 2>&1 &
bench_pids+=($!)
wait_for "rpmp-server" 60 grep -q "rpmp-server ready" "$work/server.log"

start_redis() {  # NAME PORT EXTRA-ARGS...
  local name=$1 port=$2; shift 2
  mkdir -p "$work/$name"
  redis-server --port "$port" --bind 127.0.0.1 --dir "$work/$name" --save '' --protected-mode yes "$@" \
    >"$work/$name.log" 2>&1 &
  bench_pids+=($!)
  wait_for "$name" 30 redis-cli -p "$port" ping
}
r1=$(free_port); start_redis redis "$r1" --appendonly no
r2=$(free_port); start_redis redis-aof "$r2" --appendonly yes --appendfsync everysec

echo "== loopback TCP limit and rpmp-bench 4 KiB get (depth 4) in the same run"
"$bin/rpmp-bench" --server "127.0.0.1:$rp" --workloads get --sizes 4k --seconds 2 | grep -E "^(baseline|workload)"

echo "== depth 1: one thread, 4 KiB reads (YCSB C)"
"$bin/rpmp-kv-bench" --target "rpmp=rpmp:127.0.0.1:$rp" --target "redis=redis:127.0.0.1:$r1" \
  --baseline redis --threads 1 --workloads C --sizes 4k --keys "${KV_DEPTH1_KEYS:-100000}" --seconds "${KV_DEPTH1_SECONDS:-3}" | tee "$work/depth1"
rp50=$(awk '/^workload=C target=rpmp /{for(i=1;i<=NF;i++) if ($i ~ /^p50_us=/) {sub("p50_us=","",$i); print $i}}' "$work/depth1")
if [ -n "${fi_us:-}" ] && [ -n "$rp50" ]; then
  echo "ratio rpmp_get_4k_p50_over_fi_pingpong=$(awk -v a="$rp50" -v b="$fi_us" 'BEGIN {printf "%.2f", a / b}')"
fi

echo "== depth 1 with polling (YCSB C, then B): a second rpmp-server with --busy-poll, the client polling its own"
echo "   replies (RPMP_CLIENT_POLL_US=${KV_POLL_US:-1000000}); fi_pingpong busy-polls both sides too"
rp2=$(free_port)
PMEM_IS_PMEM_FORCE=1 "$bin/rpmp-server" --busy-poll --listen "127.0.0.1:$rp2" \
  --pool "$pool.poll:${KV_POLL_POOL_SIZE:-1G}" >"$work/server-poll.log" 2>&1 &
poll_pid=$!
bench_pids+=($poll_pid)
wait_for "rpmp-server --busy-poll" 60 grep -q "rpmp-server ready" "$work/server-poll.log"
RPMP_CLIENT_POLL_US=${KV_POLL_US:-1000000} "$bin/rpmp-kv-bench" --target "rpmp-poll=rpmp:127.0.0.1:$rp2" \
  --target "redis=redis:127.0.0.1:$r1" --baseline redis --threads 1 --workloads "${KV_POLL_WORKLOADS:-C,B}" --sizes 4k \
  --keys "${KV_DEPTH1_KEYS:-100000}" --seconds "${KV_DEPTH1_SECONDS:-3}" | tee "$work/depth1-poll"
kill "$poll_pid" 2>/dev/null || true   # it keeps a core busy: not during the runs below
wait "$poll_pid" 2>/dev/null || true
rm -f "$pool.poll"
pp50=$(awk '/^workload=C target=rpmp-poll /{for(i=1;i<=NF;i++) if ($i ~ /^p50_us=/) {sub("p50_us=","",$i); print $i}}' "$work/depth1-poll")
if [ -n "${fi_us:-}" ] && [ -n "$pp50" ]; then
  echo "ratio rpmp_poll_get_4k_p50_over_fi_pingpong=$(awk -v a="$pp50" -v b="$fi_us" 'BEGIN {printf "%.2f", a / b}')"
fi
if [ -n "${fi_rdm_us:-}" ] && [ -n "$pp50" ]; then
  echo "ratio rpmp_poll_get_4k_p50_over_fi_pingpong_rdm=$(awk -v a="$pp50" -v b="$fi_rdm_us" 'BEGIN {printf "%.2f", a / b}')"
fi
# ops_per_s of workload C for one target in a kv-bench output file.
ops_of() { awk -v t="$2" '$1=="workload=C" && $2=="target="t && $3=="size=4096" {for(i=1;i<=NF;i++) if ($i ~ /^ops_per_s=/) {sub("ops_per_s=","",$i); print $i}}' "$1"; }
pops=$(ops_of "$work/depth1-poll" rpmp-poll) rops=$(ops_of "$work/depth1-poll" redis)
if [ -n "${fi_rdm_rt:-}" ] && [ -n "$pops" ] && [ -n "$rops" ]; then
  echo "ratio rpmp_poll_get_4k_ops_over_fi_pingpong_rdm_roundtrips=$(awk -v a="$pops" -v b="$fi_rdm_rt" 'BEGIN {printf "%.2f", a / b}')"
  echo "ratio redis_get_4k_ops_over_fi_pingpong_rdm_roundtrips=$(awk -v a="$rops" -v b="$fi_rdm_rt" 'BEGIN {printf "%.2f", a / b}')"
fi

net_target=()
if [ -n "$net_prov" ]; then
  rpn=$(free_port)
  PMEM_IS_PMEM_FORCE=1 "$bin/rpmp-server" --provider "$net_prov" --listen "127.0.0.1:$rpn" \
    --pool "$pool.net:${KV_NET_POOL_SIZE:-2G}" >"$work/server-net.log" 2>&1 &
  bench_pids+=($!)
  wait_for "rpmp-server --provider $net_prov" 60 grep -q "rpmp-server ready" "$work/server-net.log"
  net_target=(--target "rpmp-net=rpmp:127.0.0.1:$rpn")
fi
echo "== YCSB workloads, $threads threads, every target in one run"
"$bin/rpmp-kv-bench" --target "redis=redis:127.0.0.1:$r1" --target "redis-aof=redis:127.0.0.1:$r2" \
  --target "rpmp=rpmp:127.0.0.1:$rp" "${net_target[@]}" --baseline redis --threads "$threads" "$@" | tee "$work/ycsb"
rops2=$(ops_of "$work/ycsb" redis | head -1)
if [ "$threads" = 2 ] && [ -n "${fi_rdm2_rt:-}" ] && [ -n "$rops2" ]; then
  echo "ratio redis_ycsb_c_ops_over_fi_pingpong_rdm_2pairs_roundtrips=$(awk -v a="$rops2" -v b="$fi_rdm2_rt" 'BEGIN {printf "%.2f", a / b}')"
fi
if [ "$threads" = 2 ] && [ -n "${fi_net2_rt:-}" ] && [ -n "$rops2" ]; then
  echo "ratio redis_ycsb_c_ops_over_fi_pingpong_${net_prov}_2pairs_roundtrips=$(awk -v a="$rops2" -v b="$fi_net2_rt" 'BEGIN {printf "%.2f", a / b}')"
fi
