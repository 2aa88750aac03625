// Runs real Spark jobs (local[2], Kryo: a serializer that relocates records) through the
// sort-based writer (RpmpSortShuffleWriter) against a real rpmp-server, and checks the
// results equal plain Scala's and those of the per-partition-buffer writer: with one run,
// with many runs per map (spark.rpmp.writer.sortRunSize tiny: partitions continue across
// runs and end with header-only LAST chunks) and with 3,000 partitions. Also checks the
// chunks in RPMP: one LAST per (map attempt, partition), seqs 0..n, cumulative bytes.
package org.apache.spark.shuffle.rpmp

import java.nio.ByteBuffer
import java.time.Duration

import scala.jdk.CollectionConverters._

import io.rpmp.client.{RpmpClient, RpmpClientOptions}
import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark.{HashPartitioner, ShuffleDependency, SparkConf, SparkContext}
import org.apache.spark.rdd.RDD

@TestInstance(Lifecycle.PER_CLASS)
class SortWriterTest {
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

  private def conf(path: String, runSize: String = ""): SparkConf = {
    val c = new SparkConf()
      .setMaster("local[2]")
      .setAppName("rpmp-sort-writer-test")
      .set("spark.ui.enabled", "false")
      .set("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
      .set("spark.shuffle.manager", "io.rpmp.spark.PmofShuffleManager")
      .set(RpmpConf.ServerKey, server.address)
      .set(RpmpConf.PushBufferSizeKey, "4k") // several chunks per partition run
      .set(RpmpConf.MaxBytesInFlightKey, "64k")
      .set(RpmpConf.TimeoutKey, "10s")
      .set(RpmpConf.WriterPathKey, path)
    if (runSize.nonEmpty) c.set(RpmpConf.SortRunSizeKey, runSize) else c
  }

  private def withSpark[T](c: SparkConf)(f: SparkContext => T): T = {
    val sc = new SparkContext(c)
    try f(sc) finally sc.stop()
  }

  private val n = 30000

  private def data(sc: SparkContext): RDD[(Int, String)] =
    sc.parallelize(0 until n, 4).map(i => (i % 1499, "v" * (i % 70) + i))

  private def expected = (0 until n).map(i => (i % 1499, "v" * (i % 70) + i))

  /** The jobs whose results must not depend on the writer. */
  private def jobs(sc: SparkContext, partitions: Int): (Map[Int, Seq[String]], Seq[String]) = {
    val grouped = data(sc).groupByKey(partitions).mapValues(_.toSeq.sorted).collect().toMap
    val sorted = data(sc).map { case (k, v) => (v, k) }.sortByKey(numPartitions = 5).keys.collect()
    (grouped, sorted.toSeq)
  }

  private def want = (expected.groupBy(_._1).map { case (k, v) => k -> v.map(_._2).sorted },
    expected.map(_._2).sorted)

  @Test
  def sortWriterMatchesPlainScalaAndTheBufferWriter(): Unit = {
    val sortOne = withSpark(conf("sort"))(jobs(_, 7))
    val sortRuns = withSpark(conf("sort", runSize = "16k"))(jobs(_, 7))
    val buffers = withSpark(conf("buffers"))(jobs(_, 7))
    assertEquals(want, sortOne)
    assertEquals(want, sortRuns)
    assertEquals(want, buffers)
  }

  @Test
  def manyPartitionsAndManyRuns(): Unit = withSpark(conf("sort", runSize = "16k")) { sc =>
    val shuffled = data(sc).partitionBy(new HashPartitioner(3000))
    val got = shuffled.mapPartitionsWithIndex((i, it) => it.map(kv => (i, kv))).collect()
    assertEquals(n, got.length)
    got.foreach { case (i, (k, _)) => assertEquals(k % 3000, i, s"key $k in partition $i") }
    assertEquals(expected.sorted, got.map(_._2).toSeq.sorted)
    checkChunks(shuffled, expectHeaderOnly = true)
  }

  /** Every (attempt, partition) in RPMP: seqs 0..n, one LAST (the last), cumulative sums. */
  private def checkChunks(rdd: RDD[_], expectHeaderOnly: Boolean): Unit = {
    val coords = TestShuffles.coordinatesOf(rdd)
    assertTrue(rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]]
      .serializer.supportsRelocationOfSerializedObjects)
    var headerOnly = 0
    var partitionsSeen = 0
    for (p <- 0 until coords.numPartitions) {
      val meta = try client.getMeta(coords.namespace, coords.partitionKey(p)) catch {
        case _: io.rpmp.client.RpmpNotFoundException => null
      }
      if (meta != null) {
        partitionsSeen += 1
        meta.records().asScala.groupBy(_.tag()).foreach { case (mapId, refs) =>
          var cumulative = 0L
          refs.zipWithIndex.foreach { case (ref, i) =>
            val bytes = ByteBuffer.wrap(client.readRecord(ref).toByteArray)
            val h = ShuffleChunk.readHeader(bytes, ref.length())
            assertEquals(p, h.partition)
            assertEquals(mapId, h.mapId)
            assertEquals(i, h.seq, s"partition $p map $mapId: seqs not 0..n")
            cumulative += h.dataLength
            assertEquals(cumulative, h.cumulativeBytes)
            assertEquals(i == refs.size - 1, h.last, s"partition $p map $mapId chunk $i LAST")
            if (h.last && h.dataLength == 0) headerOnly += 1
          }
        }
      }
    }
    assertTrue(partitionsSeen > 1000, s"only $partitionsSeen partitions stored")
    if (expectHeaderOnly) assertTrue(headerOnly > 0, "no header-only LAST chunk: one run only?")
  }
}
