// The per-version layer of the plugin for Spark 4.x (Scala 2.13): everything that
// differs between the Spark lines the plugin supports lives in a SparkCompat object,
// one per src/main/spark-<line>/, with the same members. Shared code calls only these.
package org.apache.spark.shuffle.rpmp

private[spark] object SparkCompat {
  /** The Spark line this jar is built for, as the jar's name says it. */
  val SparkLine = "4"

  /** The jar a user of this Spark line should put on the class path. */
  val JarName = "rpmp-spark.jar"

  /** Whether this jar can run on Spark `version` (org.apache.spark.SPARK_VERSION). */
  def runsOn(version: String): Boolean = version.startsWith("4.")
}
