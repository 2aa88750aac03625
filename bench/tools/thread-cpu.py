#!/usr/bin/env python3
"""Per-thread CPU time and minor page faults of a benchmark's processes.

Samples /proc/PID/task/TID/stat every 0.5 s for Spark executors, the Spark driver,
rpmp-server, rpmp-proxy and etcd, keeps each thread's last values (so threads that end
count too), and on SIGTERM or SIGINT writes one line per (process kind, thread name with
digits folded to #): CPU seconds and minor faults, then totals per kind. librpmp's and
rpmp-server's threads are named rpmp-* (common/thread_name.h).

    bench/tools/thread-cpu.py OUT & pid=$!; <run the job>; kill $pid; wait $pid; cat OUT

Used for docs/benchmarks.md, "Where the map stage's extra time went, by thread".
"""
import collections
import os
import re
import signal
import sys
import time

KINDS = [("CoarseGrainedExecutorBackend", "executor"), ("SparkSubmit", "driver"),
         ("rpmp-server", "server"), ("rpmp-proxy", "proxy"), ("etcd", "etcd")]


def kind_of(cmdline):
    for needle, kind in KINDS:
        if needle in cmdline:
            return kind
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: thread-cpu.py OUT")
    out = sys.argv[1]
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    tick = os.sysconf("SC_CLK_TCK")
    last = {}  # (pid, tid) -> (kind, name, cpu ticks, minor faults)
    while not stop:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    kind = kind_of(f.read().decode(errors="replace"))
                tids = os.listdir(f"/proc/{pid}/task") if kind else []
            except OSError:
                continue
            for tid in tids:
                try:
                    with open(f"/proc/{pid}/task/{tid}/stat") as f:
                        s = f.read()
                except OSError:
                    continue
                name = s[s.index("(") + 1:s.rindex(")")]
                fields = s[s.rindex(")") + 2:].split()
                last[(pid, tid)] = (kind, name, int(fields[11]) + int(fields[12]), int(fields[7]))
        time.sleep(0.5)
    cpu, faults, totals = collections.Counter(), collections.Counter(), collections.Counter()
    for kind, name, ticks, minflt in last.values():
        key = (kind, re.sub(r"\d+", "#", name))
        cpu[key] += ticks / tick
        faults[key] += minflt
        totals[kind] += ticks / tick
    with open(out, "w") as f:
        f.write(f"{'kind':9s} {'thread':16s} {'cpu_s':>8s} {'minor_faults':>13s}\n")
        for key, seconds in cpu.most_common():
            if seconds >= 0.2 or faults[key] >= 10000:
                f.write(f"{key[0]:9s} {key[1]:16s} {seconds:8.2f} {faults[key]:13d}\n")
        for kind, seconds in totals.most_common():
            f.write(f"TOTAL {kind:9s} {seconds:8.2f}\n")


if __name__ == "__main__":
    main()
