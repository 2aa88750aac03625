# Sourced by the single-server Spark integration tests (run-spark-it.sh,
# run-spark-smoke.sh, run-spark-security-it.sh): starts one rpmp-server on a free
# loopback port with its pool on /dev/shm and waits for its "ready" line, failing at once
# (with its log) if it exits first. Sets RPMP_SERVER_PORT and RPMP_SERVER_PID; the caller
# calls stop_rpmp_server from its EXIT trap.
#   start_rpmp_server WORK_DIR BUILD_DIR PYTHON POOL_SIZE [rpmp-server flags...]
start_rpmp_server() {
  local work=$1 build_dir=$2 python_bin=$3 size=$4
  shift 4
  RPMP_SERVER_PORT=$("$python_bin" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  RPMP_SERVER_POOL="/dev/shm/rpmp-spark-test-$$.pool"
  "$build_dir/bin/rpmp-server" --listen "127.0.0.1:$RPMP_SERVER_PORT" --pool "$RPMP_SERVER_POOL:$size" \
    --segment-size 16M "$@" > "$work/server.log" 2>&1 &
  RPMP_SERVER_PID=$!
  local deadline=$((SECONDS + 60))
  until grep -q "rpmp-server ready" "$work/server.log"; do
    kill -0 "$RPMP_SERVER_PID" 2>/dev/null && [[ $SECONDS -lt $deadline ]] \
      || { cat "$work/server.log"; echo "FAIL rpmp-server did not become ready"; exit 1; }
    sleep 0.1
  done
}

stop_rpmp_server() {
  [[ -n "${RPMP_SERVER_PID:-}" ]] || return 0
  kill "$RPMP_SERVER_PID" 2>/dev/null || true
  wait "$RPMP_SERVER_PID" 2>/dev/null || true
  rm -f "$RPMP_SERVER_POOL"
}
