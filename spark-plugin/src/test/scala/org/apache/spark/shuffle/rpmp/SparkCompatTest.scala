// Unit tests of the per-version layer: the jar runs on its own Spark line and refuses
// the other one with a message naming the right jar. Runs in both builds (Spark 4, 3.5).
package org.apache.spark.shuffle.rpmp

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class SparkCompatTest {
  @Test
  def runsOnTheSparkItIsTestedWith(): Unit = {
    assertTrue(SparkCompat.runsOn(org.apache.spark.SPARK_VERSION), org.apache.spark.SPARK_VERSION)
    RpmpShuffleManager.checkSparkVersion(org.apache.spark.SPARK_VERSION)
  }

  @Test
  def refusesTheOtherLineNamingTheRightJar(): Unit = {
    val other = if (SparkCompat.SparkLine == "3.5") "4.2.0" else "3.5.7"
    assertFalse(SparkCompat.runsOn(other))
    val e = assertThrows(classOf[IllegalStateException], () => RpmpShuffleManager.checkSparkVersion(other))
    assertTrue(e.getMessage.contains(SparkCompat.JarName), e.getMessage)
    val right = if (other.startsWith("3.5")) "rpmp-spark-3.5.jar" else "rpmp-spark.jar"
    assertTrue(e.getMessage.contains(right), e.getMessage)
  }
}
