// A stand-in for Spark 4.3's org.apache.spark.shuffle.BlockingShuffleManager, so that one
// plugin jar runs on every Spark line. Spark 4.3 moved shuffleBlockResolver out of
// ShuffleManager into this trait and refuses a spark.shuffle.manager that does not extend
// it; Spark 3.5 to 4.2 have no such trait. This declaration has exactly the shape of
// Spark 4.3's (an interface extending ShuffleManager with one abstract method), so on 4.3
// whichever of the two identical definitions the class loader finds first serves, and on
// older lines this one simply adds nothing. Only RpmpShuffleManager extends it. Do not add
// members: it must stay binary-identical to Spark's (docs/spark-plugin.md, "Spark 4.3").
package org.apache.spark.shuffle

trait BlockingShuffleManager extends ShuffleManager {
  def shuffleBlockResolver: ShuffleBlockResolver
}
