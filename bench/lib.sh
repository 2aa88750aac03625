# Shell helpers shared by the benchmark scripts in bench/ (sourced, never run): a free
# loopback port, a poll with a deadline, and the list of processes a script started,
# stopped by bench_stop_all (which the scripts call from their EXIT trap).
# Callers: bench/kv/run-kv-bench.sh, bench/kv/run-compaction-bench.sh,
# bench/kv/caller_waits_ab.sh, bench/security_overhead.sh.

bench_pids=()

# A TCP port on 127.0.0.1 that nothing listens on right now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_for DESCRIPTION SECONDS COMMAND...: runs COMMAND every 0.1 s until it succeeds;
# after SECONDS, says what it waited for on stderr and exits 1.
wait_for() {
  local what=$1 secs=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || { echo "$(basename "$0"): timed out waiting for $what" >&2; exit 1; }
    sleep 0.1
  done
}

# require_bins BIN_DIR NAME...: exits 1, naming the first missing one, unless every NAME is
# an executable in BIN_DIR (the build's bin/).
require_bins() {
  local dir=$1 b; shift
  for b in "$@"; do
    [ -x "$dir/$b" ] || { echo "$(basename "$0"): $dir/$b is missing (build first)" >&2; exit 1; }
  done
}

# Stops (SIGTERM) and reaps every process in bench_pids.
bench_stop_all() {
  local p
  for p in "${bench_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${bench_pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
