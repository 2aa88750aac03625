// Runs real Spark jobs (local[2], Kryo: a serializer that relocates records) through each
// map-side writer against a real rpmp-server: the sort-based writer (RpmpSortShuffleWriter)
// with one run, with many runs per map (spark.rpmp.writer.sortRunSize tiny: partitions
// continue across runs and end with header-only LAST chunks) and with 3,000 partitions; the
// bypass writer (RpmpBypassShuffleWriter) with tiny chunks; the per-partition-buffer writer.
// Checks their results equal plain Scala's, that the automatic choice of writer is Spark's
// (bypass up to spark.shuffle.sort.bypassMergeThreshold partitions), and the chunks in RPMP:
// one LAST per (map attempt, partition), seqs 0..n, cumulative bytes, bounded chunk sizes.
package org.apache.spark.shuffle.rpmp

import java.nio.ByteBuffer
import java.time.Duration

import scala.jdk.CollectionConverters._

import io.rpmp.client.{RpmpClient, RpmpClientOptions}
import org.junit.jupiter.api.{AfterAll, BeforeAll, Tag, Test, TestInstance}
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

  private def conf(path: String, runSize: String = "", bypassChunk: String = "4k"): SparkConf = {
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
      .set(RpmpConf.BypassChunkSizeKey, bypassChunk)
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

  // The writers' own logic, the same on every Spark line: run on the Spark 4 build only
  // (spark-plugin/pom.xml, profile spark-3.5).
  @Test
  @Tag("spark4-only")
  def sortWriterMatchesPlainScalaAndTheBufferWriter(): Unit = {
    val sortOne = withSpark(conf("sort"))(jobs(_, 7))
    val sortRuns = withSpark(conf("sort", runSize = "16k"))(jobs(_, 7))
    val buffers = withSpark(conf("buffers"))(jobs(_, 7))
    val bypass = withSpark(conf("bypass"))(jobs(_, 7))
    val bypassBigChunks = withSpark(conf("bypass", bypassChunk = "1m"))(jobs(_, 7))
    assertEquals(want, sortOne)
    assertEquals(want, sortRuns)
    assertEquals(want, buffers)
    assertEquals(want, bypass)
    assertEquals(want, bypassBigChunks)
  }

  @Test
  def autoChoosesTheWriterAsSparkDoes(): Unit = withSpark(conf("auto")
      .set("spark.shuffle.sort.bypassMergeThreshold", "50")) { sc =>
    def pathOf(rdd: RDD[_], asked: WriterPath.Value = WriterPath.Auto) = RpmpShuffleManager
      .writerPath(asked, rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]])
    assertEquals(WriterPath.Bypass, pathOf(data(sc).partitionBy(new HashPartitioner(50))))
    assertEquals(WriterPath.Sort, pathOf(data(sc).partitionBy(new HashPartitioner(51))))
    // Map-side combine: neither bypass nor sort can take it, whatever was asked.
    val combined = data(sc).reduceByKey(_ + _, 7)
    assertEquals(WriterPath.Buffers, pathOf(combined))
    assertEquals(WriterPath.Buffers, pathOf(combined, WriterPath.Bypass))
    assertEquals(WriterPath.Buffers, pathOf(combined, WriterPath.Sort))
    // Asked for explicitly: bypass at any partition count, buffers always.
    val wide = data(sc).partitionBy(new HashPartitioner(3000))
    assertEquals(WriterPath.Bypass, pathOf(wide, WriterPath.Bypass))
    assertEquals(WriterPath.Buffers, pathOf(wide, WriterPath.Buffers))
    assertEquals(WriterPath.Sort, pathOf(wide, WriterPath.Sort))
  }

  @Test
  def bypassWriterPushesBoundedChunks(): Unit = withSpark(conf("bypass")) { sc =>
    val shuffled = data(sc).partitionBy(new HashPartitioner(8))
    val got = shuffled.mapPartitionsWithIndex((i, it) => it.map(kv => (i, kv))).collect()
    got.foreach { case (i, (k, _)) => assertEquals(k % 8, i, s"key $k in partition $i") }
    assertEquals(expected.sorted, got.map(_._2).toSeq.sorted)
    val stats = checkChunks(shuffled, expectHeaderOnly = false, minPartitions = 8)
    assertTrue(stats.maxChunksPerMap >= 2, s"one chunk per (map, partition): $stats")
    // A chunk closes at the first record boundary past 4 KiB.
    assertTrue(stats.maxChunkData < (4 << 10) + RpmpBypassShuffleWriter.Slack, s"$stats")
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

  private case class ChunkStats(maxChunksPerMap: Int, maxChunkData: Long)

  /** Every (attempt, partition) in RPMP: seqs 0..n, one LAST (the last), cumulative sums. */
  private def checkChunks(
      rdd: RDD[_], expectHeaderOnly: Boolean, minPartitions: Int = 1001): ChunkStats = {
    val coords = TestShuffles.coordinatesOf(rdd)
    assertTrue(rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]]
      .serializer.supportsRelocationOfSerializedObjects)
    var headerOnly = 0
    var partitionsSeen = 0
    var maxChunksPerMap = 0
    var maxChunkData = 0L
    for (p <- 0 until coords.numPartitions) {
      val meta = try client.getMeta(coords.namespaceOf(p), coords.partitionKey(p)) catch {
        case _: io.rpmp.client.RpmpNotFoundException => null
      }
      if (meta != null) {
        partitionsSeen += 1
        meta.records().asScala.groupBy(_.tag()).foreach { case (mapId, refs) =>
          var cumulative = 0L
          maxChunksPerMap = math.max(maxChunksPerMap, refs.size)
          refs.zipWithIndex.foreach { case (ref, i) =>
            val bytes = ByteBuffer.wrap(client.readRecord(ref).toByteArray)
            val h = ShuffleChunk.readHeader(bytes, ref.length())
            assertEquals(p, h.partition)
            assertEquals(mapId, h.mapId)
            assertEquals(i, h.seq, s"partition $p map $mapId: seqs not 0..n")
            cumulative += h.dataLength
            maxChunkData = math.max(maxChunkData, h.dataLength)
            assertEquals(cumulative, h.cumulativeBytes)
            assertEquals(i == refs.size - 1, h.last, s"partition $p map $mapId chunk $i LAST")
            if (h.last && h.dataLength == 0) headerOnly += 1
          }
        }
      }
    }
    assertTrue(partitionsSeen >= minPartitions, s"only $partitionsSeen partitions stored")
    if (expectHeaderOnly) assertTrue(headerOnly > 0, "no header-only LAST chunk: one run only?")
    ChunkStats(maxChunksPerMap, maxChunkData)
  }
}
