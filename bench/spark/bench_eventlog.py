# Figures of one bench/spark/run-jvm-bench.sh run from Spark's event log, and the summary.
#
#   bench_eventlog.py record RESULT_JSON SHUFFLE ROUND EVENTS_DIR RESULTS_JSONL
#       reads the application's event log (uncompressed, not rolling), prints one line
#       (seconds, fetch wait, write time, bytes, GC, peak executor heap and execution
#       memory, and the tasks' CPU in map and in reduce stages: Spark's Executor CPU
#       Time summed, which counts the task threads only, not librpmp's or the JVM's
#       other threads) and appends the figures to RESULTS_JSONL
#   bench_eventlog.py summary RESULTS_JSONL
#       medians per (job, partitions, shuffle), per-round ratios rpmp/sort (and
#       rpmp/rpmp-old when an old build ran), and a check that every shuffle gave the
#       same output; exit 1 when they did not
# Used only by run-jvm-bench.sh.
import json
import os
import statistics
import sys


def event_log(events_dir, app_id):
    for name in os.listdir(events_dir):
        if name.startswith(app_id) or name.startswith("eventlog_v2_" + app_id):
            return os.path.join(events_dir, name)
    raise SystemExit("no event log for %s in %s" % (app_id, events_dir))


def metrics(path):
    m = dict(fetch_wait_ms=0, write_time_ms=0.0, shuffle_write_bytes=0, shuffle_read_bytes=0,
             gc_ms=0, tasks=0, failed_tasks=0, peak_heap_mb=0, peak_exec_mem_mb=0,
             map_stage_s=0.0, reduce_stage_s=0.0, map_cpu_s=0.0, reduce_cpu_s=0.0)
    stages = {}
    task_cpu = {}  # stage id -> the CPU seconds of its tasks' threads
    with open(path) as f:
        for line in f:
            ev = json.loads(line)
            kind = ev.get("Event")
            if kind == "SparkListenerTaskEnd":
                m["tasks"] += 1
                if ev.get("Task End Reason", {}).get("Reason") != "Success":
                    m["failed_tasks"] += 1
                tm = ev.get("Task Metrics") or {}
                m["gc_ms"] += tm.get("JVM GC Time", 0)
                sid = ev.get("Stage ID")
                task_cpu[sid] = task_cpu.get(sid, 0.0) + tm.get("Executor CPU Time", 0) / 1e9
                w = tm.get("Shuffle Write Metrics") or {}
                m["shuffle_write_bytes"] += w.get("Shuffle Bytes Written", 0)
                m["write_time_ms"] += w.get("Shuffle Write Time", 0) / 1e6
                r = tm.get("Shuffle Read Metrics") or {}
                m["shuffle_read_bytes"] += r.get("Remote Bytes Read", 0) + r.get("Local Bytes Read", 0)
                m["fetch_wait_ms"] += r.get("Fetch Wait Time", 0)
                em = ev.get("Task Executor Metrics") or {}
                peak(m, em)
            elif kind == "SparkListenerStageExecutorMetrics":
                peak(m, ev.get("Executor Metrics") or {})
            elif kind == "SparkListenerStageCompleted":
                info = ev["Stage Info"]
                if "Submission Time" in info and "Completion Time" in info:
                    s = (info["Completion Time"] - info["Submission Time"]) / 1000.0
                    stages[info["Stage ID"]] = (s, bool(info.get("Parent IDs")))
    for sid, (s, has_parent) in stages.items():
        m["reduce_stage_s" if has_parent else "map_stage_s"] += s
        m["reduce_cpu_s" if has_parent else "map_cpu_s"] += task_cpu.get(sid, 0.0)
    m["map_cpu_s"] = round(m["map_cpu_s"], 2)
    m["reduce_cpu_s"] = round(m["reduce_cpu_s"], 2)
    m["write_time_ms"] = round(m["write_time_ms"])
    m["map_stage_s"] = round(m["map_stage_s"], 2)
    m["reduce_stage_s"] = round(m["reduce_stage_s"], 2)
    return m


def peak(m, em):
    m["peak_heap_mb"] = max(m["peak_heap_mb"], em.get("JVMHeapMemory", 0) >> 20)
    m["peak_exec_mem_mb"] = max(m["peak_exec_mem_mb"], (em.get("OnHeapExecutionMemory", 0)
                                                        + em.get("OffHeapExecutionMemory", 0)) >> 20)


FIELDS = ("seconds", "fetch_wait_ms", "write_time_ms", "shuffle_write_bytes",
          "shuffle_read_bytes", "gc_ms", "peak_heap_mb", "peak_exec_mem_mb", "map_cpu_s",
          "reduce_cpu_s")


def line_of(r):
    return ("job=%s partitions=%s shuffle=%s round=%s seconds=%.2f map_stage_s=%.2f "
            "reduce_stage_s=%.2f fetch_wait_ms=%d write_time_ms=%d shuffle_write_bytes=%d "
            "shuffle_read_bytes=%d gc_ms=%d peak_heap_mb=%d peak_exec_mem_mb=%d out_rows=%d "
            "disorder=%d failed_tasks=%d map_cpu_s=%.2f reduce_cpu_s=%.2f"
            % (r["job"], r["partitions"], r["shuffle"], r["round"], r["seconds"],
               r["map_stage_s"], r["reduce_stage_s"], r["fetch_wait_ms"], r["write_time_ms"],
               r["shuffle_write_bytes"], r["shuffle_read_bytes"], r["gc_ms"], r["peak_heap_mb"],
               r["peak_exec_mem_mb"], r["out_rows"], r.get("disorder", 0), r["failed_tasks"],
               r.get("map_cpu_s", 0.0), r.get("reduce_cpu_s", 0.0)))


def record(line, shuffle, rnd, events_dir, out):
    r = json.loads(line)
    r.update(shuffle=shuffle, round=rnd)
    r.update(metrics(event_log(events_dir, r["app_id"])))
    print(line_of(r), flush=True)
    with open(out, "a") as f:
        f.write(json.dumps(r, sort_keys=True) + "\n")
    return 0 if r.get("disorder", 0) == 0 else 1


def summary(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    ok = True
    groups = {}
    for r in rows:
        groups.setdefault((r["job"], str(r["partitions"])), []).append(r)
    for (job, parts), rs in groups.items():
        outs = {(r["out_rows"], r["out_hash"]) for r in rs}
        if len(outs) != 1:
            ok = False
            print("job=%s partitions=%s OUTPUT MISMATCH between runs: %s" % (job, parts, sorted(outs)))
        med = {}
        for s in ("rpmp", "rpmp-old", "sort"):
            sr = [r for r in rs if r["shuffle"] == s and r["round"] != "sweep"]
            if not sr:
                continue
            med[s] = {k: statistics.median(r.get(k, 0) for r in sr) for k in FIELDS}
            print("median job=%s partitions=%s shuffle=%s runs=%d %s"
                  % (job, parts, s, len(sr), " ".join("%s=%g" % (k, round(med[s][k], 2)) for k in FIELDS)))
        if "rpmp" in med and "sort" in med:
            by = {(r["shuffle"], r["round"]): r for r in rs}
            ratios = [by[("rpmp", k)]["seconds"] / by[("sort", k)]["seconds"]
                      for (s, k) in sorted(by) if s == "rpmp" and ("sort", k) in by]
            print("ratio job=%s partitions=%s rpmp/sort median_seconds=%.3f per_round=[%s]"
                  " fetch_wait=%d/%d ms write_time=%d/%d ms peak_heap=%d/%d MiB"
                  % (job, parts, med["rpmp"]["seconds"] / med["sort"]["seconds"],
                     " ".join("%.3f" % x for x in ratios),
                     med["rpmp"]["fetch_wait_ms"], med["sort"]["fetch_wait_ms"],
                     med["rpmp"]["write_time_ms"], med["sort"]["write_time_ms"],
                     med["rpmp"]["peak_heap_mb"], med["sort"]["peak_heap_mb"]))
        if "rpmp" in med and "rpmp-old" in med:
            by = {(r["shuffle"], r["round"]): r for r in rs}
            ratios = [by[("rpmp", k)]["seconds"] / by[("rpmp-old", k)]["seconds"]
                      for (s, k) in sorted(by) if s == "rpmp" and ("rpmp-old", k) in by]
            print("ratio job=%s partitions=%s rpmp/rpmp-old median_seconds=%.3f per_round=[%s]"
                  " fetch_wait=%d/%d ms write_time=%d/%d ms peak_heap=%d/%d MiB"
                  " task_cpu_map=%.1f/%.1f s task_cpu_reduce=%.1f/%.1f s"
                  % (job, parts, med["rpmp"]["seconds"] / med["rpmp-old"]["seconds"],
                     " ".join("%.3f" % x for x in ratios),
                     med["rpmp"]["fetch_wait_ms"], med["rpmp-old"]["fetch_wait_ms"],
                     med["rpmp"]["write_time_ms"], med["rpmp-old"]["write_time_ms"],
                     med["rpmp"]["peak_heap_mb"], med["rpmp-old"]["peak_heap_mb"],
                     med["rpmp"]["map_cpu_s"], med["rpmp-old"]["map_cpu_s"],
                     med["rpmp"]["reduce_cpu_s"], med["rpmp-old"]["reduce_cpu_s"]))
    sweep = [r for r in rows if r["round"] == "sweep"]
    if sweep:
        print("heap sweep (agg on rpmp): " + " ".join(
            "partitions=%s:peak_heap_mb=%d,peak_exec_mem_mb=%d,seconds=%.1f"
            % (r["partitions"], r["peak_heap_mb"], r["peak_exec_mem_mb"], r["seconds"]) for r in sweep))
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "record":
        sys.exit(record(*sys.argv[2:7]))
    if sys.argv[1] == "summary":
        sys.exit(summary(sys.argv[2]))
    sys.exit("usage: bench_eventlog.py record|summary ...")
