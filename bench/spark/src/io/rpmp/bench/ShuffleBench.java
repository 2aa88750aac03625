// JVM shuffle benchmark jobs for bench/spark/run-jvm-bench.sh: one Spark application
// runs one job shape (terasort | agg | join) over generated DataFrames and prints one
// line "BENCH_RESULT {json}" with the timed action's seconds, the application id and a
// validation figure (row count, an order-independent checksum of the output rows and,
// for terasort, the number of keys out of order).
// The shuffle manager and everything else come from spark-submit's --conf; the job
// does not know which shuffle it runs on. Built into <build>/jars/rpmp-spark-bench.jar.
//
//   spark-submit --class io.rpmp.bench.ShuffleBench JAR --job terasort --rows N
//       [--maps M] [--partitions P]
package io.rpmp.bench;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.concat;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.md5;
import static org.apache.spark.sql.functions.substring;
import static org.apache.spark.sql.functions.sum;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

public final class ShuffleBench {
  private ShuffleBench() {}

  public static void main(String[] args) {
    String job = null;
    long rows = 0;
    int maps = 0;
    int partitions = 0;
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--job": job = args[i + 1]; break;
        case "--rows": rows = Long.parseLong(args[i + 1]); break;
        case "--maps": maps = Integer.parseInt(args[i + 1]); break;
        case "--partitions": partitions = Integer.parseInt(args[i + 1]); break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (job == null || rows <= 0 || args.length % 2 != 0) {
      System.err.println("usage: ShuffleBench --job terasort|agg|join --rows N [--maps M] "
          + "[--partitions P]");
      System.exit(2);
    }
    SparkSession spark = SparkSession.builder().appName("rpmp-bench-" + job).getOrCreate();
    if (partitions > 0) {
      spark.conf().set("spark.sql.shuffle.partitions", String.valueOf(partitions));
    }
    int m = maps > 0 ? maps : spark.sparkContext().defaultParallelism() * 4;
    Dataset<Row> out;
    switch (job) {
      case "terasort": {
        // 10-byte key + 90-byte value (hex of md5s: random-looking, compressible ~2x).
        Dataset<Row> in = spark.range(0, rows, 1, m).select(
            substring(md5(col("id").cast("string")), 1, 10).as("k"),
            concat(md5(col("id").plus(1).cast("string")), md5(col("id").plus(2).cast("string")),
                substring(md5(col("id").plus(3).cast("string")), 1, 26)).as("v"));
        out = in.orderBy(col("k"));
        break;
      }
      case "agg": {
        Dataset<Row> in = spark.range(0, rows, 1, m).select(
            col("id").mod(1000003).as("g"), col("id").as("x"));
        out = in.groupBy(col("g")).agg(sum(col("x")).as("s"), count(col("x")).as("c"));
        break;
      }
      case "join": {
        // Two tables of `rows` rows each; b's keys are a permutation of a's.
        Dataset<Row> a = spark.range(0, rows, 1, m).select(
            col("id").as("k"), md5(col("id").cast("string")).as("va"));
        Dataset<Row> b = spark.range(0, rows, 1, m).select(
            col("id").multiply(7919).mod(rows).as("k"),
            substring(md5(col("id").plus(5).cast("string")), 1, 16).as("vb"));
        spark.conf().set("spark.sql.autoBroadcastJoinThreshold", "-1");
        out = a.join(b, "k");
        break;
      }
      default:
        throw new IllegalArgumentException("unknown job " + job);
    }
    // The timed action: each reduce task only counts its rows, sums their hashes and, for
    // terasort, checks its keys are ordered (as cheap as the noop sink, but it validates).
    final boolean sorted = job.equals("terasort");
    long t0 = System.nanoTime();
    List<long[]> parts = out.queryExecution().toRdd().toJavaRDD()
        .mapPartitionsWithIndex((Integer index, Iterator<InternalRow> it) -> {
          long n = 0;
          long hash = 0;
          long disorder = 0;
          UTF8String prev = null;
          UTF8String first = null;
          while (it.hasNext()) {
            InternalRow row = it.next();
            n++;
            hash += row.hashCode() & 0xffffffffL;
            if (sorted) {
              UTF8String k = row.getUTF8String(0).clone();
              if (prev != null && prev.compareTo(k) > 0) disorder++;
              if (first == null) first = k;
              prev = k;
            }
          }
          // first and last keys (8-byte prefixes) for the order check across partitions
          long[] res = {index, n, hash, disorder,
              first == null ? Long.MIN_VALUE : first.getPrefix(),
              prev == null ? Long.MIN_VALUE : prev.getPrefix()};
          return java.util.Collections.singletonList(res).iterator();
        }, true).collect();
    double seconds = (System.nanoTime() - t0) / 1e9;
    long outRows = 0;
    long outHash = 0;
    long disorder = 0;
    long lastPrefix = Long.MIN_VALUE;
    List<long[]> byIndex = new ArrayList<>(parts);
    byIndex.sort((x, y) -> Long.compare(x[0], y[0]));
    for (long[] p : byIndex) {
      outRows += p[1];
      outHash += p[2];
      disorder += p[3];
      if (sorted && p[1] > 0) {
        // prefixes compare as unsigned longs in UTF8String's prefix order
        if (lastPrefix != Long.MIN_VALUE && Long.compareUnsigned(lastPrefix, p[4]) > 0) {
          disorder++;
        }
        lastPrefix = p[5];
      }
    }
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("job", job);
    r.put("app_id", spark.sparkContext().applicationId());
    r.put("seconds", seconds);
    r.put("rows", rows);
    r.put("maps", m);
    r.put("partitions", spark.conf().get("spark.sql.shuffle.partitions"));
    r.put("out_rows", outRows);
    r.put("out_hash", Long.toUnsignedString(outHash));
    r.put("disorder", disorder);
    StringBuilder sb = new StringBuilder("{");
    for (Map.Entry<String, Object> e : r.entrySet()) {
      if (sb.length() > 1) sb.append(", ");
      sb.append('"').append(e.getKey()).append("\": ");
      Object v = e.getValue();
      if (v instanceof Number) sb.append(v);
      else sb.append('"').append(v).append('"');
    }
    sb.append('}');
    System.out.println("BENCH_RESULT " + sb);
    spark.stop();
  }
}
