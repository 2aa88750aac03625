# Fault integration job for the RPMP shuffle plugin in cluster mode (run-spark-fault-it.sh
# submits it): three reduceByKey jobs with exactly known results while RPMP loses data
# or servers, run for real by the job's own tasks:
#   data-lost:   mid-reduce, a reduce task deletes one partition's object (both copies);
#   map-faults:  mid-map, a map task SIGKILLs server0 and pauses server1 (SIGSTOP, 5 s);
#   reduce-kill: mid-reduce, a reduce task SIGKILLs server2.
# Each must return exactly the right counts (asserted here); the event log (read back
# after the context stops) tells what Spark reran. As an operator would, a driver thread
# (Operator) restarts each killed server while its job runs: once the proxies report it
# DEAD, deploy/local-cluster.sh start brings it back on its own pool (same id and data),
# and the thread polls `rpmpctl nodes` until it is LIVE again. The cluster needs that:
# a namespace whose last in-sync member died waits for that member (unavailable, never
# served from a copy that may be behind), so a map stage that lost both copies' holders
# cannot finish until the killed one returns. Env: RPMP_RUN_DIR, RPMP_BIN_DIR,
# RPMP_PROXIES, RPMP_CLUSTER_SCRIPT, RPMP_BASE_PORT. Usage: spark_fault_job.py OUT.json
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

from pyspark import TaskContext
from pyspark.sql import SparkSession

from spark_it_job import read_event_log, wait_until, process_gone, digest, registered_executors

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


def server_endpoint(name):
    """deploy/local-cluster.sh's address of server<i>: BASE+20+i."""
    return "127.0.0.1:%d" % (int(os.environ["RPMP_BASE_PORT"]) + 20 + int(name[len("server"):]))


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
        # The app's first shuffle (id 0) is the only one when this job runs. It is stored
        # as placement groups spark/<app>/0/g<i> (docs/spark-plugin.md): exactly one of
        # them holds partition `key`.
        names = [n.split()[0] for n in rpmpctl("ns", "ls", "spark/").splitlines() if n.strip()]
        ns = [n for n in names if re.search(r"/0(/g[0-9]+)?$", n)]
        holders = [n for n in ns
                   if key in [l.split()[0] for l in rpmpctl("ls", n).splitlines() if l.strip()]]
        if len(holders) != 1:
            raise RuntimeError("expected one namespace of shuffle 0 holding %s, found %s of %s"
                               % (key, holders, names))
        rpmpctl("del", holders[0], key)
        return "deleted %s/%s" % (holders[0], key)
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


def node_state(endpoint):
    """The proxies' state of the node at endpoint (LIVE, SUSPECT, DEAD, ...); None when
    `rpmpctl nodes` fails (e.g. a leader election) or lists no such node."""
    try:
        out = rpmpctl("nodes")
    except subprocess.CalledProcessError:
        return None
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[1] == endpoint:
            return f[2]
    return None


def poll(condition, timeout_s, what):
    """wait_until for conditions that run rpmpctl (about 0.4 s a call): polls every 0.2 s."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("gave up after %d s waiting for %s" % (timeout_s, what))
        time.sleep(0.2)


def start_cluster():
    """deploy/local-cluster.sh start: starts whatever is down (servers on their own pools,
    so with their ids and data) and waits for 3 LIVE nodes."""
    subprocess.run([os.environ["RPMP_CLUSTER_SCRIPT"], "start"], check=True,
                   capture_output=True, text=True)


class Operator(threading.Thread):
    """The operator of one fault, on a driver thread while the job runs: once the task has
    killed `name` (marker done), waits until the proxies report it DEAD, restarts it and
    polls until it is LIVE again. `outcome` says what happened and when; `error` is set
    when a step missed its deadline."""

    def __init__(self, marker, name):
        super().__init__(daemon=True)
        self.marker, self.name = marker, name
        self.outcome, self.error = None, None

    def run(self):
        try:
            wait_until(lambda: os.path.exists(done_marker(self.marker)), 300,
                       "the fault of " + self.marker)
            t0, endpoint = time.monotonic(), server_endpoint(self.name)
            poll(lambda: node_state(endpoint) == "DEAD", 60, "%s to be DEAD" % self.name)
            dead = time.monotonic() - t0
            start_cluster()
            poll(lambda: node_state(endpoint) == "LIVE", 60, "%s to be LIVE" % self.name)
            self.outcome = "%s DEAD %.1f s after the fault, restarted, LIVE again at %.1f s" % (
                self.name, dead, time.monotonic() - t0)
        except Exception as e:  # reported by finish()
            self.error = "operator of %s: %r" % (self.name, e)

    def finish(self):
        """Joins the thread (with a deadline); its outcome, or AssertionError."""
        self.join(180)
        if self.is_alive() or self.error:
            raise AssertionError(self.error or "operator of %s still running" % self.name)
        return self.outcome


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
    wait_until(lambda: registered_executors(sc) >= 2, 120,
               "2 registered executors")
    marker = out_path + ".fault-"
    results, faults = {}, {}
    results["data-lost"] = counts_job(
        sc, "data-lost", 16, 8,
        reduce_fault=fault_in_task(marker + "lost", 0, delete_partition_object("5")))
    operator = Operator(marker + "map", "server0")
    operator.start()
    results["map-faults"] = counts_job(
        sc, "map-faults", 48, 12,
        map_fault=fault_in_task(marker + "map", 4, kill_and_pause("server0", "server1", 5)))
    faults["map-restart"] = operator.finish()
    start_cluster()  # the paused server1 is LIVE again too
    operator = Operator(marker + "reduce", "server2")
    operator.start()
    results["reduce-kill"] = counts_job(
        sc, "reduce-kill", 16, 8,
        reduce_fault=fault_in_task(marker + "reduce", 0, kill_server("server2")))
    faults["reduce-restart"] = operator.finish()
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
