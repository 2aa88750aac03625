#!/usr/bin/env bash
# TeraSort-like benchmark of the RPMP shuffle plugin against Spark's own sort shuffle.
# Starts one rpmp-server (pool in /dev/shm), then runs bench/spark/terasort.py with
# spark-submit alternately on RPMP (spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager)
# and on Spark's sort shuffle, --runs times each, with the same master, memory and
# partitions; prints one line per run, the medians, rpmp_median/sort_median and RPMP's
# fetch wait as a fraction of the sort shuffle's. Exits 1 if any run fails or its
# validation (order, count, checksum) fails. Stops the server and removes the pool and
# the work directory (kept, with the logs, when a run fails or with --keep).
#
#   bench/spark/run-terasort.sh [--size 1g] [--runs 3] [--build DIR] [--maps M]
#       [--reduces R] [--master MASTER] [--executor-memory 3g] [--driver-memory 2g]
#       [--only rpmp|sort] [--rpmp-conf KEY=VALUE]... [--conf KEY=VALUE]... [--keep]
#
# --size is the input in bytes (k/m/g = 2^10/2^20/2^30), 100 bytes a record.
# --rpmp-conf goes to the RPMP runs only (e.g. spark.rpmp.pushBufferSize=4m), --conf to both.
# Needs spark-submit (pyspark 4.2.0) on PATH or SPARK_SUBMIT, e.g.
#   PATH="$(deploy/install-spark.sh):$PATH" bench/spark/run-terasort.sh --build /tmp/b
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
size=1g runs=3 build=${RPMP_BUILD:-$repo/build} maps="" reduces=""
master="local-cluster[2,1,4096]" executor_memory=3g driver_memory=2g only="" keep=0
rpmp_extra=() common_extra=()
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --maps) maps=$2; shift 2 ;;
    --reduces) reduces=$2; shift 2 ;;
    --master) master=$2; shift 2 ;;
    --executor-memory) executor_memory=$2; shift 2 ;;
    --driver-memory) driver_memory=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --rpmp-conf) rpmp_extra+=(--conf "$2"); shift 2 ;;
    --conf) common_extra+=(--conf "$2"); shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) usage ;;
    *) echo "run-terasort: unknown argument $1" >&2; usage ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "run-terasort: --runs must be a positive integer" >&2; exit 2; }
case "$only" in ""|rpmp|sort) ;; *) echo "run-terasort: --only rpmp|sort" >&2; exit 2 ;; esac

build=$(cd "$build" && pwd)
server_bin="$build/bin/rpmp-server"
jar="$build/jars/rpmp-spark.jar"
[[ -x "$server_bin" ]] || { echo "run-terasort: missing $server_bin" >&2; exit 2; }
[[ -f "$jar" ]] || { echo "run-terasort: missing $jar (build with -DRPMP_JAVA=ON)" >&2; exit 2; }
spark_submit=${SPARK_SUBMIT:-$(command -v spark-submit || true)}
[[ -x "$spark_submit" ]] || {
  echo "run-terasort: spark-submit not found (PATH=\"\$(deploy/install-spark.sh):\$PATH\")" >&2; exit 2; }
python_bin=${PYSPARK_PYTHON:-$(dirname "$spark_submit")/python3}
[[ -x "$python_bin" ]] || python_bin=$(command -v python3)
export PYSPARK_PYTHON="$python_bin" PYSPARK_DRIVER_PYTHON="$python_bin"

bytes=$("$python_bin" -c '
import re, sys
m = re.fullmatch(r"(\d+)([kmgt]?)b?", sys.argv[1].strip().lower())
if not m: sys.exit("bad --size " + sys.argv[1])
print(int(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " "))' "$size")
records=$(( (bytes + 99) / 100 ))
# About 64 MiB of records per map and per reduce partition by default.
parts=$(( (bytes + (64 << 20) - 1) / (64 << 20) )); (( parts >= 2 )) || parts=2
maps=${maps:-$parts} reduces=${reduces:-$parts}

work=$(mktemp -d /tmp/rpmp-terasort.XXXXXX)
mkdir -p "$work/events" "$work/local"
pool="/dev/shm/rpmp-terasort-$$.pool"
pool_size=$(( (bytes * 3 >> 30) + 2 ))G  # RPMP holds one shuffle at a time (~input size)
server_pid="" failed=0 spark_home=""
app_ids=()
cleanup() {
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -f "$pool"
  # local-cluster executors keep their stdout/stderr in $SPARK_HOME/work/<app id>.
  if [[ -n "$spark_home" ]]; then
    for id in "${app_ids[@]}"; do [[ -n "$id" ]] && rm -rf "${spark_home:?}/work/$id"; done
  fi
  if [[ $keep -eq 1 || $failed -ne 0 ]]; then echo "logs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
spark_home=$("$python_bin" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null || true)

# rpmp-server on a free loopback port; wait for its "ready" line.
start_server() {
  local attempt
  for attempt in 1 2 3; do
    port=$("$python_bin" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    rm -f "$pool"
    "$server_bin" --listen "127.0.0.1:$port" --pool "$pool:$pool_size" --segment-size 16M \
      > "$work/server.log" 2>&1 &
    server_pid=$!
    while kill -0 "$server_pid" 2>/dev/null; do
      grep -q "rpmp-server ready" "$work/server.log" && return 0
      sleep 0.05
    done
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    echo "run-terasort: rpmp-server did not start (attempt $attempt):" >&2
    cat "$work/server.log" >&2
  done
  return 1
}
[[ "$only" == sort ]] || start_server

cores_per_worker=$(sed -n 's/^local-cluster\[[0-9]*, *\([0-9]*\),.*/\1/p' <<< "$master")
common=(--master "$master" --driver-memory "$driver_memory" --executor-memory "$executor_memory"
  --conf spark.ui.enabled=false
  --conf spark.eventLog.enabled=true --conf "spark.eventLog.dir=file://$work/events"
  --conf spark.eventLog.compress=false --conf spark.eventLog.rolling.enabled=false
  --conf "spark.local.dir=$work/local"
  --conf spark.speculation=false
  --conf spark.python.worker.reuse=true)
common+=("${common_extra[@]}")
rpmp=(--conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager
  --conf "spark.rpmp.server=127.0.0.1:${port:-0}" --conf spark.rpmp.fallback=fail
  --conf "spark.driver.extraClassPath=$jar" --conf "spark.executor.extraClassPath=$jar")
rpmp+=("${rpmp_extra[@]}")

echo "== RPMP TeraSort benchmark ($(date -u '+%Y-%m-%d %H:%M:%S UTC'))"
echo "size=$size bytes=$bytes records=$records record_bytes=100 maps=$maps reduces=$reduces runs=$runs"
echo "master=$master executor_memory=$executor_memory driver_memory=$driver_memory" \
  "cores_per_executor=${cores_per_worker:-?} spark=$("$python_bin" -c 'import pyspark; print(pyspark.__version__)')"
echo "machine: $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2 " GiB RAM, " $7 " GiB available"}'); uptime:$(uptime)"
[[ "$only" == sort ]] || echo "rpmp-server 127.0.0.1:$port pool=$pool:$pool_size segment=16M; rpmp conf: ${rpmp_extra[*]:-(defaults)}"
[[ ${#common_extra[@]} -eq 0 ]] || echo "extra conf (both): ${common_extra[*]}"
echo "work dir: $work"

results="$work/results.jsonl"
: > "$results"
run_one() {  # shuffle run
  local shuffle=$1 run=$2 log="$work/$1-$2.log" load1 rc=0 line
  local args=("${common[@]}")
  [[ "$shuffle" == rpmp ]] && args+=("${rpmp[@]}")
  load1=$(cut -d' ' -f1 /proc/loadavg)
  "$spark_submit" "${args[@]}" "$here/terasort.py" --records "$records" --maps "$maps" \
    --reduces "$reduces" --label "$shuffle-$run" > "$log" 2>&1 || rc=$?
  line=$(grep -a '^TERASORT_RESULT ' "$log" | tail -1 | cut -d' ' -f2- || true)
  if [[ -z "$line" ]]; then
    echo "shuffle=$shuffle run=$run FAILED (exit $rc, no result; log $log)"
    tail -30 "$log" | sed 's/^/  | /'
    failed=1
    return
  fi
  app_ids+=("$("$python_bin" -c 'import json,sys; print(json.loads(sys.argv[1])["app_id"])' "$line")")
  if [[ "$shuffle" == rpmp ]] && ! grep -q "stored in RPMP namespace" "$log"; then
    echo "shuffle=$shuffle run=$run FAILED: the shuffle was not stored in RPMP (log $log)"
    failed=1
  fi
  "$python_bin" - "$shuffle" "$run" "$load1" "$rc" "$line" "$results" <<'EOF' || failed=1
import json, sys
shuffle, run, load1, rc, line, out = sys.argv[1:]
r = json.loads(line)
r.update(shuffle=shuffle, run=int(run), load1_before=float(load1), exit_code=int(rc))
ok = r["valid"] and int(rc) == 0
print("shuffle=%s run=%s seconds=%.1f sort_s=%.1f map_stage_s=%.1f reduce_stage_s=%.1f "
      "generate_s=%.1f fetch_wait_ms=%d shuffle_write_bytes=%d shuffle_read_bytes=%d "
      "remote_bytes=%d records_read=%d blocks=%d write_time_ms=%.0f gc_ms=%d load1=%s valid=%s%s"
      % (shuffle, run, r["total_s"], r["sort_s"], r.get("map_stage_s", 0),
         r.get("reduce_stage_s", 0), r["generate_s"], r.get("fetch_wait_ms", -1),
         r.get("shuffle_write_bytes", -1), r.get("shuffle_read_bytes", -1),
         r.get("shuffle_remote_bytes", -1), r.get("shuffle_read_records", -1),
         r.get("blocks_fetched", -1), r.get("shuffle_write_time_ms", -1), r.get("sort_gc_ms", -1),
         load1, "yes" if ok else "NO",
         "" if ok else " errors=" + "; ".join(r["errors"] or ["exit %s" % rc])), flush=True)
with open(out, "a") as f:
    f.write(json.dumps(r, sort_keys=True) + "\n")
sys.exit(0 if ok else 1)
EOF
}

order=(rpmp sort)
for ((i = 1; i <= runs; i++)); do
  # Alternate which shuffle goes first in a round (rpmp,sort / sort,rpmp ...) so a drift
  # in the machine's load does not favour one of them.
  if (( i % 2 == 1 )); then order=(rpmp sort); else order=(sort rpmp); fi
  for s in "${order[@]}"; do
    [[ -z "$only" || "$only" == "$s" ]] || continue
    run_one "$s" "$i"
  done
done

echo "== medians over $runs runs each; uptime:$(uptime)"
"$python_bin" - "$results" <<'EOF' || failed=1
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
keys = ["total_s", "sort_s", "map_stage_s", "reduce_stage_s", "generate_s", "fetch_wait_ms",
        "shuffle_write_bytes", "shuffle_read_bytes", "shuffle_write_time_ms", "sort_gc_ms"]
med = {}
for s in ("rpmp", "sort"):
    rs = [r for r in rows if r["shuffle"] == s and r["valid"] and r["exit_code"] == 0]
    if not rs:
        continue
    med[s] = {k: statistics.median(r.get(k, 0) for r in rs) for k in keys}
    m = med[s]
    print("median shuffle=%s runs=%d seconds=%.1f sort_s=%.1f map_stage_s=%.1f reduce_stage_s=%.1f "
          "generate_s=%.1f fetch_wait_ms=%d shuffle_write_bytes=%d shuffle_read_bytes=%d "
          "write_time_ms=%.0f gc_ms=%d"
          % (s, len(rs), m["total_s"], m["sort_s"], m["map_stage_s"], m["reduce_stage_s"],
             m["generate_s"], m["fetch_wait_ms"], m["shuffle_write_bytes"],
             m["shuffle_read_bytes"], m["shuffle_write_time_ms"], m["sort_gc_ms"]))
if "rpmp" in med and "sort" in med:
    a, b = med["rpmp"], med["sort"]
    ratio = lambda k: a[k] / b[k] if b[k] else float("nan")
    print("rpmp_median/sort_median: total=%.3f sort_job=%.3f map_stage=%.3f reduce_stage=%.3f"
          % (ratio("total_s"), ratio("sort_s"), ratio("map_stage_s"), ratio("reduce_stage_s")))
    print("rpmp fetch wait as a fraction of sort shuffle's: %.3f (%d ms / %d ms)"
          % (ratio("fetch_wait_ms"), a["fetch_wait_ms"], b["fetch_wait_ms"]))
    # Each round ran both back to back: its ratio is less sensitive to a drifting load.
    by = {(r["shuffle"], r["run"]): r for r in rows if r["valid"] and r["exit_code"] == 0}
    pairs = [(by[("rpmp", i)]["total_s"] / by[("sort", i)]["total_s"],
              by[("rpmp", i)]["sort_s"] / by[("sort", i)]["sort_s"])
             for i in sorted({r["run"] for r in rows})
             if ("rpmp", i) in by and ("sort", i) in by]
    if pairs:
        print("per-round rpmp/sort: total=[%s] sort_job=[%s]; median total=%.3f sort_job=%.3f"
              % (" ".join("%.3f" % p[0] for p in pairs), " ".join("%.3f" % p[1] for p in pairs),
                 statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)))
EOF
if [[ $failed -ne 0 ]]; then echo "run-terasort: FAILED (a run failed or did not validate)"; exit 1; fi
echo "run-terasort: all runs validated"
