#!/usr/bin/env bash
# The cost of server metrics: rpmp-bench put/get at 4k and 1m against one rpmp-server
# with metrics off and on (--metrics-listen, scraped every second like Prometheus
# would), alternating off/on ROUNDS times in one run. Prints rpmp-bench's lines, then one
# line per workload with the mean ops/s off and on and the ratio on/off.
#
#   bench/metrics_cost.sh [SECONDS] [ROUNDS]     env: RPMP_BIN_DIR (default build/bin)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
BIN="$(cd "${RPMP_BIN_DIR:-$here/../build/bin}" && pwd)"
SECS=${1:-3}
ROUNDS=${2:-2}
work=$(mktemp -d)
pid="" scraper=""
stop_server() {
  [ -n "$scraper" ] && kill "$scraper" 2>/dev/null; scraper=""
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; pid=""
}
trap 'stop_server; rm -rf "$work" /dev/shm/rpmp-metrics-cost-$$.pool' EXIT

run() {  # run off|on: one server, one rpmp-bench, results appended to $work/results
  local mode=$1 port=$((20000 + RANDOM % 12700)) extra=()
  [ "$mode" = on ] && extra=(--metrics-listen 127.0.0.1:0)
  rm -f /dev/shm/rpmp-metrics-cost-$$.pool
  "$BIN/rpmp-server" --listen "127.0.0.1:$port" --pool "/dev/shm/rpmp-metrics-cost-$$.pool:1g" \
    "${extra[@]}" >"$work/server.log" 2>&1 &
  pid=$!
  local deadline=$((SECONDS + 60))
  until grep -q "rpmp-server ready" "$work/server.log"; do
    [ $SECONDS -lt $deadline ] || { cat "$work/server.log"; exit 1; }
    sleep 0.1
  done
  if [ "$mode" = on ]; then
    local url; url=$(grep -o 'metrics=[^ ]*' "$work/server.log" | cut -d= -f2)
    (while curl -sf "$url" >/dev/null; do sleep 1; done) &
    scraper=$!
  fi
  "$BIN/rpmp-bench" --server "127.0.0.1:$port" --workloads put,get --sizes 4k,1m \
    --threads 2 --seconds "$SECS" | sed "s/^/$mode /" | tee -a "$work/results"
  stop_server
}
for _ in $(seq "$ROUNDS"); do run off; run on; done
python3 - "$work/results" <<'PY'
import re, sys, collections
ops = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = dict(re.findall(r"(\w+)=(\S+)", line))
    mode = line.split()[0]
    if "ops_per_s" in f and "workload" in f:
        ops[(f["workload"], f.get("size", "?"), mode)].append(float(f["ops_per_s"]))
for (w, s, m) in sorted({(w, s, "x") for (w, s, _) in ops}):
    off = sum(ops[(w, s, "off")]) / len(ops[(w, s, "off")])
    on = sum(ops[(w, s, "on")]) / len(ops[(w, s, "on")])
    print(f"metrics_cost workload={w} size={s} off_ops_per_s={off:.0f} on_ops_per_s={on:.0f} ratio_on_off={on/off:.3f}")
PY
