# Where the executors' CPU went, from JFR recordings of bench/spark/run-jvm-bench.sh --jfr:
# counts jdk.ExecutionSample events by top frame (method) and by a coarse bucket of the
# first frame that is not a JDK/Scala library frame (RPMP plugin, RPMP client, Spark's
# compression, serializer, sort, codegen, ...). Prints the top N of each.
#
#   python3 bench/spark/jfr-top.py [--top 15] FILE.jfr...
# Needs the JDK's `jfr` tool on PATH (or JFR=/path/to/jfr).
import argparse
import collections
import json
import os
import subprocess
import sys

BUCKETS = [
    ("org.apache.spark.shuffle.rpmp.", "rpmp plugin"),
    ("org.apache.spark.shuffle.sort.Rpmp", "rpmp plugin (sorter)"),
    ("io.rpmp.", "rpmp java client"),
    ("net.jpountz.", "lz4 compression"),
    ("com.github.luben.zstd", "zstd compression"),
    ("org.xerial.snappy", "snappy compression"),
    ("org.apache.spark.shuffle.sort.", "spark sort shuffle"),
    ("org.apache.spark.util.collection.unsafe.sort", "spark unsafe sort"),
    ("org.apache.spark.util.collection.", "spark collections/sorter"),
    ("org.apache.spark.sql.catalyst.expressions.codegen", "codegen"),
    ("org.apache.spark.sql.catalyst.expressions.Generated", "generated code"),
    ("org.apache.spark.sql.execution.UnsafeRowSerializer", "unsafe row serializer"),
    ("org.apache.spark.sql.", "spark sql"),
    ("org.apache.spark.unsafe.", "spark unsafe (memcpy, hashing)"),
    ("org.apache.spark.storage.", "spark block storage / disk writer"),
    ("org.apache.spark.network.", "spark network (netty)"),
    ("io.netty.", "netty"),
    ("org.apache.spark.serializer.", "spark serializer"),
    ("org.apache.spark.", "spark other"),
]


def bucket(frames):
    for f in frames:
        t = f["method"]["type"]["name"].replace("/", ".")
        for prefix, name in BUCKETS:
            if t.startswith(prefix):
                return name
    top = frames[0]["method"]["type"]["name"].replace("/", ".") if frames else "?"
    return "jdk/other: " + ".".join(top.split(".")[:3])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--top", type=int, default=15)
    p.add_argument("files", nargs="+")
    a = p.parse_args()
    jfr = os.environ.get("JFR", "jfr")
    methods = collections.Counter()
    buckets = collections.Counter()
    total = 0
    for path in a.files:
        out = subprocess.run([jfr, "print", "--json", "--stack-depth", "24", "--events",
                              "jdk.ExecutionSample", path], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit("jfr print %s failed: %s" % (path, out.stderr.strip()))
        for ev in json.loads(out.stdout)["recording"]["events"]:
            frames = (ev["values"].get("stackTrace") or {}).get("frames") or []
            if not frames:
                continue
            total += 1
            m = frames[0]["method"]
            methods["%s.%s" % (m["type"]["name"].replace("/", "."), m["name"])] += 1
            buckets[bucket(frames)] += 1
    print("samples=%d files=%d" % (total, len(a.files)))
    for name, n in buckets.most_common(a.top):
        print("bucket %5.1f%% %s" % (100.0 * n / max(total, 1), name))
    for name, n in methods.most_common(a.top):
        print("method %5.1f%% %s" % (100.0 * n / max(total, 1), name))


if __name__ == "__main__":
    main()
