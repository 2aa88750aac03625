#!/usr/bin/env bash
# Cost of data-plane security (docs/security.md): rpmp-bench 1 MiB put/get against two
# rpmp-servers started side by side in one run, one with a cluster secret (HELLO
# challenge-response, session tags and sender checks) and one without (protected
# mode, loopback). Rounds alternate between the two so machine noise hits both alike.
# Prints one key=value line per round and the ratio secured/unsecured per workload.
#
#   bench/security_overhead.sh [BUILD_DIR] [ROUNDS] [SECONDS]
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
secs=${3:-5}
bin="$build/bin"
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
(umask 077 && openssl rand -hex 32 >"$work/secret")
start() {  # start NAME [ARGS...]: prints the listen address once ready
  local name=$1; shift
  local port; port=$(free_port)
  "$bin/rpmp-server" --listen "127.0.0.1:$port" --pool "/dev/shm/rpmp-secbench-$$-$name.pool:${RPMP_POOL_SIZE:-512m}" "$@" \
    >"$work/$name.out" 2>"$work/$name.err" &
  pids+=($!)
  local deadline=$((SECONDS + 60))
  until grep -q "rpmp-server ready" "$work/$name.out"; do
    [ $SECONDS -lt $deadline ] || { cat "$work/$name.err" >&2; exit 1; }
    sleep 0.1
  done
  echo "127.0.0.1:$port"
}
on=$(start secured --auth-secret-file "$work/secret")
off=$(start open)
trap 'cleanup; rm -f /dev/shm/rpmp-secbench-$$-*.pool' EXIT
declare -A sum
for r in $(seq 1 "$rounds"); do
  order="off on"; [ $((r % 2)) = 0 ] && order="on off"  # alternate who goes first
  for mode in $order; do
    addr=$off; env=(env -u RPMP_SECRET_FILE)
    [ $mode = on ] && { addr=$on; env=(env RPMP_SECRET_FILE="$work/secret"); }
    while read -r line; do
      echo "round=$r security=$mode $line"
      [[ $line == FAILED* ]] && exit 1
      wl=$(sed -n 's/.*workload=\([a-z]*\) .*/\1/p' <<<"$line")
      mbs=$(sed -n 's/.* MBps=\([0-9.]*\) .*/\1/p' <<<"$line")
      [ -n "$wl" ] && [ -n "$mbs" ] && sum[$mode.$wl]=$(python3 -c "print(${sum[$mode.$wl]:-0}+$mbs)")
    done < <("${env[@]}" "$bin/rpmp-bench" --server "$addr" --workloads put,get --sizes 1m --seconds "$secs" --threads 2 --depth 4 --keys 64 || echo "FAILED rpmp-bench")
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || { echo "a server died (see $work)" >&2; exit 1; }; done
  done
done
for wl in put get; do
  python3 -c "on=${sum[on.$wl]:-0};off=${sum[off.$wl]:-0};print(f'workload=$wl secured_MBps={on/$rounds:.1f} unsecured_MBps={off/$rounds:.1f} ratio={on/off if off else 0:.3f}')"
done
