#!/usr/bin/env bash
# A whole RPMP cluster on loopback for development and demos: one etcd, two
# rpmp-proxy (leader + standby) and three rpmp-server with pools on /dev/shm.
#
#   deploy/local-cluster.sh start [--tls|--insecure]|stop [--wipe]|status|restart
#
# Ports (fixed, from RPMP_BASE_PORT, default 7400):
#   etcd client BASE, etcd peer BASE+1, proxies BASE+10 and BASE+11,
#   servers BASE+20, BASE+21, BASE+22; Prometheus metrics (http://HOST:PORT/metrics)
#   of the proxies on BASE+40, BASE+41 and of the servers on BASE+30, BASE+31, BASE+32.
# State, logs and pid files live in RPMP_RUN_DIR (default /tmp/rpmp-cluster, mode 0700,
# files 0600); pools
# are /dev/shm/rpmp-cluster-BASE-N.pool (RPMP_POOL_SIZE, default 512m), kept across
# stop/start so servers come back with their id and data ("stop --wipe" removes them).
# RPMP_CAPACITY_POOL_SIZE (default none) gives each server a capacity tier too: a file
# pool RUN/capacity-N.pool of that size (--capacity-pool), used when its /dev/shm pool is
# full, as an SSD would be (docs/operations.md "Capacity tier").
# RPMP_PREFAULT=1 starts the servers with --prefault (every pool page mapped at start:
# a slower start, no first-touch page faults while serving; benchmarks use it).
# Binaries come from RPMP_BIN_DIR (default build/bin). Readiness is polled (log lines,
# `rpmpctl nodes` showing 3 LIVE), never guessed with sleeps.
# Proxy flags come from RPMP_PROXY_FLAGS (default: deploy/rpmp-proxy.flags values
# tuned for quick failover on one machine).
# Secured by default (docs/security.md): start generates a cluster secret into
# RUN/secret (openssl, mode 600) and the servers require it; it also makes a CA and
# certificates in RUN/tls (deploy/make-certs.sh): etcd serves TLS and requires client
# certificates of its own CA (RUN/tls/etcd-ca.crt) on its client and peer ports, with
# authentication on (deploy/etcd-auth.sh: only the proxies' etcd certificate reaches keys,
# those under /rpmp/default/; RUN/tls/etcd-root.* is etcd's root user), the proxies serve
# mutual TLS, each server heartbeats with its own node
# certificate; the proxies issue per-application credentials from the same secret
# (--token-secret-file; RPMP_ISSUE_TOKENS=0 starts proxies that issue none, and clients
# then prove the cluster secret, as before tenants existed). `status` prints RPMP_SECRET_FILE=... and RPMP_TLS_DIR=... (an
# application's certificate) for clients (rpmpctl, rpmp-bench, librpmp, the Java
# client); RUN/tls/admin is the operator's RPMP_TLS_DIR (drain, deleting any namespace).
# `start --insecure` (or RPMP_INSECURE=1) starts everything without a secret or TLS
# (loopback, protected mode); `start --tls` is the default, spelled out.
set -euo pipefail
# Logs, pid files, the secret and pools are the operator's alone (0600 files in a
# 0700 RUN directory): logs name clients and namespaces (docs/security.md).
umask 077

here="$(cd "$(dirname "$0")" && pwd)"
BIN="${RPMP_BIN_DIR:-$here/../build/bin}"
RUN="${RPMP_RUN_DIR:-/tmp/rpmp-cluster}"
BASE="${RPMP_BASE_PORT:-7400}"
POOL_SIZE="${RPMP_POOL_SIZE:-512m}"
PROXY_FLAGS="${RPMP_PROXY_FLAGS:---heartbeat-timeout 3s --suspect-after 1500ms --heartbeat-interval 500ms --session-ttl 2}"
NSERVERS=3
ETCD_PORT=$BASE
PROXIES="127.0.0.1:$((BASE + 10)),127.0.0.1:$((BASE + 11))"
SECRET="$RUN/secret"
TLS="$RUN/tls"
secured() { [ "${RPMP_INSECURE:-0}" != 1 ]; }

die() { echo "local-cluster: $*" >&2; exit 1; }

# wait_for DESCRIPTION SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds.
wait_for() {
  local what=$1 secs=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || die "timed out after ${secs}s waiting for $what (logs in $RUN)"
    sleep 0.1
  done
}

# alive NAME: its process exists and has not exited. A process killed with kill -9 stays a
# zombie until its parent reaps it, and the parent of what `spawn` started (this script
# has exited) is init, which on some hosts (containers, microVMs) reaps late: kill -0
# succeeds on a zombie, so its state (/proc/PID/stat, after the command name) is checked.
alive() {
  [ -f "$RUN/$1.pid" ] || return 1
  local pid state
  pid=$(cat "$RUN/$1.pid")
  kill -0 "$pid" 2>/dev/null || return 1
  state=$(sed 's/^.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
  [ "$state" != Z ] && [ "$state" != X ]
}

# wait_logged NAME SECONDS PATTERN: polls NAME.log for PATTERN; fails at once, with the
# log's tail, if NAME exits first, and with the tail after SECONDS.
wait_logged() {
  local name=$1 secs=$2 pattern=$3
  local deadline=$((SECONDS + secs)) from=1
  # Only what this start wrote counts (a restart appends to the log of the last run).
  [ -f "$RUN/$name.logstart" ] && from=$(( $(cat "$RUN/$name.logstart") + 1 ))
  until tail -c +"$from" "$RUN/$name.log" 2>/dev/null | grep -q "$pattern"; do
    if ! alive "$name"; then
      tail -n 30 "$RUN/$name.log" >&2 2>/dev/null || true
      die "$name exited before logging '$pattern' (log: $RUN/$name.log)"
    fi
    if [ $SECONDS -ge $deadline ]; then
      tail -n 30 "$RUN/$name.log" >&2 2>/dev/null || true
      die "timed out after ${secs}s waiting for $name to log '$pattern' (log: $RUN/$name.log)"
    fi
    sleep 0.1
  done
}

spawn() {  # spawn NAME COMMAND...: runs in the background, stdout+stderr to NAME.log
  local name=$1; shift
  alive "$name" && { echo "$name already running (pid $(cat "$RUN/$name.pid"))"; return; }
  { wc -c <"$RUN/$name.log" || echo 0; } 2>/dev/null >"$RUN/$name.logstart"
  "$@" >>"$RUN/$name.log" 2>&1 &
  echo $! >"$RUN/$name.pid"
}

live_nodes() { ctl nodes 2>/dev/null | grep -c ' LIVE ' || true; }
# ctl ARGS...: rpmpctl against the proxies, with the application's certificate when secured.
ctl() {
  if secured; then RPMP_TLS_DIR="$TLS/client" "$BIN/rpmpctl" --proxy "$PROXIES" "$@"
  else "$BIN/rpmpctl" --proxy "$PROXIES" "$@"; fi
}
three_live() { [ "$(live_nodes)" -ge "$NSERVERS" ]; }

start() {
  for b in rpmp-server rpmp-proxy rpmpctl; do [ -x "$BIN/$b" ] || die "$BIN/$b missing: build first (or set RPMP_BIN_DIR)"; done
  command -v etcd >/dev/null || die "etcd not found (Debian package etcd-server)"
  mkdir -p "$RUN"
  chmod 700 "$RUN"
  chmod 600 "$RUN"/*.log 2>/dev/null || true  # left by an older script
  local auth=() etcd_tls=() proxy_tls=() scheme=http curl_tls=()
  if secured; then
    command -v openssl >/dev/null || die "openssl not found (needed to generate the cluster secret and certificates)"
    if [ ! -s "$SECRET" ]; then
      (umask 077 && openssl rand -hex 32 >"$SECRET")
    fi
    auth=(--auth-secret-file "$SECRET")
    export RPMP_SECRET_FILE="$SECRET"
    "$here/make-certs.sh" "$TLS" --hosts 127.0.0.1,localhost --nodes node0,node1,node2
    scheme=https
    # etcd trusts only the etcd CA (etcd-ca.crt): the cluster CA's application, admin
    # and node certificates fail its TLS handshake, on the client and the peer port.
    etcd_tls=(--cert-file "$TLS/etcd.crt" --key-file "$TLS/etcd.key" --client-cert-auth --trusted-ca-file "$TLS/etcd-ca.crt"
      --peer-cert-file "$TLS/etcd.crt" --peer-key-file "$TLS/etcd.key" --peer-client-cert-auth
      --peer-trusted-ca-file "$TLS/etcd-ca.crt" --peer-cert-allowed-cn etcd)
    curl_tls=(--cacert "$TLS/etcd-ca.crt" --cert "$TLS/proxy-etcd.crt" --key "$TLS/proxy-etcd.key")
    # --token-secret-file: the proxies issue per-application credentials (IssueCredential,
    # `rpmpctl token issue`, the Spark plugin's per-application token; docs/security.md).
    proxy_tls=(--tls-cert "$TLS/proxy.crt" --tls-key "$TLS/proxy.key" --tls-ca "$TLS/ca.crt"
      --etcd-ca "$TLS/etcd-ca.crt" --etcd-cert "$TLS/proxy-etcd.crt" --etcd-key "$TLS/proxy-etcd.key")
    [ "${RPMP_ISSUE_TOKENS:-1}" = 0 ] || proxy_tls+=(--token-secret-file "$SECRET")
  fi
  spawn etcd etcd --name rpmp-local --data-dir "$RUN/etcd-data" \
    --listen-client-urls "$scheme://127.0.0.1:$ETCD_PORT" --advertise-client-urls "$scheme://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "$scheme://127.0.0.1:$((BASE + 1))" --initial-advertise-peer-urls "$scheme://127.0.0.1:$((BASE + 1))" \
    --initial-cluster "rpmp-local=$scheme://127.0.0.1:$((BASE + 1))" ${etcd_tls[@]+"${etcd_tls[@]}"}
  wait_for "etcd health" 30 curl -sf ${curl_tls[@]+"${curl_tls[@]}"} "$scheme://127.0.0.1:$ETCD_PORT/health"
  # Users and roles: only the proxies' CN reaches etcd, and only under /rpmp/default/.
  secured && "$here/etcd-auth.sh" "$scheme://127.0.0.1:$ETCD_PORT" "$TLS"
  for i in 0 1; do
    # shellcheck disable=SC2086
    spawn "proxy$i" "$BIN/rpmp-proxy" --listen "127.0.0.1:$((BASE + 10 + i))" \
      --metrics-listen "127.0.0.1:$((BASE + 40 + i))" --etcd "$scheme://127.0.0.1:$ETCD_PORT" \
      ${proxy_tls[@]+"${proxy_tls[@]}"} $PROXY_FLAGS
  done
  for i in 0 1; do wait_logged "proxy$i" 30 "listening on"; done
  for i in $(seq 0 $((NSERVERS - 1))); do
    local node_tls=()
    secured && node_tls=(--tls-ca "$TLS/ca.crt" --tls-cert "$TLS/node$i.crt" --tls-key "$TLS/node$i.key")
    [ "${RPMP_PREFAULT:-0}" = 1 ] && node_tls+=(--prefault)
    [ -n "${RPMP_CAPACITY_POOL_SIZE:-}" ] && node_tls+=(--capacity-pool "$RUN/capacity-$i.pool:$RPMP_CAPACITY_POOL_SIZE")
    spawn "server$i" "$BIN/rpmp-server" --listen "127.0.0.1:$((BASE + 20 + i))" \
      --pool "/dev/shm/rpmp-cluster-$BASE-$i.pool:$POOL_SIZE" --proxy "$PROXIES" ${auth[@]+"${auth[@]}"} \
      ${node_tls[@]+"${node_tls[@]}"} --metrics-listen "127.0.0.1:$((BASE + 30 + i))"
  done
  for i in $(seq 0 $((NSERVERS - 1))); do wait_logged "server$i" 60 "rpmp-server ready"; done
  wait_for "$NSERVERS LIVE nodes" 30 three_live
  status
}

stop() {
  local wipe=${1:-}
  for name in server0 server1 server2 proxy0 proxy1 etcd; do
    if alive "$name"; then
      local pid; pid=$(cat "$RUN/$name.pid")
      kill -TERM "$pid"
      local deadline=$((SECONDS + 15))
      while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    fi
    rm -f "$RUN/$name.pid"
  done
  if [ "$wipe" = "--wipe" ]; then
    rm -rf "$RUN" /dev/shm/rpmp-cluster-"$BASE"-*.pool
    echo "stopped; run dir and pools removed"
  else
    echo "stopped; logs and etcd data in $RUN, pools kept on /dev/shm"
  fi
}

status() {
  echo "run dir:  $RUN (logs: $RUN/*.log)"
  for name in etcd proxy0 proxy1 server0 server1 server2; do
    if alive "$name"; then state="running pid $(cat "$RUN/$name.pid")"; else state="stopped"; fi
    printf '  %-8s %s\n' "$name" "$state"
  done
  if secured; then echo "etcd:     https://127.0.0.1:$ETCD_PORT (client certificates required)"
  else echo "etcd:     http://127.0.0.1:$ETCD_PORT"; fi
  echo "servers:  127.0.0.1:$((BASE + 20)) 127.0.0.1:$((BASE + 21)) 127.0.0.1:$((BASE + 22))"
  echo "metrics:"
  for i in 0 1; do printf '  %-8s http://127.0.0.1:%d/metrics\n' "proxy$i" $((BASE + 40 + i)); done
  for i in $(seq 0 $((NSERVERS - 1))); do
    printf '  %-8s http://127.0.0.1:%d/metrics\n' "server$i" $((BASE + 30 + i))
  done
  ctl nodes 2>&1 | sed 's/^/  /' || true
  if secured; then
    [ -s "$SECRET" ] && echo "RPMP_SECRET_FILE=$SECRET"
    [ -s "$TLS/client/client.crt" ] && echo "RPMP_TLS_DIR=$TLS/client"
  fi
  echo "RPMP_PROXIES=$PROXIES"
}

case "${1:-}" in
  start)
    case "${2:-}" in
      "" | --tls) ;;
      --insecure) RPMP_INSECURE=1 ;;
      *) echo "usage: $0 start [--tls|--insecure]" >&2; exit 2 ;;
    esac
    start ;;
  stop) stop "${2:-}" ;;
  status) status ;;
  restart) stop; start ;;
  *) echo "usage: $0 start [--tls|--insecure]|stop [--wipe]|status|restart" >&2; exit 2 ;;
esac
