// The per-version layer of the plugin for Spark 3.5 (Scala 2.12): the same members as
// src/main/spark-4/.../SparkCompat.scala, for what differs between the Spark lines.
package org.apache.spark.shuffle.rpmp

import org.apache.spark.ShuffleDependency

private[spark] object SparkCompat {
  /** The Spark line this jar is built for, as the jar's name says it. */
  val SparkLine = "3.5"

  /** The jar a user of this Spark line should put on the class path. */
  val JarName = "rpmp-spark-3.5.jar"

  /** Whether this jar can run on Spark `version` (org.apache.spark.SPARK_VERSION). */
  def runsOn(version: String): Boolean = version.startsWith("3.5.")

  /** Spark 3.5 has no row checksums: always None. */
  def rowChecksums(dep: ShuffleDependency[_, _, _]): Option[RowChecksums] = None
}
