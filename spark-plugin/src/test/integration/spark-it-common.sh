# Sourced by run-spark-it.sh, run-spark-cluster-it.sh and run-spark-reference.sh: the
# spark-submit options their spark_it_job.py runs share, and the run on Spark's own sort
# shuffle that each compares its RPMP run with. ctest computes that reference once per
# Spark version (the spark_sort_reference_* fixtures, run-spark-reference.sh) and passes
# it in RPMP_SPARK_REFERENCE; run by hand, each script runs it itself.
spark_it_common=(--master "local-cluster[2,1,1024]" --driver-memory 1g
  --conf spark.ui.enabled=false --conf spark.sql.adaptive.enabled=true
  --conf spark.speculation=true --conf spark.speculation.quantile=0.5
  --conf spark.speculation.multiplier=1.5 --conf spark.speculation.minTaskRuntime=100ms
  --conf spark.sql.shuffle.partitions=8
  --conf spark.eventLog.enabled=true --conf spark.eventLog.compress=false
  --conf spark.eventLog.rolling.enabled=false)

# run_sort_reference SPARK_SUBMIT JOB_DIR OUT_DIR: spark_it_job.py on the sort shuffle,
# results in OUT_DIR/sort.json, log in OUT_DIR/sort.log, events in OUT_DIR/events-sort.
run_sort_reference() {
  local spark_submit=$1 job_dir=$2 out=$3
  rm -rf "$out/events-sort" "$out/sort.json"
  mkdir -p "$out/events-sort"
  "$spark_submit" "${spark_it_common[@]}" --conf "spark.eventLog.dir=$out/events-sort" \
    "$job_dir/spark_it_job.py" "$out/sort.json" > "$out/sort.log" 2>&1 \
    || { tail -50 "$out/sort.log"; echo "FAIL the sort-shuffle run"; return 1; }
}

# sort_reference SPARK_SUBMIT JOB_DIR WORK: WORK/sort.json from RPMP_SPARK_REFERENCE's
# directory when set (it must hold sort.json: a missing reference fails, never skips),
# else from a run of its own.
sort_reference() {
  local spark_submit=$1 job_dir=$2 work=$3
  if [[ -n "${RPMP_SPARK_REFERENCE:-}" ]]; then
    echo "== Spark sort shuffle: the reference computed once ($RPMP_SPARK_REFERENCE)"
    [[ -f "$RPMP_SPARK_REFERENCE/sort.json" ]] \
      || { echo "FAIL no sort.json in $RPMP_SPARK_REFERENCE (the spark_sort_reference test failed?)"; return 1; }
    cp "$RPMP_SPARK_REFERENCE/sort.json" "$work/sort.json"
  else
    echo "== Spark sort shuffle"
    run_sort_reference "$spark_submit" "$job_dir" "$work"
  fi
}
