// Public entry point of the plugin: set spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager.
// Spark instantiates it by reflection (SparkConf, isDriver); all logic lives in
// org.apache.spark.shuffle.rpmp.RpmpShuffleManager, which may use Spark's internal APIs.
package io.rpmp.spark

import org.apache.spark.SparkConf
import org.apache.spark.shuffle.rpmp.RpmpShuffleManager

/** Spark shuffle manager storing shuffle data in RPMP (persistent memory over RDMA). */
class PmofShuffleManager(conf: SparkConf, isDriver: Boolean)
  extends RpmpShuffleManager(conf, isDriver) {

  def this(conf: SparkConf) = this(conf, false)
}
