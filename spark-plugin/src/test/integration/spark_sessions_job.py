# The long-application job of run-spark-sessions-it.sh (issue 23): JOBS small jobs of three
# shuffles each (reduceByKey, groupByKey, sortByKey: at least 3 x JOBS shuffles in one
# application), each result digested into OUT.json so a run on RPMP can be compared with
# a run on Spark's own sort shuffle. Usage: spark_sessions_job.py OUT.json JOBS
import hashlib
import json
import sys

from pyspark.sql import SparkSession


def digest(rows):
    h = hashlib.sha256()
    for r in rows:
        h.update(repr(r).encode())
    return h.hexdigest()


def one_job(sc, j):
    # Keys and values depend on j, so every job shuffles different data.
    data = sc.parallelize(range(3000), 3).map(lambda i: ((i * (j + 7)) % 211, i + j))
    sums = data.reduceByKey(lambda a, b: a + b, numPartitions=3)                  # shuffle 1
    groups = sums.map(lambda kv: (kv[1] % 17, kv[0])).groupByKey(numPartitions=3)  # shuffle 2
    sizes = groups.mapValues(lambda ks: sorted(ks)[:3] + [len(list(ks))])
    rows = sizes.sortByKey(numPartitions=2).collect()                             # shuffle 3
    return digest(rows)


def main(out_path, jobs):
    spark = SparkSession.builder.appName("rpmp-sessions").getOrCreate()
    sc = spark.sparkContext
    result = {"job_%03d" % j: one_job(sc, j) for j in range(jobs)}
    with open(out_path, "w") as f:
        json.dump(result, f)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
