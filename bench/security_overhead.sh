#!/usr/bin/env bash
# Cost of data-plane security (docs/security.md): rpmp-bench 1 MiB put/get against two
# rpmp-servers started side by side in one run, one with a cluster secret (HELLO
# challenge-response, session tags and sender checks) and one without (protected
# mode, loopback). Rounds alternate between the two so machine noise hits both alike.
# Prints one key=value line per round, then per workload the median MB/s of each side
# over the rounds and their ratio secured/unsecured (docs/security.md, "Cost").
#
#   bench/security_overhead.sh [BUILD_DIR] [ROUNDS] [SECONDS]
# BIN_OFF=<dir> takes the unsecured side's rpmp-server, and its rpmp-bench when that
# directory has one, from another build (e.g. one from before security, for the whole
# cost: the protocol changed, so an old server needs its own client); the secured side
# stays this build with the secret. OFF_SECRET=1 gives the BIN_OFF side the secret too
# (same protocol: this build against another build of it, e.g. main vs a branch).
# TOKEN=1 compares tenant tokens with the cluster secret (docs/security.md "Tenants"):
# both servers hold the secret; the "on" client proves a token for rpmp-bench/ (its
# namespace, checked against the prefix on every request), the "off" client the secret.
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
secs=${3:-5}
bin="$build/bin"
work=$(mktemp -d)
source "$(dirname "$0")/lib.sh"
cleanup() { bench_stop_all; rm -rf "$work"; rm -f /dev/shm/rpmp-secbench-$$-*.pool; }
trap cleanup EXIT
trap 'exit 1' TERM INT
(umask 077 && openssl rand -hex 32 >"$work/secret")
addr=""
start() {  # start NAME BIN [ARGS...]: sets addr to the listen address once ready
  # (not in a $(...) subshell: the server must be in this shell's bench_pids to be stopped)
  local name=$1 sbin=$2; shift 2
  local port; port=$(free_port)
  # 16 MiB segments: overwriting 64 keys of 1 MiB leaves segments partly live, and
  # without compaction 64 MiB ones would fill a 512 MiB pool within a few rounds.
  "$sbin/rpmp-server" --listen "127.0.0.1:$port" --pool "/dev/shm/rpmp-secbench-$$-$name.pool:${RPMP_POOL_SIZE:-512m}" \
    --segment-size "${RPMP_SEGMENT_SIZE:-16m}" "$@" \
    >"$work/$name.out" 2>"$work/$name.err" &
  bench_pids+=($!)
  wait_for "rpmp-server $name (see $work/$name.err)" 60 grep -q "rpmp-server ready" "$work/$name.out"
  addr="127.0.0.1:$port"
}
bench_off="$bin/rpmp-bench"
if [ -n "${BIN_OFF:-}" ]; then
  start secured "$bin" --auth-secret-file "$work/secret"; on=$addr  # this build, secured
  off_args=(); [ "${OFF_SECRET:-0}" = 1 ] && off_args=(--auth-secret-file "$work/secret")
  start old "$BIN_OFF" ${off_args[@]+"${off_args[@]}"}; off=$addr
  [ -x "$BIN_OFF/rpmp-bench" ] && bench_off="$BIN_OFF/rpmp-bench"
  no_secret=0 label_on=secured label_off=old
  echo "sides: on=this build ($bin) with the cluster secret; off=BIN_OFF ($BIN_OFF) server, client $bench_off, secret: ${OFF_SECRET:-0}"
elif [ "${TOKEN:-0}" = 1 ]; then
  start token "$bin" --auth-secret-file "$work/secret"; on=$addr
  start secret "$bin" --auth-secret-file "$work/secret"; off=$addr
  (umask 077 && RPMP_SECRET_FILE="$work/secret" "$bin/rpmpctl" token mint --prefix rpmp-bench/ --app bench >"$work/token")
  OFF_SECRET=1 no_secret=1 label_on=token label_off=secret
  echo "sides: on=tenant token (prefix rpmp-bench/), off=cluster secret; both servers with the secret; both $bin"
else
  start secured "$bin" --auth-secret-file "$work/secret"; on=$addr
  start open "$bin"; off=$addr
  no_secret=0 label_on=secured label_off=unsecured
  echo "sides: on=secured (cluster secret), off=unsecured; both $bin"
fi
declare -A vals  # mode.workload -> MB/s of each round, space-separated
for r in $(seq 1 "$rounds"); do
  order="off on"; [ $((r % 2)) = 0 ] && order="on off"  # alternate who goes first
  for mode in $order; do
    addr=$off; env=(env -u RPMP_SECRET_FILE) client=$bench_off
    [ "${OFF_SECRET:-0}" = 1 ] && env=(env RPMP_SECRET_FILE="$work/secret")
    [ $mode = on ] && { addr=$on client="$bin/rpmp-bench"; [ $no_secret = 1 ] || env=(env RPMP_SECRET_FILE="$work/secret"); }
    [ $mode = on ] && [ "${TOKEN:-0}" = 1 ] && env=(env -u RPMP_SECRET_FILE RPMP_TOKEN_FILE="$work/token")
    while read -r line; do
      echo "round=$r security=$mode $line"
      [[ $line == FAILED* ]] && exit 1
      wl=$(sed -n 's/.*workload=\([a-z]*\) .*/\1/p' <<<"$line")
      mbs=$(sed -n 's/.* MBps=\([0-9.]*\) .*/\1/p' <<<"$line")
      [ -n "$wl" ] && [ -n "$mbs" ] && vals[$mode.$wl]="${vals[$mode.$wl]:-} $mbs"
    done < <("${env[@]}" "$client" --server "$addr" --workloads put,get --sizes 1m --seconds "$secs" --threads 2 --depth 4 --keys 64 || echo "FAILED rpmp-bench")
    for p in "${bench_pids[@]}"; do kill -0 "$p" 2>/dev/null || { echo "a server died (see $work)" >&2; exit 1; }; done
  done
done
# Medians over the rounds (robust to a round hit by another process), and the ratio of
# the medians; also the spread of per-round ratios (round r secured / round r unsecured).
for wl in put get; do
  python3 - "$wl" "${vals[on.$wl]:-}" "${vals[off.$wl]:-}" "$label_on" "$label_off" <<'PY'
import statistics, sys
wl, on, off = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
lon, loff = sys.argv[4], sys.argv[5]
mon, moff = statistics.median(on), statistics.median(off)
ratios = sorted(a / b for a, b in zip(on, off) if b)
print(f"workload={wl} rounds={len(on)} {lon}_median_MBps={mon:.1f} {loff}_median_MBps={moff:.1f} "
      f"ratio={mon / moff if moff else 0:.3f} round_ratios_min={ratios[0]:.3f} round_ratios_max={ratios[-1]:.3f}")
PY
done
