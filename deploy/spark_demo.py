"""A small Spark job whose shuffles go through RPMP, for deploy/demo.sh.

Counts words and sorts 400,000 generated ~100-byte records by key, checks the results
against values computed without Spark, and prints what the shuffles moved.
Usage: spark-submit ... deploy/spark_demo.py
"""
import sys

from pyspark.sql import SparkSession


def main():
    spark = SparkSession.builder.appName("rpmp-demo").getOrCreate()
    sc = spark.sparkContext
    n = 400000
    records = sc.parallelize(range(n), 8).map(lambda i: ("%010d" % ((i * 7919) % n), "v" * 88))
    ordered = records.sortByKey(numPartitions=6).keys().collect()
    assert ordered == sorted("%010d" % ((i * 7919) % n) for i in range(n)), "sortByKey out of order"
    words = sc.parallelize(range(n), 8).map(lambda i: ("word%d" % (i % 997), 1))
    counts = dict(words.reduceByKey(lambda a, b: a + b, 4).collect())
    expected = {"word%d" % k: n // 997 + (1 if k < n % 997 else 0) for k in range(997)}
    assert counts == expected, "reduceByKey counts differ"
    manager = sc.getConf().get("spark.shuffle.manager", "sort")
    print("spark demo: sortByKey of %d records and reduceByKey of %d words correct, shuffle manager %s"
          % (n, len(counts), manager))
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
