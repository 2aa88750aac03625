# Integration job for the RPMP shuffle plugin: the same shuffles run once on RPMP and once
# on Spark's own sort shuffle (run-spark-it.sh submits both); each run writes digests of
# its results as JSON so the two can be compared. Usage: spark_it_job.py OUT.json
import hashlib
import json
import os
import signal
import sys
import time

from pyspark import TaskContext
from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def digest(rows):
    h = hashlib.sha256()
    for r in rows:
        h.update(repr(r).encode())
    return h.hexdigest()


def wait_until(condition, timeout_s, what):
    """Polls condition() until it is true; fails with `what` once timeout_s have passed."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("gave up after %d s waiting for %s" % (timeout_s, what))
        time.sleep(0.02)


def registered_executors(sc):
    """Executors registered with the driver (the driver not counted), through the JVM's
    SparkStatusTracker: pyspark 3.5's StatusTracker has no getExecutorInfos."""
    return len(sc._jsc.sc().statusTracker().getExecutorInfos()) - 1


def executor_pid():
    """In a task: pid of the executor JVM (python worker -> daemon -> JVM), or None."""
    pid = os.getpid()
    for _ in range(4):
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            if b"CoarseGrainedExecutorBackend" in f.read():
                return pid
        with open("/proc/%d/stat" % pid) as f:
            pid = int(f.read().rsplit(")", 1)[1].split()[1])
    return None


def process_gone(pid):
    """True once pid has exited (no /proc entry, or a zombie not reaped yet)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def read_kill_marker(marker):
    """The executor pid partition 0 wrote before killing it; 0 if it found none; None if
    nobody has claimed the kill yet."""
    try:
        with open(marker) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    return int(text) if text.endswith("\n") else None  # written in one write(), but be safe


def kill_executor_mid_reduce(marker):
    """mapPartitionsWithIndex function for a reduce stage. The first attempt of partition
    0 claims `marker` (O_EXCL, so it happens once per run, whatever the stage attempt),
    writes its executor JVM's pid there and SIGKILLs that JVM, i.e. its own executor, in
    the middle of the reduce stage. Every other reduce task first waits until that JVM is
    gone, so the kill always finds the rest of the stage running or pending."""
    def run(index, rows):
        if index == 0 and TaskContext.get().attemptNumber() == 0:
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                fd = None
            if fd is not None:
                pid = executor_pid()
                os.write(fd, b"%d\n" % (pid or 0))
                os.close(fd)
                if pid is None:
                    raise RuntimeError("reduce task found no CoarseGrainedExecutorBackend parent")
                os.kill(pid, signal.SIGKILL)
                wait_until(lambda: process_gone(pid), 30, "executor JVM %d to die" % pid)
                return rows  # never delivered: this task's executor is gone
        wait_until(lambda: read_kill_marker(marker) is not None, 60,
                   "reduce partition 0 to kill its executor (no executor JVM killed)")
        pid = read_kill_marker(marker)
        if pid:
            wait_until(lambda: process_gone(pid), 30, "killed executor JVM %d to die" % pid)
        return rows
    return run


def executor_loss_mid_reduce(sc, marker):
    """Runs a reduceByKey job whose reduce task 0 SIGKILLs its executor JVM; checks the
    job's result. The event log tells later what Spark reran (analyse_executor_loss)."""
    live = lambda: registered_executors(sc)
    wait_until(lambda: live() >= 2, 120, "2 registered executors")
    sc.setJobGroup("executor-loss", "reduce task 0 SIGKILLs its executor JVM")
    counts = (sc.parallelize(range(50000), 4).map(lambda i: (i % 101, 1))
              .reduceByKey(lambda a, b: a + b, 8)
              .mapPartitionsWithIndex(kill_executor_mid_reduce(marker)).collect())
    sc.setJobGroup(None, None)
    expected = sorted((k, len(range(k, 50000, 101))) for k in range(101))
    assert sorted(counts) == expected, "result changed by the executor loss"
    return digest(sorted(counts))


def read_event_log(log_dir):
    """Events of the one finished application logged in log_dir (JSON lines)."""
    log_dir = log_dir[len("file:"):] if log_dir.startswith("file:") else log_dir
    logs = [n for n in os.listdir(log_dir) if not n.endswith(".inprogress")]
    if len(logs) != 1:
        raise RuntimeError("expected one finished event log in %s, found %s"
                           % (log_dir, sorted(os.listdir(log_dir))))
    with open(os.path.join(log_dir, logs[0])) as f:
        return [json.loads(line) for line in f if line.strip()]


def analyse_executor_loss(events):
    """From the event log: what Spark ran for the executor-loss job's map and reduce stages."""
    job = next((e for e in events if e["Event"] == "SparkListenerJobStart"
                and (e.get("Properties") or {}).get("spark.jobGroup.id") == "executor-loss"),
               None)
    if job is None:
        raise RuntimeError("event log has no SparkListenerJobStart of job group executor-loss")
    stages = {s["Stage ID"]: s for s in job["Stage Infos"]}
    parents = {p for s in stages.values() for p in s["Parent IDs"]}
    map_stages = parents & set(stages)
    (reduce_stage,) = set(stages) - parents
    n_reduce = stages[reduce_stage]["Number of Tasks"]
    r = {"map_stage_attempts": [], "reduce_stage_attempts": [], "map_task_starts": 0,
         "map_task_starts_in_later_attempts": 0, "map_task_starts_after_loss": 0,
         "reduce_tasks_lost": [], "reduce_fetch_failed": 0, "reduce_unfinished_at_loss": None,
         "reduce_task_starts_after_loss": 0, "executors_removed": []}
    done = set()
    for e in events:
        kind = e["Event"]
        if kind == "SparkListenerStageSubmitted":
            sid, attempt = e["Stage Info"]["Stage ID"], e["Stage Info"]["Stage Attempt ID"]
            if sid in map_stages:
                r["map_stage_attempts"].append(attempt)
            elif sid == reduce_stage:
                r["reduce_stage_attempts"].append(attempt)
        elif kind == "SparkListenerTaskStart":
            lost = bool(r["reduce_tasks_lost"])
            if e["Stage ID"] in map_stages:
                r["map_task_starts"] += 1
                r["map_task_starts_in_later_attempts"] += e["Stage Attempt ID"] > 0
                r["map_task_starts_after_loss"] += lost
            elif e["Stage ID"] == reduce_stage:
                r["reduce_task_starts_after_loss"] += lost
        elif kind == "SparkListenerTaskEnd" and e["Stage ID"] == reduce_stage:
            reason = e["Task End Reason"]["Reason"]
            index = e["Task Info"]["Index"]
            if reason == "Success":
                done.add(index)
            elif reason == "ExecutorLostFailure":
                if not r["reduce_tasks_lost"]:
                    r["reduce_unfinished_at_loss"] = n_reduce - len(done)
                r["reduce_tasks_lost"].append(index)
            elif reason == "FetchFailed":
                r["reduce_fetch_failed"] += 1
        elif kind == "SparkListenerExecutorRemoved":
            r["executors_removed"].append(e["Executor ID"])
    r["reduce_tasks"] = n_reduce
    return r


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

    # DataFrame shuffles through the sort-based writer (UnsafeRow fast path; several runs
    # per map in the RPMP run, which sets a small spark.rpmp.writer.sortRunSize): an orderBy
    # and a groupBy over 300 partitions, and a skewed join that AQE splits by map ranges
    # (its skew reader reads map ranges of a partition), each compared with Spark's own.
    spark.conf.set("spark.sql.shuffle.partitions", "300")
    wide = spark.range(0, 200000, 1, 6).select(
        F.substring(F.md5(F.col("id").cast("string")), 1, 10).alias("k"), F.col("id"))
    results["dataframe_orderby"] = digest([tuple(r) for r in wide.orderBy("k", "id").collect()])
    grouped = (spark.range(0, 200000, 1, 6).groupBy((F.col("id") % 4999).alias("g"))
               .agg(F.sum("id").alias("s"), F.count("*").alias("n")).collect())
    results["dataframe_wide_groupby"] = digest(sorted(tuple(r) for r in grouped))
    # forceOptimizeSkewedJoin: the aggregation on k after the join needs k's partitioning,
    # and without it AQE (3.5 at least) keeps the join unsplit rather than add a shuffle.
    for k, v in (("spark.sql.adaptive.skewJoin.enabled", "true"),
                 ("spark.sql.adaptive.forceOptimizeSkewedJoin", "true"),
                 ("spark.sql.adaptive.skewJoin.skewedPartitionFactor", "1"),
                 ("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "1k"),
                 ("spark.sql.adaptive.advisoryPartitionSizeInBytes", "8k"),
                 ("spark.sql.adaptive.coalescePartitions.enabled", "false"),
                 ("spark.sql.autoBroadcastJoinThreshold", "-1"),
                 ("spark.sql.shuffle.partitions", "8")):
        spark.conf.set(k, v)
    skewed = spark.range(0, 100000, 1, 6).select(
        F.when(F.col("id") % 10 < 8, F.lit(0)).otherwise(F.col("id") % 100).alias("k"),
        F.col("id").alias("a"))
    dim = spark.range(0, 100, 1, 2).select(F.col("id").alias("k"), (F.col("id") * 3).alias("b"))
    joined = skewed.join(dim, "k").groupBy("k").agg(
        F.count("*").alias("n"), F.sum("a").alias("sa"), F.sum("b").alias("sb"))
    rows = joined.collect()
    plan = joined._jdf.queryExecution().executedPlan().toString()
    if "skew" not in plan.lower():
        raise SystemExit("AQE did not split the skewed join (no map-range reads tested):\n" + plan)
    results["dataframe_skew_join"] = digest(sorted(tuple(r) for r in rows))

    # Last: executor loss in the middle of a reduce stage (the lost executor is replaced).
    marker = out_path + ".killed-executor"
    results["reduce_with_jvm_killed"] = executor_loss_mid_reduce(sc, marker)
    event_log_dir = sc.getConf().get("spark.eventLog.dir")
    spark.stop()
    # The event log is complete once the context has stopped.
    results["executor_loss"] = analyse_executor_loss(read_event_log(event_log_dir))
    results["executor_loss"]["killed_executor_pid"] = read_kill_marker(marker)

    with open(out_path, "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
