#!/usr/bin/env bash
# Prometheus scrapes a real local cluster (deploy/local-cluster.sh: etcd, 2 rpmp-proxy,
# 3 rpmp-server, each serving /metrics) on random loopback ports; through Prometheus'
# HTTP API the test checks that every target is up and that the request counters of
# the servers and the proxies rise while rpmp-bench runs. Missing prerequisites fail.
#
#   tests/metrics/prometheus_test.sh BIN_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
BIN="$(cd "${1:?usage: $0 BIN_DIR}" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in prometheus etcd curl python3; do
  command -v "$tool" >/dev/null || fail "$tool not installed (deploy/install-deps.sh)"
done

# shellcheck source=../lib/port_block.sh
source "$here/../lib/port_block.sh"
reserve_port_block || fail "no free port block"
work=$(mktemp -d)
base=$PORT_BLOCK
prom_port=$((base + 50))
export RPMP_RUN_DIR="$work/cluster" RPMP_BASE_PORT=$base RPMP_BIN_DIR="$BIN" RPMP_POOL_SIZE=256m
prom_pid=""
cleanup() {
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
  "$here/../../deploy/local-cluster.sh" stop --wipe >/dev/null 2>&1 || true
  rm -rf "$work"
  release_port_block
}
trap cleanup EXIT

echo "t=${SECONDS}s starting cluster"
"$here/../../deploy/local-cluster.sh" start >"$work/cluster.out" || { cat "$work/cluster.out"; fail "cluster did not start"; }
# The cluster is secured: rpmp-bench needs its secret and a client certificate for the
# proxies' mutual TLS (both printed by status).
RPMP_SECRET_FILE=$(sed -n 's/^RPMP_SECRET_FILE=//p' "$work/cluster.out" | tail -1)
[ -n "$RPMP_SECRET_FILE" ] || { cat "$work/cluster.out"; fail "no RPMP_SECRET_FILE in local-cluster.sh status"; }
RPMP_TLS_DIR=$(sed -n 's/^RPMP_TLS_DIR=//p' "$work/cluster.out" | tail -1)
[ -n "$RPMP_TLS_DIR" ] || { cat "$work/cluster.out"; fail "no RPMP_TLS_DIR in local-cluster.sh status"; }
export RPMP_SECRET_FILE RPMP_TLS_DIR
# The metrics URLs the status command prints are the scrape targets.
mapfile -t urls < <(grep -oE 'http://127\.0\.0\.1:[0-9]+/metrics' "$work/cluster.out")
[ "${#urls[@]}" -eq 5 ] || fail "expected 5 metrics URLs in local-cluster.sh status, got ${#urls[@]}"
targets=$(printf "'%s'," "${urls[@]}" | sed -E "s#http://([^/]+)/metrics#\1#g; s/,$//")
cat >"$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: rpmp
    static_configs:
      - targets: [$targets]
YML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
prom_pid=$!

api="http://127.0.0.1:$prom_port/api/v1"
# query EXPR: prints the scalar value of an instant query (0 when empty).
query() {
  curl -sf --get "$api/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else 0)'
}
# poll SECONDS DESCRIPTION COMMAND...: retries COMMAND until it succeeds or time is up.
poll() {
  local secs=$1 what=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@"; do
    [ $SECONDS -lt $deadline ] || { tail -5 "$work/prometheus.log" >&2; fail "timed out after ${secs}s: $what"; }
    sleep 0.5
  done
}
all_up() { [ "$(query 'count(up{job="rpmp"} == 1)' 2>/dev/null || echo 0)" = "5" ]; }
echo "t=${SECONDS}s cluster up, waiting for Prometheus"
poll 90 "Prometheus sees all 5 targets up" all_up
echo "ok: 5 targets up"

echo "t=${SECONDS}s running rpmp-bench"
before_srv=$(query 'sum(rpmp_server_requests_total{op="put",status="ok"})')
before_proxy=$(query 'sum(rpmp_proxy_grpc_requests_total{method="GetPlacement"})')
"$BIN/rpmp-bench" --proxy "127.0.0.1:$((base + 10)),127.0.0.1:$((base + 11))" --replicas 2 \
  --workloads put,get --sizes 4k --seconds 2 --threads 2 >"$work/bench.out" || { cat "$work/bench.out"; fail "rpmp-bench failed"; }
echo "t=${SECONDS}s bench done"
higher() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) > float(sys.argv[2]) else 1)" "$(query "$1")" "$2"; }
poll 60 "server put counters rise above $before_srv" higher 'sum(rpmp_server_requests_total{op="put",status="ok"})' "$before_srv"
poll 60 "server get latency histogram counts requests" higher 'sum(rpmp_server_request_seconds_count{op="get"})' 0
poll 60 "proxy GetPlacement counters rise above $before_proxy" higher 'sum(rpmp_proxy_grpc_requests_total{method="GetPlacement"})' "$before_proxy"
poll 30 "the proxies see 3 LIVE nodes" higher 'max(rpmp_proxy_nodes{state="live"})' 2
poll 30 "one proxy leads" higher 'sum(rpmp_proxy_is_leader)' 0
poll 30 "replication is timed" higher 'sum(rpmp_server_replication_seconds_count)' 0
echo "ok: counters rose: server puts $before_srv -> $(query 'sum(rpmp_server_requests_total{op="put",status="ok"})')," \
  "proxy GetPlacement $before_proxy -> $(query 'sum(rpmp_proxy_grpc_requests_total{method="GetPlacement"})')"
