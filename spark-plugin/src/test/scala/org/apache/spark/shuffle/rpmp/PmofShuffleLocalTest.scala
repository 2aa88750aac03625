// Runs real Spark jobs (local[2]) through io.rpmp.spark.PmofShuffleManager against a
// real rpmp-server: groupByKey / reduceByKey / sortByKey results, records of foreign
// attempts ignored, lost data recomputed through FetchFailed, namespaces deleted at stop,
// the sort fallback when RPMP is unreachable, and no RpmpBuffer left after a LIMIT-like
// early end or a killed reduce task (as when a speculative copy wins).
package org.apache.spark.shuffle.rpmp

import java.time.Duration

import io.rpmp.client.{RpmpClient, RpmpClientOptions, RpmpNotFoundException}
import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark.{ShuffleDependency, SparkConf, SparkContext, SparkEnv, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd, SparkListenerTaskStart}

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

  private def liveBuffers: Int = SparkEnv.get.shuffleManager.asInstanceOf[RpmpShuffleManager].liveBuffers

  @Test
  def earlyEndAndKilledTasksLeaveNoBuffer(): Unit = withSpark(sparkConf(server.address)) { sc =>
    val shuffled = data(sc).groupByKey(4)
    // LIMIT-like: take(1) ends reduce task 0 after its first record.
    assertEquals(1, shuffled.take(1).length)
    assertEquals(0, liveBuffers, "RpmpBuffers left after take(1)")

    // A reduce task killed mid-read (Spark kills the losing copy of a speculative pair so).
    @volatile var victim = -1L
    @volatile var killedEnds = 0
    sc.addSparkListener(new SparkListener {
      override def onTaskStart(e: SparkListenerTaskStart): Unit =
        // Only the reduce stage runs (the map outputs exist already).
        if (e.taskInfo.index == 0 && e.taskInfo.attemptNumber == 0 && victim < 0) {
          victim = e.taskInfo.taskId
        }
      override def onTaskEnd(e: SparkListenerTaskEnd): Unit =
        if (e.taskInfo.taskId == victim && e.reason.isInstanceOf[org.apache.spark.TaskKilled]) {
          killedEnds += 1
        }
    })
    val counted = shuffled.mapPartitionsWithIndex { (i, it) =>
      val ctx = TaskContext.get()
      val first = it.next() // a chunk buffer is now being read
      if (i == 0 && ctx.attemptNumber() == 0) {
        val deadline = System.nanoTime() + 60L * 1000000000L
        while (!ctx.isInterrupted() && System.nanoTime() < deadline) Thread.sleep(5)
        ctx.killTaskIfInterrupted()
        throw new IllegalStateException("victim task was not killed within 60 s")
      }
      Iterator(1 + it.size)
    }
    val job = new Thread(() => counted.collect())
    job.start()
    val deadline = System.nanoTime() + 60L * 1000000000L
    while (victim < 0 && System.nanoTime() < deadline) Thread.sleep(10)
    assertTrue(victim >= 0, "reduce task 0 never started")
    while (!sc.killTaskAttempt(victim, interruptThread = true, "test: speculative copy won") &&
      System.nanoTime() < deadline) Thread.sleep(10)
    job.join(120000)
    assertFalse(job.isAlive, "job did not finish after the kill")
    sc.listenerBus.waitUntilEmpty()
    assertEquals(1, killedEnds, "the reduce task was not killed")
    assertEquals(0, liveBuffers, "RpmpBuffers left after a killed reduce task")
  }

  @Test
  def shuffleDataIOReportsReliableStorageAndCleansUp(): Unit = withSpark(sparkConf(server.address)
      .set("spark.shuffle.sort.io.plugin.class", "io.rpmp.spark.RpmpShuffleDataIO")) { sc =>
    assertTrue(sc.shuffleDriverComponents.supportsReliableStorage())
    val shuffled = data(sc).groupByKey(3)
    assertEquals(997L, shuffled.count())
    val ns = namespaceOf(shuffled)
    assertFalse(client.list(ns).isEmpty)
    // What Spark's ContextCleaner calls once the shuffle is no longer referenced.
    sc.shuffleDriverComponents.removeShuffle(shuffleId(shuffled), true)
    val left = try client.list(ns).size() catch { case _: RpmpNotFoundException => 0 }
    assertEquals(0, left, s"$ns survived removeShuffle")
  }
}
