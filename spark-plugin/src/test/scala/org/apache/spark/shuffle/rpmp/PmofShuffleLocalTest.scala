// Runs real Spark jobs (local[2]) through io.rpmp.spark.PmofShuffleManager against a
// real rpmp-server: groupByKey / reduceByKey / sortByKey results, records of foreign
// attempts ignored, lost data recomputed through FetchFailed, namespaces deleted at stop,
// and the sort fallback when RPMP is unreachable.
package org.apache.spark.shuffle.rpmp

import java.time.Duration

import io.rpmp.client.{RpmpClient, RpmpClientOptions, RpmpNotFoundException}
import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark.{ShuffleDependency, SparkConf, SparkContext}
import org.apache.spark.rdd.RDD

@TestInstance(Lifecycle.PER_CLASS)
class PmofShuffleLocalTest {
  private var server: TestRpmpServer = _
  private var client: RpmpClient = _

  @BeforeAll
  def startServer(): Unit = {
    server = TestRpmpServer.start()
    client = RpmpClient.connect(server.address,
      RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)))
  }

  @AfterAll
  def stopServer(): Unit = {
    if (client != null) client.close()
    if (server != null) server.close()
  }

  private def sparkConf(serverAddress: String): SparkConf = new SparkConf()
    .setMaster("local[2]")
    .setAppName("rpmp-local-test")
    .set("spark.ui.enabled", "false")
    .set("spark.shuffle.manager", "io.rpmp.spark.PmofShuffleManager")
    .set(RpmpConf.ServerKey, serverAddress)
    .set(RpmpConf.PushBufferSizeKey, "4k") // many records per partition
    .set(RpmpConf.MaxBytesInFlightKey, "16k")
    .set(RpmpConf.TimeoutKey, "10s")

  private def withSpark[T](conf: SparkConf)(f: SparkContext => T): T = {
    val sc = new SparkContext(conf)
    try f(sc) finally sc.stop()
  }

  private def data(sc: SparkContext): RDD[(Int, String)] =
    sc.parallelize(0 until 20000, 4).map(i => (i % 997, "v" * (i % 50) + i))

  private def expected = (0 until 20000).map(i => (i % 997, "v" * (i % 50) + i))

  private def shuffleId(rdd: RDD[_]): Int =
    rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleId

  private def namespaceOf(rdd: RDD[_]): String = TestShuffles.namespaceOf(rdd)

  @Test
  def groupReduceAndSortMatchPlainScala(): Unit = withSpark(sparkConf(server.address)) { sc =>
    val grouped = data(sc).groupByKey(5).mapValues(_.toSeq.sorted).collect().toMap
    val wantGrouped = expected.groupBy(_._1).map { case (k, v) => k -> v.map(_._2).sorted }
    assertEquals(wantGrouped, grouped)

    val reduced = data(sc).mapValues(_.length.toLong).reduceByKey(_ + _, 3).collect().toMap
    val wantReduced = expected.groupBy(_._1).map { case (k, v) => k -> v.map(_._2.length.toLong).sum }
    assertEquals(wantReduced, reduced)

    val sorted = data(sc).map { case (k, v) => (v, k) }.sortByKey(numPartitions = 4).keys.collect()
    assertEquals(expected.map(_._2).sorted, sorted.toSeq)
  }

  @Test
  def foreignAttemptsAreIgnoredAndLostDataIsRecomputed(): Unit =
    withSpark(sparkConf(server.address)) { sc =>
      // Commutative reduce: the result must not depend on the order records arrive in.
      val shuffled = data(sc).mapValues(_.length.toLong).reduceByKey(_ + _, 4)
      val first = shuffled.collect().toMap
      val ns = namespaceOf(shuffled)
      assertTrue(client.list(ns).size() > 0, s"nothing stored in $ns")

      // A record of an attempt Spark does not know (e.g. a failed speculative copy): ignored.
      client.append(ns, "0", "not a serialized stream".getBytes, 987654321L)
      assertTrue(first == shuffled.collect().toMap, "foreign record changed the result")

      // Data lost from RPMP: FetchFailed, the map stage reruns, the result is the same.
      client.delete(ns, "1")
      assertTrue(first == shuffled.collect().toMap, "result differs after recomputation")
    }

  @Test
  def stopDeletesTheAppsNamespaces(): Unit = {
    var ns: String = null
    withSpark(sparkConf(server.address)) { sc =>
      val shuffled = data(sc).groupByKey(2)
      shuffled.count()
      ns = namespaceOf(shuffled)
      assertFalse(client.list(ns).isEmpty)
    }
    val left = try client.list(ns).size() catch { case _: RpmpNotFoundException => 0 }
    assertEquals(0, left, s"$ns survived SparkContext.stop()")
  }

  @Test
  def unreachableServerFallsBackToSortShuffle(): Unit = {
    val dead = s"127.0.0.1:${TestRpmpServer.freePort()}"
    withSpark(sparkConf(dead).set(RpmpConf.TimeoutKey, "2s")) { sc =>
      val reduced = data(sc).mapValues(_ => 1).reduceByKey(_ + _).collect().toMap
      assertEquals(expected.groupBy(_._1).map { case (k, v) => k -> v.size }, reduced)
    }
    withSpark(sparkConf(dead).set(RpmpConf.TimeoutKey, "2s").set(RpmpConf.FallbackKey, "fail")) {
      sc =>
        assertThrows(classOf[IllegalStateException], () => data(sc).groupByKey().count())
    }
  }
}
