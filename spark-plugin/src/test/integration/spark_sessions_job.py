# The long-application job of run-spark-sessions-it.sh (issue 23): JOBS small queries of
# three shuffles each (two aggregations and a repartition: at least 3 x JOBS shuffles in
# one application), each result digested into OUT.json so a run on RPMP can be compared
# with a run on Spark's own sort shuffle. Also the applications of run-spark-apps-it.sh,
# each with its own FIRST, so that applications running at once shuffle different data.
# Usage: spark_sessions_job.py OUT.json JOBS [FIRST]   (jobs FIRST .. FIRST+JOBS-1)
import hashlib
import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def digest(rows):
    h = hashlib.sha256()
    for r in sorted(tuple(r) for r in rows):
        h.update(repr(r).encode())
    return h.hexdigest()


def one_job(spark, j):
    # Keys and values depend on j, so every query shuffles different data.
    df = spark.range(0, 4000, 1, 2).select(((F.col("id") * (j + 7)) % 211).alias("k"),
                                           (F.col("id") + j).alias("v"))
    sums = df.groupBy("k").agg(F.sum("v").alias("s"))                               # shuffle 1
    groups = sums.groupBy((F.col("s") % 17).alias("g")).agg(                         # shuffle 2
        F.count("*").alias("n"), F.min("k").alias("lo"), F.max("k").alias("hi"))
    return digest(groups.repartition(2, "n").collect())                             # shuffle 3


def main(out_path, jobs, first):
    spark = SparkSession.builder.appName("rpmp-sessions").getOrCreate()
    result = {}
    for j in range(first, first + jobs):
        result["job_%03d" % j] = one_job(spark, j)
        print("rpmp-sessions: job %d done" % j, flush=True)  # progress, for a test to wait on
    with open(out_path, "w") as f:
        json.dump(result, f)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 0)
