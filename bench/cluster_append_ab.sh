#!/usr/bin/env bash
# Old against new on the C++ cluster path: each build's rpmp-bench appends into its own
# secured local cluster (deploy/local-cluster.sh of that checkout: etcd, 2 proxies, 3
# servers, TLS, secret), alternating which goes first each round, both clusters up for the
# whole run. Prints one line per run (ops/s, p50/p99, and client CPU per append where the
# build's rpmp-bench reports it) and the median new/old ratio of ops/s. Used to tell
# whether a Spark job's difference between builds (bench/spark/run-jvm-bench.sh
# --old-build) lies in librpmp, the servers and the wire, or on the JVM side.
#
#   bench/cluster_append_ab.sh [--java] OLD_REPO OLD_BUILD [ROUNDS=6] [SIZE=6k] [THREADS=1] [DEPTH=8]
# OLD_REPO: an older checkout (its deploy/local-cluster.sh); OLD_BUILD: its build dir.
# --java: the appends go through each build's Java client instead (bench/java/AppendBench.java
# run with OLD_REPO's / this checkout's client-java/target/rpmp-client-*.jar: JNI, futures and
# all, as a Spark map task uses it; one thread, SIZE in bytes or k), reporting the JVM's CPU
# per append.
# Ports: two reserved blocks (tests/lib/port_block.sh), one per cluster.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
java_mode=0
if [ "${1:-}" = "--java" ]; then java_mode=1; shift; fi
new_repo=$(cd "$here/.." && pwd) new_build=${RPMP_BUILD:-$new_repo/build}
old_repo=${1:?usage: cluster_append_ab.sh OLD_REPO OLD_BUILD [ROUNDS] [SIZE] [THREADS] [DEPTH]}
old_build=${2:?usage: cluster_append_ab.sh OLD_REPO OLD_BUILD [ROUNDS] [SIZE] [THREADS] [DEPTH]}
rounds=${3:-6} size=${4:-6k} threads=${5:-1} depth=${6:-8}
# shellcheck source=../tests/lib/port_block.sh
source "$here/../tests/lib/port_block.sh"
reserve_port_block || { echo "cluster_append_ab: no free port block" >&2; exit 1; }
new_base=$PORT_BLOCK
reserve_port_block || { PORT_BLOCK=$new_base release_port_block; echo "cluster_append_ab: no free port block" >&2; exit 1; }
old_base=$PORT_BLOCK
for f in "$new_build/bin/rpmp-bench" "$old_build/bin/rpmp-bench" "$old_repo/deploy/local-cluster.sh"; do
  [ -e "$f" ] || { echo "cluster_append_ab: $f is missing" >&2; exit 1; }
done
if [ $java_mode = 1 ]; then
  new_jar=$(ls "$new_repo"/client-java/target/rpmp-client-*.jar 2>/dev/null | head -1)
  old_jar=$(ls "$old_repo"/client-java/target/rpmp-client-*.jar 2>/dev/null | head -1)
  [ -n "$new_jar" ] && [ -n "$old_jar" ] || { echo "cluster_append_ab: --java needs both builds' client-java/target/rpmp-client-*.jar (-DRPMP_JAVA=ON)" >&2; exit 1; }
  command -v java >/dev/null || { echo "cluster_append_ab: java is missing" >&2; exit 1; }
  bytes=$(awk -v s="$size" 'BEGIN { n = s + 0; print (s ~ /k$/) ? n * 1024 : n }')
fi
work=$(mktemp -d /tmp/rpmp-append-ab.XXXXXX)
export RPMP_POOL_SIZE=${RPMP_POOL_SIZE:-1g}
export RPMP_PROXY_FLAGS=${RPMP_PROXY_FLAGS:---heartbeat-timeout 30s --suspect-after 15s --heartbeat-interval 1s --session-ttl 10}
# cluster LABEL ARGS...: that build's local-cluster.sh on its own ports and run dir.
cluster() {
  local label=$1; shift
  if [ "$label" = new ]; then
    RPMP_BASE_PORT=$new_base RPMP_RUN_DIR=$work/new RPMP_BIN_DIR=$new_build/bin "$new_repo/deploy/local-cluster.sh" "$@"
  else
    RPMP_BASE_PORT=$old_base RPMP_RUN_DIR=$work/old RPMP_BIN_DIR=$old_build/bin "$old_repo/deploy/local-cluster.sh" "$@"
  fi
}
cleanup() {
  cluster new stop --wipe >/dev/null 2>&1 || true
  cluster old stop --wipe >/dev/null 2>&1 || true
  rm -rf "$work"
  PORT_BLOCK=$new_base release_port_block
  PORT_BLOCK=$old_base release_port_block
}
trap cleanup EXIT
for label in new old; do
  cluster $label start --tls >"$work/$label-start.log" 2>&1 || { cat "$work/$label-start.log" >&2; exit 1; }
  cluster $label status >"$work/$label-status.log" 2>&1
done
echo "== cluster append A/B ($([ $java_mode = 1 ] && echo "Java client" || echo "C++ rpmp-bench")): new $(git -C "$new_repo" log -1 --format=%h) against old $(git -C "$old_repo" log -1 --format=%h)" \
  "size=$size threads=$threads depth=$depth rounds=$rounds cores=$(nproc) load=$(cut -d' ' -f1 /proc/loadavg)"
# bench LABEL: one 3 s append run; retries while the proxies still hold the last run's
# namespace as deleted-not-acknowledged (old builds exit on that).
bench() {
  local label=$1 bin=$new_build/bin env_lines out try
  [ "$label" = old ] && bin=$old_build/bin
  env_lines=$(grep -hE "^(RPMP_PROXIES|RPMP_SECRET_FILE|RPMP_TLS_DIR)=" "$work/$label-status.log" "$work/$label-start.log" | sort -u)
  for try in $(seq 20); do
    if [ $java_mode = 1 ]; then
      local jar=$new_jar; [ "$label" = old ] && jar=$old_jar
      out=$(env $env_lines java -cp "$jar" "$here/java/AppendBench.java" "$bytes" "$depth" 3 2>&1) || true
    else
      out=$(env $env_lines "$bin/rpmp-bench" --replicas 1 --workloads append --sizes "$size" \
        --threads "$threads" --depth "$depth" --seconds 3 2>&1) || true
    fi
    grep -q "have not acknowledged" <<<"$out" || break
    sleep 0.5
  done
  line=$(grep -E '^(workload=append|java_append)' <<<"$out" || true)
  [ -n "$line" ] || { echo "$label FAILED: $(tail -2 <<<"$out")"; return 1; }
  echo "$label $(grep -oE '(ops_per_s|client_cpu_us_per_op|jvm_cpu_us_per_op|p50_us|p99_us|errors)=[0-9.]+' <<<"$line" | tr '\n' ' ')"
}
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then bench old; bench new; else bench new; bench old; fi
done | tee "$work/runs"
awk '$1 == "new" || $1 == "old" { for (i = 2; i <= NF; i++) if ($i ~ /^ops_per_s=/) { split($i, kv, "="); v[$1, ++n[$1]] = kv[2] } }
  function median(l,   i, j, t, a, m) { m = n[l]; for (i = 1; i <= m; i++) a[i] = v[l, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
  END { if (n["new"] && n["old"]) printf "ratio new/old median_ops_per_s=%.3f (new %.0f, old %.0f)\n", median("new") / median("old"), median("new"), median("old") }' "$work/runs"
