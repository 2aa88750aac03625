# Dynamic allocation without an external shuffle service (run-spark-fault-it.sh submits
# it with spark.dynamicAllocation.enabled=true, shuffleTracking.enabled=false,
# spark.shuffle.service.enabled=false and spark.shuffle.sort.io.plugin.class=
# io.rpmp.spark.RpmpShuffleDataIO): job 1 runs a reduceByKey's map and reduce stages;
# then every executor goes idle and Spark releases them all; job 2 reuses the shuffle
# (its map stage is skipped) on new executors, reading the map outputs from RPMP, and
# must give exactly the right counts. The event log (read back after the context stops)
# shows the releases. Usage: spark_dynalloc_job.py OUT.json
import json
import sys

from pyspark.sql import SparkSession

from spark_it_job import read_event_log, wait_until, digest, registered_executors

N = 100000
KEYS = 997


def main(out_path):
    spark = SparkSession.builder.appName("rpmp-spark-dynalloc-it").getOrCreate()
    sc = spark.sparkContext
    executors = lambda: registered_executors(sc)
    rdd = sc.parallelize(range(N), 8).map(lambda i: (i % KEYS, 1)).reduceByKey(
        lambda a, b: a + b, 4)
    sc.setJobGroup("dynalloc-1", "map and reduce stage")
    assert rdd.count() == KEYS
    # Idle executors are released (executorIdleTimeout): no executor left.
    wait_until(lambda: executors() == 0, 120, "dynamic allocation to release every executor")
    sc.setJobGroup("dynalloc-2", "reduce stage only, on new executors")
    got = sorted(rdd.collect())
    sc.setJobGroup(None, None)
    expected = sorted((k, len(range(k, N, KEYS))) for k in range(KEYS))
    assert got == expected, "WRONG RESULT after the executors were released"
    event_log_dir = sc.getConf().get("spark.eventLog.dir")
    spark.stop()

    events = read_event_log(event_log_dir)
    jobs = {(e.get("Properties") or {}).get("spark.jobGroup.id"): e for e in events
            if e["Event"] == "SparkListenerJobStart"}
    infos = jobs["dynalloc-1"]["Stage Infos"]
    map_stages = {p for s in infos for p in s["Parent IDs"]} & {s["Stage ID"] for s in infos}
    map_executors, submitted, removed, added = set(), [], [], []
    for e in events:
        kind = e["Event"]
        if kind == "SparkListenerTaskStart" and e["Stage ID"] in map_stages:
            map_executors.add(e["Task Info"]["Executor ID"])
        elif kind == "SparkListenerStageSubmitted":
            submitted.append(e["Stage Info"]["Stage ID"])
        elif kind == "SparkListenerExecutorRemoved":
            removed.append(e["Executor ID"])
        elif kind == "SparkListenerExecutorAdded":
            added.append(e["Executor ID"])
    with open(out_path, "w") as f:
        json.dump({"result": digest(got), "expected": digest(expected),
                   "map_executors": sorted(map_executors), "executors_removed": removed,
                   "executors_added": added,
                   "map_stage_submissions": sum(1 for s in submitted if s in map_stages)},
                  f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
