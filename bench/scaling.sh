#!/usr/bin/env bash
# The scaling benchmark of issue 22, in one run on whatever machine it is on: one
# rpmp-server (pool in /dev/shm) per server-thread count, driven by 1, 2, 4, 8
# rpmp-bench processes x threads with 4 KiB get/put and 1 MiB put/get; beside it, as
# peers and limits in the same run, redis-server (persistence off) with
# redis-benchmark, fi_pingpong for each RDM TCP provider this libfabric offers, and
# iperf3 over loopback. Prints one key=value line per run: ops/s, MB/s, p50/p99, the
# server's CPU (whole process, and per thread for threads above 5% of a core, over each
# run; server_cpu_measured_pct over its measured seconds alone) and how busy the whole
# machine was over those seconds (machine_busy_measured_pct: near 100 with the server's
# threads below a core each means the clients, on the same machine, are the limit).
#
# Usage: bench/scaling.sh [--smoke] [BIN_DIR]
#   BIN_DIR: a build's bin/ (default build/bin), or a folder packed by
#   bench/pack-binaries.sh (run it through that folder's run.sh).
#   --smoke: one short pass (1 server thread, 1 process, 1 thread, 4 KiB, 0.5 s) that
#   proves the harness end to end in well under a minute (ctest scaling_bench_smoke).
#   env: SCALE_SHARDS (server data threads to try; default "1 2 4 ... up to the
#        cores" when rpmp-server has --data-threads, else 1), SCALE_PROCS ("1 2 4 8"),
#        SCALE_CONNECTIONS (each client's connections to the server, as
#        $RPMP_CLIENT_CONNECTIONS: "default" = one per shard, at most 4; e.g. "default 8 16"
#        compares; more than the shards opens several per shard),
#        SCALE_THREADS ("1 4"), SCALE_RUNS ("get:4k put:4k put:1m get:1m"),
#        SCALE_DEPTH (1), SCALE_SECONDS (3), SCALE_POOL_SIZE (4G),
#        SCALE_PINGPONG_ITERS (20000), SCALE_REDIS_REQUESTS (200000 per run),
#        SCALE_PROVIDER (the server's and clients' provider; default tcp;ofi_rxm, the
#        servers' default; auto or net to compare), SCALE_SERVER_ARGS (more rpmp-server
#        flags, e.g. --busy-poll), SCALE_YCSB_THREADS (rpmp-kv-bench
#        YCSB C and B, 4 KiB, against the widest server and Redis at each thread count;
#        default "1 4 16 32"; empty: skip), SCALE_YCSB_KEYS (100000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
bin=${1:-$here/../build/bin}
for b in rpmp-server rpmp-bench; do
  [ -x "$bin/$b" ] || { echo "scaling: $bin/$b is missing (build first, or pass BIN_DIR)" >&2; exit 1; }
done
for c in redis-server redis-benchmark redis-cli fi_pingpong fi_info iperf3 python3; do
  command -v "$c" >/dev/null || { echo "scaling: $c is missing (deploy/install-deps.sh)" >&2; exit 1; }
done
source "$here/lib.sh"
work=$(mktemp -d /tmp/rpmp-scaling.XXXXXX)
pool="/dev/shm/rpmp-scaling-$$.pool"
cleanup() { bench_stop_all; rm -rf "$work" "$pool"; }
trap cleanup EXIT

cores=$(nproc)
seconds=${SCALE_SECONDS:-3}
procs=${SCALE_PROCS:-1 2 4 8}
threads=${SCALE_THREADS:-1 4}
depth=${SCALE_DEPTH:-1}
provider=${SCALE_PROVIDER:-tcp;ofi_rxm}
runs=${SCALE_RUNS:-get:4k put:4k put:1m get:1m}
shard_flag=""
server_help=$("$bin/rpmp-server" --help 2>&1 || true)
if grep -q -- "--data-threads" <<<"$server_help"; then shard_flag="--data-threads"; fi
if [ -n "${SCALE_SHARDS:-}" ]; then shards=$SCALE_SHARDS
elif [ -n "$shard_flag" ]; then shards=1; n=2; while [ $n -le "$cores" ]; do shards="$shards $n"; n=$((n * 2)); done
else shards=1; fi
pp_iters=${SCALE_PINGPONG_ITERS:-20000} pp_sizes="4k 1m" iperf_secs=3 redis_n=${SCALE_REDIS_REQUESTS:-200000}
if [ $smoke = 1 ]; then
  seconds=0.5 procs=1 threads=1 shards=1 runs="get:4k" pp_iters=500 pp_sizes="4k" iperf_secs=1 redis_n=2000
fi
connections=${SCALE_CONNECTIONS:-default}
ycsb_threads=${SCALE_YCSB_THREADS-1 4 16 32} ycsb_keys=${SCALE_YCSB_KEYS:-100000}
[ $smoke = 1 ] && ycsb_threads=1 ycsb_keys=1000
[ -n "$ycsb_threads" ] && ! [ -x "$bin/rpmp-kv-bench" ] && { echo "scaling: $bin/rpmp-kv-bench is missing (or set SCALE_YCSB_THREADS=)" >&2; exit 1; }
echo "== setup: cores=$cores mem=$(awk '/MemTotal/ {printf "%.0fGiB", $2/1048576}' /proc/meminfo)" \
  "kernel=$(uname -r) libfabric=$(fi_info --version | awk '/^libfabric:/ {print $2}')" \
  "$(redis-server --version | cut -d' ' -f1-3) provider=$provider shards=\"$shards\"" \
  "procs=\"$procs\" connections=\"$connections\" threads=\"$threads\" depth=$depth seconds=$seconds ycsb_threads=\"$ycsb_threads\"" \
  "server_threads_flag=${shard_flag:-none} server_args=\"${SCALE_SERVER_ARGS:-}\" client_poll_us=${RPMP_CLIENT_POLL_US:-0}"

# ---- peers and limits ----------------------------------------------------------------
# pingpong PROVIDER SIZE: fi_pingpong rdm on loopback; prints usec per transfer (one way).
# SIZE as fi_pingpong prints it (4k, 1m); it is given the bytes.
pingpong() {
  local prov=$1 size=$2 fp fps try out="$work/pp" us bytes
  bytes=$(awk -v s="$size" 'BEGIN { n = s + 0; u = substr(s, length(s)); print n * (u == "k" ? 1024 : u == "m" ? 1048576 : 1) }')
  fp=$(free_port)
  timeout 60 fi_pingpong -p "$prov" -e rdm -S "$bytes" -I "$pp_iters" -B "$fp" >"$out.server" 2>&1 &
  fps=$!
  for try in 1 2 3 4 5 6 7 8 9 10; do  # the server has no readiness signal: retry the connect
    kill -0 "$fps" 2>/dev/null || break
    if timeout 60 fi_pingpong -p "$prov" -e rdm -S "$bytes" -I "$pp_iters" -P "$fp" 127.0.0.1 >"$out" 2>&1; then break; fi
    sleep 0.5
  done
  wait "$fps" || true
  us=$(awk -v s="$size" '$1==s {print $7}' "$out")
  echo "peer=fi_pingpong provider=$prov size=$size usec_per_xfer=${us:-failed}"
}
export FI_TCP_IFACE=lo
for prov in net tcp "tcp;ofi_rxm"; do
  # Only providers offered natively (libfabric 1.17 answers "tcp" with tcp;ofi_rxm).
  offered=$(fi_info -p "$prov" -t FI_EP_RDM 2>/dev/null || true)
  grep -qx "provider: $prov" <<<"$offered" || continue
  for size in $pp_sizes; do pingpong "$prov" "$size"; done
done

ip=$(free_port)
iperf3 -s --forceflush -p "$ip" >"$work/iperf.server" 2>&1 &
iperf_pid=$!
bench_pids+=($iperf_pid)
wait_for "iperf3" 10 grep -q "Server listening" "$work/iperf.server"
iperf3 -c 127.0.0.1 -p "$ip" -t "$iperf_secs" -J >"$work/iperf.json" 2>/dev/null || true
kill "$iperf_pid" 2>/dev/null || true
python3 - "$work/iperf.json" 2>/dev/null <<'EOF' || echo "peer=iperf3 MBps=failed"
import json, sys
d = json.load(open(sys.argv[1]))
print("peer=iperf3 streams=1 MBps=%.1f" % (d["end"]["sum_received"]["bits_per_second"] / 8e6))
EOF

rr=$(free_port)
mkdir -p "$work/redis"
redis-server --port "$rr" --bind 127.0.0.1 --dir "$work/redis" --save '' --appendonly no \
  --protected-mode yes >"$work/redis.log" 2>&1 &
bench_pids+=($!)
wait_for "redis-server" 30 redis-cli -p "$rr" ping
for c in $procs; do
  for t in $threads; do
    conns=$((c * t))
    redis-benchmark -p "$rr" -t set,get -d 4096 -n "$redis_n" -c "$conns" -r 100000 -P "$depth" --csv \
      2>/dev/null | tr -d '"' | awk -F, -v c="$conns" 'NR > 1 {
        printf "peer=redis workload=%s size=4096 connections=%d depth='"$depth"' ops_per_s=%.0f p50_us=%.0f p99_us=%.0f\n",
          tolower($1), c, $2, $5 * 1000, $7 * 1000 }'
  done
done

# ---- RPMP ----------------------------------------------------------------------------
# cpu_ticks PID: utime+stime of the process; thread_ticks PID: "tid comm ticks" per thread.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# machine_ticks: "busy total" jiffies of the whole machine (/proc/stat; idle and iowait
# are not busy). Beside the server's own CPU it tells whether the machine, i.e. the
# clients on it, ran out of cores before the server did.
machine_ticks() { awk '/^cpu / {t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t}' /proc/stat; }
thread_ticks() {
  local t
  for t in /proc/"$1"/task/*; do
    awk -v tid="${t##*/}" '{ sub(/^[^)]*\) /, ""); print tid, $12 + $13 }' "$t/stat" 2>/dev/null \
      | while read -r tid ticks; do echo "$tid $(cat "$t/comm" 2>/dev/null | tr ' ' _) $ticks"; done
  done
}
hz=$(getconf CLK_TCK)
# start_server SHARDS LOG: a fresh rpmp-server on a new pool; sets port and spid.
start_server() {
  local extra=()
  port=$(free_port)
  rm -f "$pool"
  [ -n "$shard_flag" ] && extra=("$shard_flag" "$1")
  PMEM_IS_PMEM_FORCE=1 "$bin/rpmp-server" --listen "127.0.0.1:$port" --pool "$pool:${SCALE_POOL_SIZE:-4G}" \
    --provider "$provider" "${extra[@]}" ${SCALE_SERVER_ARGS:-} >"$2" 2>&1 &
  spid=$!
  bench_pids+=($spid)
  wait_for "rpmp-server" 60 grep -q "rpmp-server ready" "$2"
}
for s in $shards; do
  start_server "$s" "$work/server-$s.log"
  for run in $runs; do
    w=${run%%:*} size=${run##*:}
    for cn in $connections; do
    # each client's connections (ClientOptions::connections through the environment)
    if [ "$cn" = default ]; then unset RPMP_CLIENT_CONNECTIONS; else export RPMP_CLIENT_CONNECTIONS=$cn; fi
    for c in $procs; do
      for t in $threads; do
        before=$(cpu_ticks "$spid"); thread_ticks "$spid" >"$work/tt.before"
        start=$(date +%s.%N)
        # Samples of the server's and the machine's ticks, so that CPU can also be given
        # over the measured seconds alone (the last `seconds` before the processes end;
        # before them each process measures its TCP baseline and fills its keys).
        ( while :; do echo "$(date +%s.%N) $(cpu_ticks "$spid") $(machine_ticks)"; sleep 0.2; done ) \
          >"$work/samples" 2>/dev/null &
        sampler=$!
        pids=()
        for i in $(seq "$c"); do
          "$bin/rpmp-bench" --server "127.0.0.1:$port" --provider "$provider" --workloads "$w" \
            --sizes "$size" --threads "$t" --depth "$depth" --seconds "$seconds" --namespace "scale-$i" \
            >"$work/bench-$i.out" 2>&1 &
          pids+=($!)
        done
        fail=0
        for p in "${pids[@]}"; do wait "$p" || fail=1; done
        elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
        after=$(cpu_ticks "$spid"); thread_ticks "$spid" >"$work/tt.after"
        kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
        # "SERVER_PCT MACHINE_PCT" over the sampled window [end - seconds, end - 0.2 s].
        window=$(awk -v end="$(date +%s.%N)" -v secs="$seconds" -v hz="$hz" '
          NF == 4 && $1 >= end - secs - 0.2 && $1 <= end - 0.2 { if (!n++) { t0 = $1; s0 = $2; b0 = $3; a0 = $4 }
            t1 = $1; s1 = $2; b1 = $3; a1 = $4 }
          END { if (n < 2 || t1 <= t0 || a1 <= a0) { print "- -"; exit }
                printf "%.0f %.0f", 100 * (s1 - s0) / hz / (t1 - t0), 100 * (b1 - b0) / (a1 - a0) }' "$work/samples")
        read -r cpu_window machine <<<"$window"
        cpu=$(awk -v a="$before" -v b="$after" -v e="$elapsed" -v hz="$hz" 'BEGIN {printf "%.0f", 100 * (b - a) / hz / e}')
        per_thread=$(awk -v e="$elapsed" -v hz="$hz" 'NR == FNR {b[$1] = $3; next}
          { p = 100 * ($3 - b[$1]) / hz / e; if (p >= 5) printf "%s%s:%.0f", (n++ ? "," : ""), $2, p }' \
          "$work/tt.before" "$work/tt.after")
        # Sum throughput over the processes; p50/p99: the worst process's.
        cat "$work"/bench-*.out | awk -v s="$s" -v cn="$cn" -v c="$c" -v t="$t" -v cpu="$cpu" -v pt="${per_thread:-none}" -v cw="$cpu_window" -v mb_pct="$machine" -v fail="$fail" '
          /^workload=/ { for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            ops += v["ops_per_s"]; mb += v["MBps"]; err += v["errors"]; n++
            if (v["p50_us"] + 0 > p50) p50 = v["p50_us"] + 0; if (v["p99_us"] + 0 > p99) p99 = v["p99_us"] + 0
            w = v["workload"]; size = v["size"] }
          END { printf "rpmp workload=%s size=%s server_threads=%s connections=%s procs=%d threads=%d ops_per_s=%.0f MBps=%.1f p50_us=%s p99_us=%s server_cpu_pct=%s server_threads_cpu_pct=%s server_cpu_measured_pct=%s machine_busy_measured_pct=%s errors=%d%s\n",
                  w, size, s, cn, c, t, ops, mb, p50, p99, cpu, pt, cw, mb_pct, err, (n == c && !fail) ? "" : " FAILED" }'
        grep -h "first error" "$work"/bench-*.out | head -1 || true
        rm -f "$work"/bench-*.out
      done
    done
    done
  done
  unset RPMP_CLIENT_CONNECTIONS
  kill "$spid"; wait "$spid" 2>/dev/null || true
done

# ---- YCSB against Redis --------------------------------------------------------------
# rpmp-kv-bench with the same keys, values and threads against the widest server of the
# run and the Redis above (one line per target, workload and thread count, then ratios).
if [ -n "$ycsb_threads" ]; then
  widest=${shards##* }
  start_server "$widest" "$work/server-ycsb.log"
  for cn in $connections; do
  if [ "$cn" = default ]; then unset RPMP_CLIENT_CONNECTIONS; else export RPMP_CLIENT_CONNECTIONS=$cn; fi
  for t in $ycsb_threads; do
    echo "== ycsb server_threads=$widest connections=$cn threads=$t"
    "$bin/rpmp-kv-bench" --provider "$provider" --target "rpmp=rpmp:127.0.0.1:$port" \
      --target "redis=redis:127.0.0.1:$rr" --workloads C,B --sizes 4k --keys "$ycsb_keys" \
      --threads "$t" --seconds "$seconds" 2>&1 | grep -v "^load " || echo "ycsb threads=$t FAILED"
  done
  done
  unset RPMP_CLIENT_CONNECTIONS
  kill "$spid"; wait "$spid" 2>/dev/null || true
fi
