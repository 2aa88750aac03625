#!/usr/bin/env bash
# Smoke test of one Spark version of the matrix (docs/spark-plugin.md): starts an
# rpmp-server, runs spark_smoke_job.py with spark-submit --master local-cluster[2,1,1024]
# on RPMP, and compares the results with the same computation in plain Python. SPARK_SUBMIT names the
# Spark (deploy/install-spark.sh VERSION), RPMP_SPARK_JAR the plugin jar for its line.
#   SPARK_SUBMIT=... RPMP_SPARK_JAR=<build>/jars/rpmp-spark.jar run-spark-smoke.sh <build dir>
set -euo pipefail
build_dir=$(cd "${1:?usage: run-spark-smoke.sh <cmake build dir>}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
source "$here/spark-it-prereqs.sh"
spark_it_prereqs "$build_dir" rpmp-server

work=$(mktemp -d /tmp/rpmp-spark-smoke.XXXXXX)
source "$here/rpmp-server-lib.sh"
trap stop_rpmp_server EXIT
start_rpmp_server "$work" "$build_dir" "$python_bin" 1G
port=$RPMP_SERVER_PORT

common=(--master "local-cluster[2,1,1024]" --driver-memory 1g --conf spark.ui.enabled=false
  --conf spark.sql.shuffle.partitions=8)
rpmp=(--conf spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager
  --conf "spark.rpmp.server=127.0.0.1:$port" --conf spark.rpmp.fallback=fail
  --conf "spark.driver.extraClassPath=$jar" --conf "spark.executor.extraClassPath=$jar")
"$spark_submit" "${common[@]}" "${rpmp[@]}" "$here/spark_smoke_job.py" "$work/rpmp.json" \
  > "$work/rpmp.log" 2>&1 || { tail -40 "$work/rpmp.log"; echo "FAIL the RPMP run"; exit 1; }
"$python_bin" "$here/spark_smoke_job.py" --reference "$work/sort.json" \
  || { echo "FAIL computing the reference results"; exit 1; }
"$python_bin" - "$work/rpmp.json" "$work/sort.json" "$work/rpmp.log" <<'PY'
import json, sys
rpmp, sort = (json.load(open(p)) for p in sys.argv[1:3])
log = open(sys.argv[3]).read()
checks = [("the RPMP run stored its shuffles in RPMP", "stored in RPMP namespace" in log),
          ("sortByKey output is sorted", rpmp["sortByKey_sorted"])]
checks += [("%s equals the reference (%s)" % (k, rpmp[k]), rpmp[k] == sort[k])
           for k in sorted(sort) if k not in ("sortByKey_sorted", "spark_version")]
checks.append(("ran on Spark %s" % rpmp["spark_version"], bool(rpmp["spark_version"])))
for what, ok in checks:
    print(("ok   " if ok else "FAIL ") + what)
failed = sum(1 for _, ok in checks if not ok)
print("%d passed, %d failed" % (len(checks) - failed, failed))
sys.exit(1 if failed else 0)
PY
