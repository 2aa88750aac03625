#!/usr/bin/env bash
# The reference run of the Spark integration tests: spark_it_job.py on Spark's own sort
# shuffle, with the options run-spark-it.sh and run-spark-cluster-it.sh use for their
# RPMP runs (spark-it-common.sh). ctest runs it once per Spark version as a fixture and
# both tests compare with OUT_DIR/sort.json (RPMP_SPARK_REFERENCE), instead of each
# running the same reference job again.
#   SPARK_SUBMIT=... run-spark-reference.sh OUT_DIR
set -euo pipefail
out=${1:?usage: run-spark-reference.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
spark_submit=${SPARK_SUBMIT:-$(command -v spark-submit || true)}
[[ -x "$spark_submit" ]] || { echo "FAIL spark-submit not found (deploy/install-spark.sh)"; exit 1; }
python_bin=${PYSPARK_PYTHON:-$(dirname "$spark_submit")/python3}
[[ -x "$python_bin" ]] || python_bin=$(command -v python3)
export PYSPARK_PYTHON="$python_bin" PYSPARK_DRIVER_PYTHON="$python_bin"
source "$here/spark-it-common.sh"
mkdir -p "$out"
run_sort_reference "$spark_submit" "$here" "$out"
keys=$("$python_bin" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$out/sort.json")
echo "ok   sort-shuffle reference of $keys results in $out/sort.json"
