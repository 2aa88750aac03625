// Public entry point for dynamic allocation without an external shuffle service:
// spark.shuffle.sort.io.plugin.class=io.rpmp.spark.RpmpShuffleDataIO (together with
// spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager). Spark instantiates it by
// reflection (SparkConf); the logic is in org.apache.spark.shuffle.rpmp.RpmpShuffleDataIOBase.
package io.rpmp.spark

import org.apache.spark.SparkConf
import org.apache.spark.shuffle.rpmp.RpmpShuffleDataIOBase

/** ShuffleDataIO whose driver components report reliable storage (RPMP holds map outputs). */
class RpmpShuffleDataIO(conf: SparkConf) extends RpmpShuffleDataIOBase(conf)
