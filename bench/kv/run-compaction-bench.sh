#!/usr/bin/env bash
# What background compaction costs, in one run on this machine (docs/benchmarks.md):
# 1. p99: an rpmp-server on a 512 MiB pool in /dev/shm with compaction at its default
#    threshold and the given rate; rpmp-compaction-bench measures 4 KiB put/get
#    latency of depth-1 clients with compaction idle and then running, same server,
#    same clients, and prints the p99 ratios (target <= 2).
# 2. overwrite: a second server on a 64 MiB pool; overwrites of one key set totalling
#    10x the pool, pool usage sampled, every key's last value checked.
# Everything it started is stopped and the pools are removed.
# Usage: bench/kv/run-compaction-bench.sh [BUILD_DIR]
#   env: COMPACTION_RATE (default 64m, the server's default), THREADS (2), PHASE_SECONDS (1.5)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
bin="$build/bin"
source bench/lib.sh
require_bins "$bin" rpmp-server rpmp-compaction-bench
work=$(mktemp -d /tmp/rpmp-compaction-bench.XXXXXX)
pool1="/dev/shm/rpmp-compaction-bench-$$-1.pool"
pool2="/dev/shm/rpmp-compaction-bench-$$-2.pool"
cleanup() {
  bench_stop_all
  rm -rf "$work" "$pool1" "$pool2"
}
trap cleanup EXIT
addr=""
start_server() {  # LOG POOL SIZE SEGMENT; sets addr, appends to pids
  local log=$1 pool=$2 size=$3 seg=$4 port
  port=$(free_port)
  PMEM_IS_PMEM_FORCE=1 "$bin/rpmp-server" --listen "127.0.0.1:$port" --pool "$pool:$size" \
    --segment-size "$seg" --compaction-rate "${COMPACTION_RATE:-64m}" --compaction-grace 1s \
    >"$log" 2>"$log.err" &
  bench_pids+=($!)
  wait_for "rpmp-server (see $log.err)" 60 grep -q "rpmp-server ready" "$log"
  addr="127.0.0.1:$port"
}
echo "== setup: $(nproc) cores, $(uname -r), compaction rate ${COMPACTION_RATE:-64m}/s, threshold 0.5 (default)"
echo "== p99 of 4 KiB put/get, compaction idle vs running (512 MiB pool, 8 MiB segments)"
start_server "$work/s1.log" "$pool1" 512m 8m
"$bin/rpmp-compaction-bench" --server "$addr" --mode p99 --threads "${THREADS:-2}" --seconds "${PHASE_SECONDS:-1.5}"
kill "${bench_pids[0]}"; wait "${bench_pids[0]}" || true; rm -f "$pool1"
echo "== overwrite 10x the pool (64 MiB pool, 2 MiB segments, 48 keys x 64 KiB, a kept key every 16 puts)"
start_server "$work/s2.log" "$pool2" 64m 2m
"$bin/rpmp-compaction-bench" --server "$addr" --mode overwrite --keys 48 --value 64k --factor 10
