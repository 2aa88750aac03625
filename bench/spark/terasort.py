# TeraSort-like PySpark job used by bench/spark/run-terasort.sh to compare shuffle managers.
#
# Generates N records of 100 bytes (10-byte random key + 90-byte value, deterministic seed
# per map partition) as (key, value) byte pairs in M map partitions, caches them (the
# "TeraGen" part, with the input's record count and checksum), sorts them with sortByKey
# into R partitions and validates the result in the same job as the sort's reduce stage:
# every partition ordered, partitions ordered among themselves, record count and checksum
# (sum of the CRC32 of every 100-byte record) equal to the input's.
#
# The shuffle metrics come from this application's own event log, read after the
# SparkContext stopped (spark.eventLog.enabled=true and an uncompressed, non-rolling log in
# spark.eventLog.dir are required). Prints one JSON line starting with "TERASORT_RESULT ";
# exits 1 when validation fails.
#
#   spark-submit [--conf ...] terasort.py --records N --maps M --reduces R [--seed S]
import argparse
import json
import os
import random
import sys
import time
import zlib
from urllib.parse import urlparse

from pyspark import SparkConf, SparkContext, StorageLevel

KEY_BYTES = 10
RECORD_BYTES = 100
CHUNK_RECORDS = 8192  # records generated from one randbytes() call

SORT_GROUP = "terasort-sort"


def partition_range(index, records, maps):
    """[first, end) record numbers of map partition `index`."""
    base, extra = divmod(records, maps)
    first = index * base + min(index, extra)
    return first, first + base + (1 if index < extra else 0)


def generate(seed, records, maps):
    def gen(index, _):
        first, end = partition_range(index, records, maps)
        rng = random.Random(seed * 1000003 + index)
        left = end - first
        while left > 0:
            n = min(left, CHUNK_RECORDS)
            block = rng.randbytes(n * RECORD_BYTES)
            for off in range(0, n * RECORD_BYTES, RECORD_BYTES):
                yield block[off:off + KEY_BYTES], block[off + KEY_BYTES:off + RECORD_BYTES]
            left -= n
    return gen


def record_crc(key, value):
    return zlib.crc32(value, zlib.crc32(key))  # == crc32(key + value)


def count_and_checksum(iterator):
    count = 0
    total = 0
    for key, value in iterator:
        count += 1
        total += record_crc(key, value)
    yield count, total


def check_partition(index, iterator):
    """(index, count, checksum, first key, last key, ordered, bad record sizes)."""
    count = 0
    total = 0
    first = prev = None
    ordered = True
    bad_sizes = 0
    for key, value in iterator:
        if prev is None:
            first = key
        elif key < prev:
            ordered = False
        if len(key) != KEY_BYTES or len(value) != RECORD_BYTES - KEY_BYTES:
            bad_sizes += 1
        prev = key
        count += 1
        total += record_crc(key, value)
    yield index, count, total, first, prev, ordered, bad_sizes


def add(a, b):
    return a[0] + b[0], a[1] + b[1]


def event_log_metrics(log_path):
    """Shuffle metrics and stage times of the sort job (job group SORT_GROUP) from an event log."""
    sort_stages = set()
    stage_info = {}
    m = dict(shuffle_write_bytes=0, shuffle_write_records=0, shuffle_write_time_ms=0.0,
             shuffle_read_bytes=0, shuffle_remote_bytes=0, shuffle_local_bytes=0,
             shuffle_read_records=0, fetch_wait_ms=0, blocks_fetched=0,
             sort_executor_run_ms=0, sort_gc_ms=0, sort_tasks=0, failed_tasks=0)
    if os.path.isdir(log_path):  # rolling event log: eventlog_v2_<app>/events_<n>_<app>
        files = sorted((f for f in os.listdir(log_path) if f.startswith("events_")),
                       key=lambda f: int(f.split("_")[1]))
        paths = [os.path.join(log_path, f) for f in files]
    else:
        paths = [log_path]
    for path in paths:
        with open(path) as f:
            for line in f:
                ev = json.loads(line)
                kind = ev.get("Event")
                if kind == "SparkListenerJobStart":
                    props = ev.get("Properties") or {}
                    if props.get("spark.jobGroup.id") == SORT_GROUP:
                        sort_stages.update(ev["Stage IDs"])
                elif kind == "SparkListenerStageCompleted":
                    info = ev["Stage Info"]
                    stage_info[info["Stage ID"]] = info
                elif kind == "SparkListenerTaskEnd":
                    if ev.get("Stage ID") not in sort_stages:
                        continue
                    if ev.get("Task End Reason", {}).get("Reason") != "Success":
                        m["failed_tasks"] += 1
                    tm = ev.get("Task Metrics") or {}
                    m["sort_tasks"] += 1
                    m["sort_executor_run_ms"] += tm.get("Executor Run Time", 0)
                    m["sort_gc_ms"] += tm.get("JVM GC Time", 0)
                    w = tm.get("Shuffle Write Metrics") or {}
                    m["shuffle_write_bytes"] += w.get("Shuffle Bytes Written", 0)
                    m["shuffle_write_records"] += w.get("Shuffle Records Written", 0)
                    m["shuffle_write_time_ms"] += w.get("Shuffle Write Time", 0) / 1e6  # ns
                    r = tm.get("Shuffle Read Metrics") or {}
                    remote = r.get("Remote Bytes Read", 0)
                    local = r.get("Local Bytes Read", 0)
                    m["shuffle_remote_bytes"] += remote
                    m["shuffle_local_bytes"] += local
                    m["shuffle_read_bytes"] += remote + local
                    m["shuffle_read_records"] += r.get("Total Records Read", 0)
                    m["fetch_wait_ms"] += r.get("Fetch Wait Time", 0)
                    m["blocks_fetched"] += (r.get("Remote Blocks Fetched", 0)
                                            + r.get("Local Blocks Fetched", 0))
    m["shuffle_write_time_ms"] = round(m["shuffle_write_time_ms"], 1)
    # The sort job's stages: the shuffle map stage (writes) and the result stage (reads).
    map_s = reduce_s = 0.0
    for sid in sorted(sort_stages):
        info = stage_info.get(sid)
        if not info or "Submission Time" not in info or "Completion Time" not in info:
            continue  # skipped stage
        seconds = (info["Completion Time"] - info["Submission Time"]) / 1000.0
        if info.get("Parent IDs"):
            reduce_s += seconds
        else:
            map_s += seconds
    m["map_stage_s"] = round(map_s, 3)
    m["reduce_stage_s"] = round(reduce_s, 3)
    return m


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--records", type=int, required=True)
    p.add_argument("--maps", type=int, required=True)
    p.add_argument("--reduces", type=int, required=True)
    p.add_argument("--seed", type=int, default=20240601)
    p.add_argument("--label", default="")
    args = p.parse_args()

    conf = SparkConf().setAppName("rpmp-terasort")
    sc = SparkContext(conf=conf)
    app_id = sc.applicationId
    log_dir = sc.getConf().get("spark.eventLog.dir", "")
    shuffle_manager = sc.getConf().get("spark.shuffle.manager", "sort")

    t0 = time.monotonic()
    # Generate and cache the input; its count and checksum.
    data = sc.parallelize(range(args.maps), args.maps).mapPartitionsWithIndex(
        generate(args.seed, args.records, args.maps)).persist(StorageLevel.MEMORY_ONLY)
    in_count, in_sum = data.mapPartitions(count_and_checksum).reduce(add)
    t1 = time.monotonic()
    # sortByKey counts and samples its input (two jobs on the cached data) for the range
    # partitioner; the shuffle and the sort run in the job below.
    ordered = data.sortByKey(numPartitions=args.reduces)
    t2 = time.monotonic()
    sc.setJobGroup(SORT_GROUP, "sort and validate")
    parts = sorted(ordered.mapPartitionsWithIndex(check_partition).collect())
    t3 = time.monotonic()
    sc.setJobGroup(None, None)  # type: ignore[arg-type]
    data.unpersist()

    out_count = sum(x[1] for x in parts)
    out_sum = sum(x[2] for x in parts)
    errors = []
    if in_count != args.records:
        errors.append("generated %d records, expected %d" % (in_count, args.records))
    if out_count != in_count:
        errors.append("sorted %d records, input %d" % (out_count, in_count))
    if out_sum != in_sum:
        errors.append("checksum of output %d != input %d" % (out_sum, in_sum))
    if len(parts) != args.reduces:
        errors.append("%d output partitions, expected %d" % (len(parts), args.reduces))
    for x in parts:
        if not x[5]:
            errors.append("partition %d is not ordered" % x[0])
        if x[6]:
            errors.append("partition %d has %d records of the wrong size" % (x[0], x[6]))
    prev_last = None
    for x in parts:
        if x[1] == 0:
            continue
        if prev_last is not None and x[3] < prev_last:
            errors.append("partition %d starts below the previous partition's last key" % x[0])
        prev_last = x[4]
    sc.stop()

    result = dict(
        label=args.label, shuffle_manager=shuffle_manager, app_id=app_id,
        records=args.records, bytes=args.records * RECORD_BYTES, maps=args.maps,
        reduces=args.reduces, seed=args.seed,
        total_s=round(t3 - t0, 3), generate_s=round(t1 - t0, 3),
        sample_s=round(t2 - t1, 3), sort_s=round(t3 - t2, 3),
        input_count=in_count, input_checksum=in_sum,
        output_count=out_count, output_checksum=out_sum,
        empty_partitions=sum(1 for x in parts if x[1] == 0),
        max_partition_records=max((x[1] for x in parts), default=0),
        valid=not errors, errors=errors)
    if log_dir:
        base = urlparse(log_dir).path or log_dir
        # A single file <app> (renamed from <app>.inprogress when the context stops) or,
        # with spark.eventLog.rolling.enabled, a directory eventlog_v2_<app>.
        candidates = [os.path.join(base, app_id), os.path.join(base, "eventlog_v2_" + app_id)]
        deadline = time.monotonic() + 30
        while not any(os.path.exists(c) for c in candidates) and time.monotonic() < deadline:
            time.sleep(0.2)
        path = next((c for c in candidates if os.path.exists(c)), candidates[0])
        if os.path.exists(path):
            result.update(event_log_metrics(path))
            result["event_log"] = path
        else:
            result["errors"].append("event log %s not found" % path)
            result["valid"] = False
    else:
        result["errors"].append("spark.eventLog.dir not set: no shuffle metrics")
        result["valid"] = False
    print("TERASORT_RESULT " + json.dumps(result, sort_keys=True), flush=True)
    return 0 if result["valid"] else 1


if __name__ == "__main__":
    sys.exit(main())
