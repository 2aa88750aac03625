// Spark's order-independent row checksums of one map task (Spark 4.1+: the dependency's
// rowBasedChecksums, on by default for SQL shuffles in 4.2), behind a trait so shared
// code never names a class that older Spark lines lack. Made by SparkCompat.rowChecksums;
// used by the map-side writers on the task's thread.
package org.apache.spark.shuffle.rpmp

private[spark] trait RowChecksums {
  /** Adds one input record (before map-side combine, as Spark's writers do). */
  def update(partition: Int, key: Any, value: Any): Unit

  /** The value the MapStatus reports. */
  def aggregated: Long
}

private[spark] object RowChecksums {
  /** `records`, with every record added to `checksums` (if any) as it goes by. */
  def tap[K, V](
      records: Iterator[Product2[K, V]],
      checksums: Option[RowChecksums],
      partitionOf: Any => Int): Iterator[Product2[K, V]] = checksums match {
    case None => records
    case Some(c) => records.map { r => c.update(partitionOf(r._1), r._1, r._2); r }
  }
}
