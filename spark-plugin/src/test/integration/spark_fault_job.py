# Fault integration job for the RPMP shuffle plugin in cluster mode (run-spark-fault-it.sh
# submits it): three reduceByKey jobs with exactly known results while RPMP loses data
# or servers, run for real by the job's own tasks:
#   data-lost:   mid-reduce, a reduce task deletes one partition's object (both copies);
#   map-faults:  mid-map, a map task SIGKILLs server0 and pauses server1 (SIGSTOP, 5 s);
#   reduce-kill: mid-reduce, a reduce task SIGKILLs server2.
# Each must return exactly the right counts (asserted here); the event log (read back
# after the context stops) tells what Spark reran. Killed servers are restarted between
# jobs with deploy/local-cluster.sh start. Env: RPMP_RUN_DIR, RPMP_BIN_DIR, RPMP_PROXIES,
# RPMP_CLUSTER_SCRIPT (and RPMP_BASE_PORT for it). Usage: spark_fault_job.py OUT.json
import json
import os
import signal
import subprocess
import sys

from pyspark import TaskContext
from pyspark.sql import SparkSession

from spark_it_job import read_event_log, wait_until, process_gone, digest

N = 240000
KEYS = 5003


def expected_counts():
    return sorted((k, len(range(k, N, KEYS))) for k in range(KEYS))


def server_pid(name):
    with open(os.path.join(os.environ["RPMP_RUN_DIR"], name + ".pid")) as f:
        return int(f.read().strip())


def claim(marker):
    """True for the one task that creates `marker` (O_EXCL): once per run."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False


def done_marker(marker):
    return marker + ".done"


def mark_done(marker, text):
    tmp = done_marker(marker) + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.rename(tmp, done_marker(marker))


def wait_for_fault(marker):
    wait_until(lambda: os.path.exists(done_marker(marker)), 120, "the fault of " + marker)


def rpmpctl(*args):
    cmd = [os.path.join(os.environ["RPMP_BIN_DIR"], "rpmpctl"), "--proxy",
           os.environ["RPMP_PROXIES"]] + list(args)
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def fault_in_task(marker, index, fault):
    """mapPartitionsWithIndex function: the first attempt of partition `index` runs
    fault() once per run; tasks of later partitions wait until it has, then pass their
    rows on (so the fault lands in the middle of the stage; earlier ones run freely, so
    they never hold every slot while `index` waits for one)."""
    def run(i, rows):
        if i == index and TaskContext.get().attemptNumber() == 0 and claim(marker):
            mark_done(marker, fault())
        elif i > index:
            wait_for_fault(marker)
        return rows
    return run


def delete_partition_object(key):
    def fault():
        # The app's first shuffle (id 0) is the only one when this job runs.
        names = [n.split()[0] for n in rpmpctl("ns", "ls", "spark/").splitlines() if n.strip()]
        ns = [n for n in names if n.endswith("/0")]
        if len(ns) != 1:
            raise RuntimeError("expected one spark/.../0 namespace, found %s" % names)
        rpmpctl("del", ns[0], key)
        return "deleted %s/%s" % (ns[0], key)
    return fault


def kill_and_pause(kill, pause, pause_s):
    def fault():
        victim, paused = server_pid(kill), server_pid(pause)
        os.kill(victim, signal.SIGKILL)
        os.kill(paused, signal.SIGSTOP)
        # Resumed by a detached process after pause_s: this task goes on meanwhile.
        subprocess.Popen(["sh", "-c", "sleep %d; kill -CONT %d" % (pause_s, paused)],
                         start_new_session=True)
        wait_until(lambda: process_gone(victim), 30, "%s to die" % kill)
        return "killed %s (%d), paused %s (%d) for %d s" % (kill, victim, pause, paused, pause_s)
    return fault


def kill_server(name):
    def fault():
        pid = server_pid(name)
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: process_gone(pid), 30, "%s to die" % name)
        return "killed %s (%d)" % (name, pid)
    return fault


def restart_servers():
    """Starts the servers that are down again (same pools, ids and data); waits for 3 LIVE."""
    subprocess.run([os.environ["RPMP_CLUSTER_SCRIPT"], "start"], check=True,
                   capture_output=True, text=True)


def counts_job(sc, group, maps, reduces, map_fault=None, reduce_fault=None):
    sc.setJobGroup(group, group)
    rdd = sc.parallelize(range(N), maps)
    if map_fault:
        rdd = rdd.mapPartitionsWithIndex(map_fault)
    reduced = rdd.map(lambda i: (i % KEYS, 1)).reduceByKey(lambda a, b: a + b, reduces)
    if reduce_fault:
        reduced = reduced.mapPartitionsWithIndex(reduce_fault)
    got = sorted(reduced.collect())
    sc.setJobGroup(None, None)
    if got != expected_counts():
        wrong = sum(1 for a, b in zip(got, expected_counts()) if a != b)
        raise AssertionError("%s: WRONG RESULT (%d of %d counts differ, %d keys)"
                             % (group, wrong, KEYS, len(got)))
    return digest(got)


def analyse(events, group):
    """What Spark ran for job group `group`: map stage attempts, FetchFailed reduce tasks,
    map task starts in later attempts."""
    job = next(e for e in events if e["Event"] == "SparkListenerJobStart"
               and (e.get("Properties") or {}).get("spark.jobGroup.id") == group)
    stages = {s["Stage ID"]: s for s in job["Stage Infos"]}
    parents = {p for s in stages.values() for p in s["Parent IDs"]}
    map_stages = parents & set(stages)
    (reduce_stage,) = set(stages) - parents
    r = {"map_stage_attempts": [], "map_task_starts": 0, "map_task_starts_in_later_attempts": 0,
         "reduce_fetch_failed": 0, "reduce_stage_attempts": [], "job_result": None}
    for e in events:
        kind = e["Event"]
        if kind == "SparkListenerStageSubmitted":
            sid, attempt = e["Stage Info"]["Stage ID"], e["Stage Info"]["Stage Attempt ID"]
            if sid in map_stages:
                r["map_stage_attempts"].append(attempt)
            elif sid == reduce_stage:
                r["reduce_stage_attempts"].append(attempt)
        elif kind == "SparkListenerTaskStart" and e["Stage ID"] in map_stages:
            r["map_task_starts"] += 1
            r["map_task_starts_in_later_attempts"] += e["Stage Attempt ID"] > 0
        elif (kind == "SparkListenerTaskEnd" and e["Stage ID"] == reduce_stage
              and e["Task End Reason"]["Reason"] == "FetchFailed"):
            r["reduce_fetch_failed"] += 1
        elif kind == "SparkListenerJobEnd" and e["Job ID"] == job["Job ID"]:
            r["job_result"] = e["Job Result"]["Result"]
    return r


def main(out_path):
    spark = SparkSession.builder.appName("rpmp-spark-fault-it").getOrCreate()
    sc = spark.sparkContext
    wait_until(lambda: len(sc.statusTracker().getExecutorInfos()) - 1 >= 2, 120,
               "2 registered executors")
    marker = out_path + ".fault-"
    results, faults = {}, {}
    results["data-lost"] = counts_job(
        sc, "data-lost", 16, 8,
        reduce_fault=fault_in_task(marker + "lost", 0, delete_partition_object("5")))
    results["map-faults"] = counts_job(
        sc, "map-faults", 48, 12,
        map_fault=fault_in_task(marker + "map", 4, kill_and_pause("server0", "server1", 5)))
    restart_servers()
    results["reduce-kill"] = counts_job(
        sc, "reduce-kill", 16, 8,
        reduce_fault=fault_in_task(marker + "reduce", 0, kill_server("server2")))
    restart_servers()
    for name in ("lost", "map", "reduce"):
        with open(done_marker(marker + name)) as f:
            faults[name] = f.read()
    event_log_dir = sc.getConf().get("spark.eventLog.dir")
    spark.stop()
    events = read_event_log(event_log_dir)
    report = {g: analyse(events, g) for g in ("data-lost", "map-faults", "reduce-kill")}
    with open(out_path, "w") as f:
        json.dump({"results": results, "faults": faults, "spark": report,
                   "expected": digest(expected_counts())}, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
