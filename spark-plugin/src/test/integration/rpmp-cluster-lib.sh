# Sourced by the cluster-mode Spark integration tests (run-spark-cluster-it.sh,
# run-spark-fault-it.sh): starts deploy/local-cluster.sh (etcd + 2 rpmp-proxy + 3
# rpmp-server) in $1/cluster on a free port range and stops it (pools removed, logs kept)
# when the calling script exits. Sets and exports RPMP_RUN_DIR, RPMP_BASE_PORT,
# RPMP_BIN_DIR, RPMP_CLUSTER_SCRIPT, RPMP_PROXIES, RPMP_SECRET_FILE and RPMP_TLS_DIR (the
# cluster is secured: clients, rpmpctl and the executors' librpmp, need its secret and a
# client certificate for the proxies' mutual TLS; executors inherit both variables).
#   start_rpmp_cluster WORK_DIR BUILD_DIR REPO_DIR PYTHON
start_rpmp_cluster() {
  local work=$1 build_dir=$2 repo=$3 python_bin=$4 base
  # local-cluster.sh uses BASE..BASE+41: a block of ports reserved against the tests
  # running beside this one (tests/lib/port_block.py).
  # shellcheck source=../../../../tests/lib/port_block.sh
  source "$repo/tests/lib/port_block.sh"
  PORT_BLOCK_PYTHON=$python_bin reserve_port_block || { echo "no free port block"; exit 1; }
  base=$PORT_BLOCK
  export RPMP_RUN_DIR="$work/cluster" RPMP_BASE_PORT="$base" RPMP_BIN_DIR="$build_dir/bin"
  export RPMP_POOL_SIZE=${RPMP_POOL_SIZE:-1g}
  export RPMP_CLUSTER_SCRIPT="$repo/deploy/local-cluster.sh"
  trap 'stop_rpmp_cluster' EXIT
  "$RPMP_CLUSTER_SCRIPT" start > "$work/cluster-start.log" 2>&1 \
    || { cat "$work/cluster-start.log"; tail -n 20 "$RPMP_RUN_DIR"/*.log; echo "cluster did not start"; exit 1; }
  RPMP_PROXIES=$(grep '^RPMP_PROXIES=' "$work/cluster-start.log" | tail -1 | cut -d= -f2)
  [[ -n "$RPMP_PROXIES" ]] || { cat "$work/cluster-start.log"; echo "no RPMP_PROXIES"; exit 1; }
  export RPMP_PROXIES
  RPMP_SECRET_FILE=$(grep '^RPMP_SECRET_FILE=' "$work/cluster-start.log" | tail -1 | cut -d= -f2)
  [[ -n "$RPMP_SECRET_FILE" ]] || { cat "$work/cluster-start.log"; echo "no RPMP_SECRET_FILE"; exit 1; }
  export RPMP_SECRET_FILE
  RPMP_TLS_DIR=$(grep '^RPMP_TLS_DIR=' "$work/cluster-start.log" | tail -1 | cut -d= -f2)
  [[ -n "$RPMP_TLS_DIR" ]] || { cat "$work/cluster-start.log"; echo "no RPMP_TLS_DIR"; exit 1; }
  export RPMP_TLS_DIR
}

# Stop keeps the cluster's logs in $RPMP_RUN_DIR; the pools go (capacity-tier files too). (A paused server is
# resumed first so that it can stop.)
stop_rpmp_cluster() {
  local f
  for f in "$RPMP_RUN_DIR"/server*.pid; do
    [[ -f "$f" ]] && kill -CONT "$(cat "$f")" 2>/dev/null || true
  done
  "$RPMP_CLUSTER_SCRIPT" stop >/dev/null 2>&1 || true
  rm -f /dev/shm/rpmp-cluster-"$RPMP_BASE_PORT"-*.pool "$RPMP_RUN_DIR"/capacity-*.pool
  release_port_block
}
