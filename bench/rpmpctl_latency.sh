#!/usr/bin/env bash
# Wall time of one-shot rpmpctl commands (stat, get of a small value, ls, nodes), with the
# fast start (transport/fast_start/) off and on, in one hyperfine run on a local cluster
# started here on random loopback ports. Issue 11's target: at most 50 ms each.
#
#   bench/rpmpctl_latency.sh [RUNS]        env: RPMP_BIN_DIR (default build/bin)
#
# "off" runs the same binary with RPMP_FAST_START=0 and LD_LIBRARY_PATH pointing at the
# system's libraries, which then take precedence over the stand-in PSM libraries (the
# binary as it was before the fast start). Prints hyperfine's table, then one line per
# command: name, mean off, mean on, ratio. Needs hyperfine and etcd (deploy/install-deps.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
BIN="$(cd "${RPMP_BIN_DIR:-$here/../build/bin}" && pwd)"
RUNS=${1:-30}
command -v hyperfine >/dev/null || { echo "hyperfine missing (apt-get install hyperfine)" >&2; exit 1; }

run_dir=$(mktemp -d)
# shellcheck source=../tests/lib/port_block.sh
source "$here/../tests/lib/port_block.sh"
reserve_port_block || { echo "no free port block" >&2; exit 1; }
base=$PORT_BLOCK
export RPMP_RUN_DIR="$run_dir" RPMP_BASE_PORT=$base RPMP_BIN_DIR="$BIN" RPMP_POOL_SIZE=128m
cleanup() { "$here/../deploy/local-cluster.sh" stop --wipe >/dev/null 2>&1 || true; rm -rf "$run_dir"; release_port_block; }
trap cleanup EXIT
"$here/../deploy/local-cluster.sh" start >/dev/null
# The cluster is secured (docs/security.md): the data plane's secret, and an application's
# client certificate for the proxies' mutual TLS.
export RPMP_SECRET_FILE="$run_dir/secret" RPMP_TLS_DIR="$run_dir/tls/client"
proxies="127.0.0.1:$((base + 10)),127.0.0.1:$((base + 11))"
server="127.0.0.1:$((base + 20))"
"$BIN/rpmpctl" --proxy "$proxies" ns create bench --replicas 1 >/dev/null
printf hello | "$BIN/rpmpctl" --proxy "$proxies" put bench small -

sys_libs=/usr/lib/$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
echo "# rpmpctl one-shot latency: $RUNS runs each, server $server, proxies $proxies"
echo "# cpus $(nproc), load $(cut -d' ' -f1-3 /proc/loadavg)"
cmds=("stat:--server $server stat" "get:--proxy $proxies get bench small /dev/null"
      "ls:--proxy $proxies ls bench" "nodes:--proxy $proxies nodes")
args=()
for c in "${cmds[@]}"; do
  name=${c%%:*} rest=${c#*:}
  args+=(-n "$name-off" "env RPMP_FAST_START=0 LD_LIBRARY_PATH=$sys_libs $BIN/rpmpctl $rest")
  args+=(-n "$name-on" "$BIN/rpmpctl $rest")
done
hyperfine -N -w 3 -r "$RUNS" --export-json "$run_dir/h.json" "${args[@]}"
python3 - "$run_dir/h.json" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
for name in ("stat", "get", "ls", "nodes"):
    off, on = r[name + "-off"], r[name + "-on"]
    print(f"{name:6s} off_mean_ms={off['mean']*1e3:.1f} on_mean_ms={on['mean']*1e3:.1f} "
          f"on_min_ms={on['min']*1e3:.1f} on_median_ms={on['median']*1e3:.1f} "
          f"ratio={off['mean']/on['mean']:.2f}")
PY
