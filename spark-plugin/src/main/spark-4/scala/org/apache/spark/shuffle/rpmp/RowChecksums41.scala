// RowChecksums over Spark 4.1+'s RowBasedChecksum (one per reduce partition). Only
// SparkCompat.rowChecksums makes it, and only on a Spark that has the class.
package org.apache.spark.shuffle.rpmp

import org.apache.spark.ShuffleDependency
import org.apache.spark.shuffle.checksum.RowBasedChecksum

private[spark] final class RowChecksums41(checksums: Array[RowBasedChecksum]) extends RowChecksums {
  override def update(partition: Int, key: Any, value: Any): Unit =
    checksums(partition).update(key, value)

  override def aggregated: Long = RowBasedChecksum.getAggregatedChecksumValue(checksums)
}

private[spark] object RowChecksums41 {
  def apply(dep: ShuffleDependency[_, _, _]): Option[RowChecksums] =
    Option(dep.rowBasedChecksums).filter(_.nonEmpty).map(c => new RowChecksums41(c))
}
