// Test helpers shared by the plugin's Spark tests: where an RDD's shuffle lives in RPMP.
package org.apache.spark.shuffle.rpmp

import org.apache.spark.ShuffleDependency
import org.apache.spark.rdd.RDD

object TestShuffles {
  /** The RPMP coordinates of the shuffle `rdd` reads (its first dependency). */
  def coordinatesOf(rdd: RDD[_]): RpmpShuffleCoordinates =
    rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleHandle match {
      case h: RpmpShuffleHandle[_, _, _] => h.coordinates
      case other => throw new AssertionError(s"shuffle not stored in RPMP: $other")
    }

  /** The namespace of the shuffle's partition 0 (its group's, with placement groups). */
  def namespaceOf(rdd: RDD[_]): String = coordinatesOf(rdd).namespaceOf(0)
}
