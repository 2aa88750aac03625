# Smoke job of the Spark version matrix (run-spark-smoke.sh): an RDD sortByKey and a
# DataFrame aggregation, whose results are digested into OUT.json so a run on RPMP can
# be compared with a run on Spark's own shuffle. Usage: spark_smoke_job.py OUT.json
import hashlib
import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def digest(rows):
    h = hashlib.sha256()
    for r in rows:
        h.update(repr(r).encode())
    return h.hexdigest()


def main(out_path):
    spark = SparkSession.builder.appName("rpmp-smoke").getOrCreate()
    sc = spark.sparkContext
    pairs = sc.parallelize(range(20000), 6).map(lambda i: ((i * 7919) % 20011, i))
    by_key = pairs.sortByKey(numPartitions=5).collect()
    df = spark.range(0, 200000, numPartitions=6)
    agg = (df.groupBy((F.col("id") % 997).alias("k"))
             .agg(F.sum("id").alias("s"), F.count("*").alias("n"))
             .orderBy("k").collect())
    result = {
        "spark_version": spark.version,
        "sortByKey_count": len(by_key),
        "sortByKey_digest": digest(by_key),
        "sortByKey_sorted": all(by_key[i][0] <= by_key[i + 1][0] for i in range(len(by_key) - 1)),
        "agg_digest": digest([tuple(r) for r in agg]),
        "agg_groups": len(agg),
        "agg_total": sum(r["s"] for r in agg),
    }
    with open(out_path, "w") as f:
        json.dump(result, f)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
