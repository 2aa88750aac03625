// Unit tests of RpmpConf: defaults, parsing and rejection of bad values.
package org.apache.spark.shuffle.rpmp

import org.apache.spark.SparkConf
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class RpmpConfTest {
  @Test
  def defaults(): Unit = {
    val c = RpmpConf(new SparkConf(false).set(RpmpConf.ServerKey, "h:1"))
    assertEquals(Seq("h:1"), c.servers)
    assertEquals(1 << 20, c.pushBufferSize)
    assertEquals(48L << 20, c.maxBytesInFlight)
    assertEquals(30000L, c.timeoutMs)
    assertEquals(FallbackPolicy.Sort, c.fallback)
    assertEquals("tcp;ofi_rxm", c.provider)
  }

  @Test
  def parsesValues(): Unit = {
    val c = RpmpConf(new SparkConf(false)
      .set(RpmpConf.ServerKey, "a:1, b:2")
      .set(RpmpConf.PushBufferSizeKey, "64k")
      .set(RpmpConf.MaxBytesInFlightKey, "8m")
      .set(RpmpConf.TimeoutKey, "5s")
      .set(RpmpConf.FallbackKey, "FAIL"))
    assertEquals(Seq("a:1", "b:2"), c.servers)
    assertEquals(64 << 10, c.pushBufferSize)
    assertEquals(8L << 20, c.maxBytesInFlight)
    assertEquals(5000L, c.timeoutMs)
    assertEquals(FallbackPolicy.Fail, c.fallback)
  }

  @Test
  def rejectsBadValues(): Unit = {
    def conf(k: String, v: String) = new SparkConf(false).set(RpmpConf.ServerKey, "h:1").set(k, v)
    assertThrows(classOf[IllegalArgumentException],
      () => RpmpConf(conf(RpmpConf.ServerKey, "no-port")))
    assertThrows(classOf[IllegalArgumentException],
      () => RpmpConf(conf(RpmpConf.FallbackKey, "maybe")))
    assertThrows(classOf[IllegalArgumentException],
      () => RpmpConf(conf(RpmpConf.ProxiesKey, "p:1")))
  }

  @Test
  def placesPartitionsOnServers(): Unit = {
    val c = RpmpShuffleCoordinates("app", 3, 10, 5, Seq("a:1", "b:2"))
    assertEquals("spark/app/3", c.namespace)
    assertEquals("a:1", c.serverFor(0))
    assertEquals("b:2", c.serverFor(3))
    assertEquals("4", c.partitionKey(4))
  }
}
