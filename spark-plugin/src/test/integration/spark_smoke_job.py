# Smoke job of the Spark version matrix (run-spark-smoke.sh): an RDD sortByKey and a
# DataFrame aggregation, whose results are digested into OUT.json. With --reference it
# computes the same results in plain Python, without Spark, so the smoke test needs one
# Spark run (on RPMP) instead of two.
# Usage: spark_smoke_job.py OUT.json | spark_smoke_job.py --reference OUT.json
import hashlib
import json
import sys

PAIRS, PAIR_SLICES, SORT_PARTITIONS = 20000, 6, 5
IDS, ID_SLICES, GROUPS = 200000, 6, 997


def digest(rows):
    h = hashlib.sha256()
    for r in rows:
        h.update(repr(r).encode())
    return h.hexdigest()


def pair(i):
    return ((i * 7919) % 20011, i)


def summary(version, by_key, agg):
    """agg: (k, sum, count) tuples in k order."""
    return {
        "spark_version": version,
        "sortByKey_count": len(by_key),
        "sortByKey_digest": digest(by_key),
        "sortByKey_sorted": all(by_key[i][0] <= by_key[i + 1][0] for i in range(len(by_key) - 1)),
        "agg_digest": digest(agg),
        "agg_groups": len(agg),
        "agg_total": sum(s for _, s, _ in agg),
    }


def on_spark():
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    spark = SparkSession.builder.appName("rpmp-smoke").getOrCreate()
    sc = spark.sparkContext
    by_key = sc.parallelize(range(PAIRS), PAIR_SLICES).map(pair) \
        .sortByKey(numPartitions=SORT_PARTITIONS).collect()
    df = spark.range(0, IDS, numPartitions=ID_SLICES)
    agg = (df.groupBy((F.col("id") % GROUPS).alias("k"))
             .agg(F.sum("id").alias("s"), F.count("*").alias("n"))
             .orderBy("k").collect())
    result = summary(spark.version, by_key, [tuple(r) for r in agg])
    spark.stop()
    return result


def in_python():
    # The keys (i * 7919) % 20011 are distinct (20011 is prime), so the order is unique.
    by_key = sorted(pair(i) for i in range(PAIRS))
    sums, counts = [0] * GROUPS, [0] * GROUPS
    for i in range(IDS):
        sums[i % GROUPS] += i
        counts[i % GROUPS] += 1
    return summary(None, by_key, [(k, sums[k], counts[k]) for k in range(GROUPS)])


if __name__ == "__main__":
    reference = sys.argv[1] == "--reference"
    result = in_python() if reference else on_spark()
    with open(sys.argv[-1], "w") as f:
        json.dump(result, f)
