# Job of the Spark security test (run-spark-security-it.sh): shuffles 4000 rows whose
# values carry MARKER (a string found nowhere else) through a DataFrame repartition, so
# the shuffle data RPMP stores holds MARKER in plaintext unless Spark encrypted it.
# Checks every row came back. Usage: spark_security_job.py MARKER
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main(marker):
    spark = SparkSession.builder.appName("rpmp-security").getOrCreate()
    df = spark.range(0, 4000, numPartitions=4).select(
        (F.col("id") % 16).alias("k"), F.concat(F.lit(marker), F.col("id").cast("string")).alias("v"))
    rows = df.repartition(8, "k").collect()
    ok = len(rows) == 4000 and all(r.v.startswith(marker) for r in rows)
    print("RESULT rows=%d ok=%s" % (len(rows), ok))
    spark.stop()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main(sys.argv[1])
