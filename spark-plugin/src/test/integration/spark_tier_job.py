# The job of run-spark-tier-it.sh: one shuffle of about ROWS KiB of rows (1 KiB strings,
# shuffle compression off, so the bytes stored are the rows' bytes), read back after a
# repartition by hash, and the same aggregates computed without that shuffle. Writes
# {"shuffled": [...], "direct": [...], "rows": N} to OUT: the two must be equal (a lost
# or doubled row changes the count and the sums). The application then stays up, its
# shuffle stored, until OUT.release exists (at most 300 s), so that the caller can see
# where the shuffle lies before the application's end deletes it.
#   spark-submit ... spark_tier_job.py OUT ROWS
import json
import os
import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

out, rows = sys.argv[1], int(sys.argv[2])
spark = SparkSession.builder.appName("rpmp-tier-it").getOrCreate()
df = spark.range(0, rows, numPartitions=8).select(
    F.col("id"), F.repeat(F.sha2(F.col("id").cast("string"), 256), 16).alias("v"))  # 1,024 chars


def aggregates(frame):
    r = frame.agg(F.count("*").alias("n"), F.sum("id").alias("ids"),
                  F.sum(F.crc32(F.col("v"))).alias("crcs")).collect()[0]
    return [int(r["n"]), int(r["ids"]), int(r["crcs"])]


repartitioned = df.repartition(16, "id")  # held until the end, with its shuffle
shuffled = aggregates(repartitioned)
direct = aggregates(df)
with open(out + ".tmp", "w") as f:
    json.dump({"shuffled": shuffled, "direct": direct, "rows": rows}, f)
os.rename(out + ".tmp", out)
deadline = time.monotonic() + 300
while not os.path.exists(out + ".release") and time.monotonic() < deadline:
    time.sleep(0.2)  # polling the caller's release file, with a deadline
spark.stop()
