// The per-version layer of the plugin for Spark 4.x (Scala 2.13): everything that
// differs between the Spark lines the plugin supports lives in a SparkCompat object,
// one per src/main/spark-<line>/, with the same members. Shared code calls only these.
package org.apache.spark.shuffle.rpmp

import org.apache.spark.ShuffleDependency

private[spark] object SparkCompat {
  /** The Spark line this jar is built for, as the jar's name says it. */
  val SparkLine = "4"

  /** The jar a user of this Spark line should put on the class path. */
  val JarName = "rpmp-spark.jar"

  /** Whether this jar can run on Spark `version` (org.apache.spark.SPARK_VERSION). */
  def runsOn(version: String): Boolean = version.startsWith("4.")

  // ShuffleDependency.rowBasedChecksums exists from Spark 4.1: looked up once, so this jar
  // also runs on 4.0, where RowChecksums41 (which names 4.1 classes) is never loaded.
  private lazy val hasRowChecksums: Boolean =
    classOf[ShuffleDependency[_, _, _]].getMethods.exists(_.getName == "rowBasedChecksums")

  /** The dependency's row checksums when this Spark has them and asks for them. */
  def rowChecksums(dep: ShuffleDependency[_, _, _]): Option[RowChecksums] =
    if (hasRowChecksums) RowChecksums41(dep) else None
}
