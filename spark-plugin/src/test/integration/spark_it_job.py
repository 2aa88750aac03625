# Integration job for the RPMP shuffle plugin: the same shuffles run once on RPMP and once
# on Spark's own sort shuffle (run-spark-it.sh submits both); each run writes digests of
# its results as JSON so the two can be compared. Usage: spark_it_job.py OUT.json
import hashlib
import json
import os
import signal
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def digest(rows):
    h = hashlib.sha256()
    for r in rows:
        h.update(repr(r).encode())
    return h.hexdigest()


def executor_pid(_):
    """In a task: pid of the executor JVM (python worker -> daemon -> JVM)."""
    pid = os.getpid()
    for _ in range(4):
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if b"CoarseGrainedExecutorBackend" in f.read():
                return [pid]
        with open("/proc/%d/stat" % pid) as f:
            pid = int(f.read().rsplit(")", 1)[1].split()[1])
    return []


def map_tasks_rerun_after_executor_loss(sc):
    """Kills every executor after a shuffle's map stage; counts map tasks the next job reruns."""
    rdd = sc.parallelize(range(50000), 4).map(lambda i: (i % 101, 1)).reduceByKey(
        lambda a, b: a + b, 4)
    first = sorted(rdd.collect())
    pids = set(sc.parallelize(range(16), 16).flatMap(executor_pid).collect())
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    # Wait until the driver has noticed the loss and replacement executors registered.
    time.sleep(5)
    deadline = time.time() + 120
    while len(sc.statusTracker().getExecutorInfos()) < 3 and time.time() < deadline:
        time.sleep(1)
    sc.setJobGroup("after-executor-loss", "after-executor-loss")
    second = sorted(rdd.collect())
    assert first == second, "result changed after executor loss"
    tasks = 0
    for job_id in sc.statusTracker().getJobIdsForGroup("after-executor-loss"):
        for stage_id in sc.statusTracker().getJobInfo(job_id).stageIds:
            info = sc.statusTracker().getStageInfo(stage_id)
            if info is not None and info.numTasks == 4 and info.name.startswith("reduceByKey"):
                tasks += info.numCompletedTasks
    sc.setJobGroup(None, None)
    return tasks, len(pids)


def main(out_path):
    spark = SparkSession.builder.appName("rpmp-spark-it").getOrCreate()
    sc = spark.sparkContext
    n = 200000
    # ~100-byte records: key, 96-byte payload
    pairs = sc.parallelize(range(n), 8).map(lambda i: (i % 5003, ("%012d" % (i * 7919)) * 8))

    results = {}
    grouped = pairs.groupByKey(6).mapValues(lambda vs: sorted(vs)).collect()
    results["groupByKey"] = digest(sorted(grouped))
    results["groupByKey_count"] = len(grouped)

    reduced = pairs.mapValues(lambda v: int(v[:12])).reduceByKey(lambda a, b: a + b, 5).collect()
    results["reduceByKey"] = digest(sorted(reduced))

    sorted_vals = pairs.map(lambda kv: (kv[1], kv[0])).sortByKey(numPartitions=7).collect()
    results["sortByKey"] = digest(sorted_vals)  # order is the result here: no re-sorting
    results["sortByKey_count"] = len(sorted_vals)

    # DataFrame join + aggregation (AQE and speculation are set by run-spark-it.sh).
    left = spark.range(0, 300000).select(
        (F.col("id") % 10007).alias("k"), F.sha2(F.col("id").cast("string"), 256).alias("payload"))
    right = spark.range(0, 10007).select(F.col("id").alias("k"), (F.col("id") % 13).alias("g"))
    agg = (left.join(right, "k").groupBy("g")
           .agg(F.count("*").alias("n"), F.sum(F.length("payload")).alias("bytes"),
                F.max("payload").alias("maxp"))
           .orderBy("g").collect())
    results["dataframe_join_agg"] = digest([tuple(r) for r in agg])

    rerun, killed = map_tasks_rerun_after_executor_loss(sc)
    results["executors_killed"] = killed
    results["map_tasks_rerun_after_executor_loss"] = rerun

    with open(out_path, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
