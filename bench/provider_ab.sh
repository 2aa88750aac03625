#!/usr/bin/env bash
# 4 KiB get throughput of several (binaries, provider) setups in one run, rounds
# alternating which goes first: a fresh bare rpmp-server per run (pool on /dev/shm) with
# --data-threads SHARDS, PROCS rpmp-bench processes (each its own namespace) x THREADS x
# DEPTH. Prints the setup, fi_pingpong (4 KiB, one way) for each provider and
# rpmp-tcp-pingpong (a 4 KiB loopback TCP round trip, threads sleeping or spinning) as
# the limits measured in the same run, one key=value line per run (ops/s summed over the processes,
# p50/p99 of the first process, errors), and each setup's median with its ratio to the
# first setup's. Used for docs/benchmarks.md "A domain per shard".
#
#   bench/provider_ab.sh [--shards 2] [--procs 2] [--threads 2] [--depth 4] [--rounds 3]
#       [--seconds 5] [--server-args '...'] LABEL=BINDIR:PROVIDER ...
# e.g. bench/provider_ab.sh --shards 1 --procs 1 --threads 1 --depth 1 \
#        default=build/bin:auto rxm=build/bin:tcp\;ofi_rxm
# PROVIDER "auto" passes no --provider (the product default). $RPMP_CLIENT_POLL_US is
# passed through to the clients.
set -euo pipefail
shards=2 procs=2 threads=2 depth=4 rounds=3 seconds=5 server_args=""
while [[ $# -gt 0 && "$1" == --* ]]; do
  case "$1" in
    --shards) shards=$2 ;; --procs) procs=$2 ;; --threads) threads=$2 ;; --depth) depth=$2 ;;
    --rounds) rounds=$2 ;; --seconds) seconds=$2 ;; --server-args) server_args=$2 ;;
    *) echo "provider_ab: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
[[ $# -ge 1 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
setups=("$@")
work=$(mktemp -d /tmp/rpmp-provider-ab.XXXXXX)
trap 'rm -rf "$work" /dev/shm/rpmp-provider-ab-$$-*' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

pingpong() {  # PROVIDER: one-way usec per 4 KiB transfer
  local prov=$1 port try
  port=$(free_port)
  timeout 60 fi_pingpong -p "$prov" -e rdm -S 4096 -I 10000 -B "$port" >"$work/pp.server" 2>&1 &
  local s=$!
  for try in 1 2 3 4 5 6 7 8 9 10; do
    kill -0 "$s" 2>/dev/null || break
    timeout 60 fi_pingpong -p "$prov" -e rdm -S 4096 -I 10000 -P "$port" 127.0.0.1 >"$work/pp" 2>&1 && break
    sleep 0.5
  done
  wait "$s" || true
  echo "peer=fi_pingpong provider=$prov size=4k usec_per_xfer=$(awk '$1=="4k" {print $7}' "$work/pp")"
}

run() {  # LABEL=BINDIR:PROVIDER ROUND
  local label=${1%%=*} rest=${1#*=} round=$2
  local bin=${rest%%:*} prov=${rest#*:} port pool args=() sp i p total=0 errs=0
  [[ "$prov" == auto ]] || args=(--provider "$prov")
  port=$(free_port) pool=/dev/shm/rpmp-provider-ab-$$-$label.pool
  rm -f "$pool"
  # shellcheck disable=SC2086
  PMEM_IS_PMEM_FORCE=1 "$bin/rpmp-server" --listen "127.0.0.1:$port" --pool "$pool:1g" \
    --data-threads "$shards" "${args[@]}" $server_args >"$work/server.log" 2>&1 &
  sp=$!
  for i in $(seq 1 200); do grep -q "rpmp-server ready" "$work/server.log" && break; sleep 0.05; done
  local served; served=$(grep -o "([a-z;_]*), [0-9]* data shard" "$work/server.log" | tr -d '(),' | awk '{print $1}')
  for p in $(seq 1 "$procs"); do
    "$bin/rpmp-bench" --server "127.0.0.1:$port" "${args[@]}" --namespace "ns$p" --workloads put \
      --sizes 4k --threads 1 --seconds 1 --keys 1000 >/dev/null 2>&1
  done
  for p in $(seq 1 "$procs"); do
    "$bin/rpmp-bench" --server "127.0.0.1:$port" "${args[@]}" --namespace "ns$p" --workloads get \
      --sizes 4k --threads "$threads" --depth "$depth" --seconds "$seconds" --keys 1000 >"$work/c$p" 2>&1 &
  done
  wait $(jobs -p | grep -v "^$sp$") 2>/dev/null || true
  kill "$sp"; wait "$sp" 2>/dev/null || true
  rm -f "$pool"
  for p in $(seq 1 "$procs"); do
    total=$(python3 -c "print($total + float('$(grep -o 'ops_per_s=[0-9.]*' "$work/c$p" | head -1 | cut -d= -f2)' or 0))")
    errs=$((errs + $(grep -o 'errors=[0-9]*' "$work/c$p" | head -1 | cut -d= -f2 || echo 0)))
  done
  echo "setup=$label provider=$served round=$round ops_per_s=$(printf '%.0f' "$total")" \
    "$(grep -o 'p50_us=[0-9.]*\|p99_us=[0-9.]*' "$work/c1" | head -2 | tr '\n' ' ')errors=$errs"
}

echo "== provider A/B ($(date -u '+%F %T UTC')): $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "shards=$shards procs=$procs threads=$threads depth=$depth seconds=$seconds rounds=$rounds" \
  "server_args='$server_args' client_poll_us=${RPMP_CLIENT_POLL_US:-0} setups: ${setups[*]}"
export FI_TCP_IFACE=lo
for prov in net tcp "tcp;ofi_rxm"; do
  fi_info -p "$prov" -t FI_EP_RDM 2>/dev/null | grep -qx "provider: $prov" && pingpong "$prov"
done
# The floor of any synchronous request/reply over loopback TCP, with threads sleeping
# between messages (RPMP's default) and spinning (fi_pingpong's way): round trips, 4 KiB.
first_bin=${setups[0]#*=}; first_bin=${first_bin%%:*}
"$first_bin/rpmp-tcp-pingpong" --size 4096 --seconds 2
results=$work/results
: >"$results"
for r in $(seq 1 "$rounds"); do
  order=("${setups[@]}")
  if (( r % 2 == 0 )); then mapfile -t order < <(printf '%s\n' "${setups[@]}" | tac); fi
  for s in "${order[@]}"; do run "$s" "$r" | tee -a "$results"; done
done
python3 - "$results" "${setups[@]%%=*}" <<'EOF'
import re, statistics, sys
rows = [dict(re.findall(r'(\w+)=(\S+)', l)) for l in open(sys.argv[1])]
labels = sys.argv[2:]
med = {l: statistics.median(float(r['ops_per_s']) for r in rows if r['setup'] == l) for l in labels}
for l in labels:
    print(f"median setup={l} ops_per_s={med[l]:.0f} ratio_to_{labels[0]}={med[l] / med[labels[0]]:.2f}")
bad = [r for r in rows if float(r['ops_per_s']) <= 0 or int(r.get('errors', '0')) != 0]
if bad or any(m <= 0 for m in med.values()):
    print(f"provider_ab: FAILED: {len(bad)} runs without gets or with errors")
    sys.exit(1)
EOF
