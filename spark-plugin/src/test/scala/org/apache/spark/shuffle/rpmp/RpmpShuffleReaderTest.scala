// Unit tests of complete-or-refetch reads: RpmpShuffleReader is handed partitions whose
// chunks the test appends by hand to a real rpmp-server (with map outputs registered in
// the driver's real MapOutputTrackerMaster): complete, a missing chunk, a duplicated
// chunk, an extra chunk of a failed attempt, a byte count disagreeing with the MapStatus,
// corrupted chunks, a chunk that turns up on re-read. Each must give exactly the right
// records or a FetchFailedException naming the right map - and leave no buffer behind.
package org.apache.spark.shuffle.rpmp

import java.io.ByteArrayOutputStream
import java.time.Duration

import io.rpmp.client.{RpmpClient, RpmpClientOptions}
import org.junit.jupiter.api.{AfterAll, BeforeAll, BeforeEach, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark._
import org.apache.spark.scheduler.MapStatus
import org.apache.spark.shuffle.FetchFailedException
import org.apache.spark.storage.ShuffleBlockId

@TestInstance(Lifecycle.PER_CLASS)
class RpmpShuffleReaderTest {
  private var server: TestRpmpServer = _
  private var client: RpmpClient = _
  private var sc: SparkContext = _
  private var clients: RpmpClientCache = _
  private var rpmpConf: RpmpConf = _
  // The shuffle of the current test: 2 maps, 2 partitions, no aggregation.
  private var dep: ShuffleDependency[Int, String, String] = _
  private def coords = dep.shuffleHandle.asInstanceOf[RpmpShuffleHandle[_, _, _]].coordinates
  private def tracker = SparkEnv.get.mapOutputTracker.asInstanceOf[MapOutputTrackerMaster]

  @BeforeAll
  def start(): Unit = {
    server = TestRpmpServer.start()
    client = RpmpClient.connect(server.address,
      RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)))
    val conf = new SparkConf()
      .setMaster("local[1]")
      .setAppName("rpmp-reader-test")
      .set("spark.ui.enabled", "false")
      .set("spark.shuffle.manager", "io.rpmp.spark.PmofShuffleManager")
      .set(RpmpConf.ServerKey, server.address)
      .set(RpmpConf.ReadRetriesKey, "2")
      .set(RpmpConf.ReadRetryWaitKey, "10ms")
    sc = new SparkContext(conf)
    rpmpConf = RpmpConf(conf)
    clients = new RpmpClientCache(rpmpConf, "reader-test")
  }

  @AfterAll
  def stop(): Unit = {
    if (clients != null) clients.closeAll()
    if (sc != null) sc.stop()
    if (client != null) client.close()
    if (server != null) server.close()
  }

  @BeforeEach
  def newShuffle(): Unit = {
    val rdd = sc.parallelize(Seq.empty[(Int, String)], 2)
    dep = new ShuffleDependency[Int, String, String](rdd, new HashPartitioner(2))
    tracker.registerShuffle(dep.shuffleId, 2, 2)
  }

  /**
   * Chunk bytes (header + serialized records) of one attempt's output for `partition`, and
   * their data bytes. Strict (a List): with Scala 2.12 (Spark 3.5) `grouped(n).toSeq` is a
   * lazy Stream, whose map would run after `cumulative` was returned (the size registered
   * in the MapStatus would then count the first chunk only).
   */
  private def chunks(partition: Int, mapId: Long, batches: Seq[Seq[(Int, String)]])
      : (Seq[Array[Byte]], Long) = {
    var cumulative = 0L
    val out = batches.toList.zipWithIndex.map { case (batch, seq) =>
      val bytes = new ByteArrayOutputStream()
      bytes.write(new Array[Byte](ShuffleChunk.HeaderSize))
      if (batch.nonEmpty) {
        val s = dep.serializer.newInstance().serializeStream(SparkEnv.get.serializerManager
          .wrapStream(ShuffleBlockId(dep.shuffleId, mapId, partition), bytes))
        batch.foreach { case (k, v) => s.writeKey(k); s.writeValue(v) }
        s.close()
      }
      val chunk = bytes.toByteArray
      cumulative += chunk.length - ShuffleChunk.HeaderSize
      ShuffleChunk.writeHeader(chunk, partition, seq, cumulative, mapId,
        last = seq == batches.size - 1)
      chunk
    }
    (out, cumulative)
  }

  private def append(partition: Int, mapId: Long, chunk: Array[Byte]): Unit =
    client.append(coords.namespaceOf(partition), partition.toString, chunk, mapId)

  /** Registers map `mapIndex`'s attempt `mapId` with these partition sizes. */
  private def register(mapIndex: Int, mapId: Long, sizes: Array[Long]): Unit =
    tracker.registerMapOutput(dep.shuffleId, mapIndex,
      MapStatus(RpmpMapWriter.location(coords, mapId), sizes, mapId))

  private def records(p: Int, map: Int) = (0 until 40).map(i => (i * 2 + p, s"m$map-p$p-$i"))

  /**
   * Writes maps 0 (attempt 100) and 1 (attempt 200), partitions 0 and 1, 3 chunks each, all
   * appended except what `skip` says; registers their true sizes (or `size0` for map 0 p 0).
   */
  private def writeBoth(skip: (Int, Long, Int) => Boolean = (_, _, _) => false,
      size0: Option[Long] = None): Unit = {
    for ((mapIndex, mapId) <- Seq((0, 100L), (1, 200L))) {
      val sizes = new Array[Long](2)
      for (p <- 0 until 2) {
        val (cs, total) = chunks(p, mapId, records(p, mapIndex).grouped(14).toSeq)
        sizes(p) = total
        cs.zipWithIndex.foreach { case (c, seq) => if (!skip(p, mapId, seq)) append(p, mapId, c) }
      }
      if (mapIndex == 0) size0.foreach(s => sizes(0) = s)
      register(mapIndex, mapId, sizes)
    }
  }

  private def want(p: Int) = (records(p, 0) ++ records(p, 1)).sortBy(_._2)

  /** Reads partition p as a reduce task would; checks that no buffer is left afterwards. */
  private def read(p: Int, beforeRetry: Int => Unit = _ => (),
      maps: (Int, Int) = (0, 2)): Seq[(Int, String)] = {
    val context = TaskContext.empty()
    try {
      val reader = new RpmpShuffleReader[Int, String](
        dep.shuffleHandle.asInstanceOf[RpmpShuffleHandle[Int, _, String]], maps._1, maps._2,
        p, p + 1,
        context, context.taskMetrics.createTempShuffleReadMetrics(), clients, rpmpConf,
        tracker, beforeRetry)
      reader.read().map(kv => (kv._1, kv._2)).toSeq.sortBy(_._2)
    } finally {
      context.markTaskCompleted(None)
      assertEquals(0, clients.liveBuffers, "RpmpBuffers left after the task")
    }
  }

  private def assertFetchFailed(mapId: Long, p: Int, why: String): Unit = {
    val e = assertThrows(classOf[FetchFailedException], () => read(p))
    assertTrue(e.getMessage.contains(s"attempt $mapId"), e.getMessage)
    assertTrue(e.getMessage.contains(why), e.getMessage)
  }

  @Test
  def closeAllLeavesAClientWhoseBuffersARunningTaskStillHolds(): Unit = {
    // A task killed while the JVM's shuffle manager stops still writes into its buffer:
    // closing its client would free that memory under it (a SIGSEGV, seen in local mode).
    val cache = new RpmpClientCache(rpmpConf, "close-test")
    val c = cache.get(server.address)
    val held = c.allocateBuffer(4096)
    val start = System.nanoTime()
    cache.closeAll(waitMs = 200)
    assertTrue(System.nanoTime() - start >= 200L * 1000000L, "did not wait for the buffer")
    assertFalse(c.isClosed, "a client with a buffer in use was closed")
    held.byteBuffer().put(0, 1.toByte)  // the memory is still there
    held.close()
    c.close()
    // Without buffers in use, closeAll closes at once.
    val cache2 = new RpmpClientCache(rpmpConf, "close-test-2")
    val c2 = cache2.get(server.address)
    c2.allocateBuffer(4096).close()
    cache2.closeAll(waitMs = 10000)
    assertTrue(c2.isClosed)
  }

  @Test
  def completeOutputsReadExactly(): Unit = {
    writeBoth()
    assertEquals(want(0), read(0))
    assertEquals(want(1), read(1))
  }

  @Test
  def mapRangeReadsReturnOnlyTheirMaps(): Unit = {
    writeBoth() // a map-range read (AQE local/skew readers) lists only its attempts' records
    assertEquals(records(0, 1).sortBy(_._2), read(0, maps = (1, 2)))
    assertEquals(records(1, 0).sortBy(_._2), read(1, maps = (0, 1)))
    assertEquals(want(1), read(1, maps = (0, Int.MaxValue)))
  }

  @Test
  def missingChunkIsFetchFailedNamingTheMap(): Unit = {
    writeBoth(skip = (p, mapId, seq) => p == 0 && mapId == 200L && seq == 1)
    assertFetchFailed(200L, 0, "missing")
    assertEquals(want(1), read(1)) // the other partition is whole
  }

  @Test
  def missingLastChunkIsFetchFailed(): Unit = {
    writeBoth(skip = (p, mapId, seq) => p == 1 && mapId == 100L && seq == 2)
    assertFetchFailed(100L, 1, "no LAST")
  }

  @Test
  def duplicatedChunkIsReadOnce(): Unit = {
    writeBoth()
    val (cs, _) = chunks(0, 100L, records(0, 0).grouped(14).toSeq)
    append(0, 100L, cs(1)) // stored twice (e.g. a retried append)
    append(0, 100L, cs(2))
    assertEquals(want(0), read(0))
  }

  @Test
  def chunksOfFailedAttemptsAreIgnored(): Unit = {
    writeBoth()
    // Attempt 300 of map 0 failed after appending (whole and partial outputs): in no MapStatus.
    val (cs, _) = chunks(0, 300L, Seq(Seq((999, "failed attempt")), Seq((998, "x"))))
    cs.foreach(c => append(0, 300L, c))
    append(0, 301L, "not even a chunk".getBytes)
    assertEquals(want(0), read(0))
  }

  @Test
  def byteCountDisagreeingWithTheMapStatusIsFetchFailed(): Unit = {
    writeBoth(size0 = Some(100000L))
    assertFetchFailed(100L, 0, "the MapStatus reports")
  }

  @Test
  def corruptedChunksAreFetchFailed(): Unit = {
    // Bad magic in map 200's first chunk of partition 0.
    writeBoth(skip = (p, mapId, seq) => p == 0 && mapId == 200L && seq == 0)
    val (cs, _) = chunks(0, 200L, records(0, 1).grouped(14).toSeq)
    val bad = cs.head.clone()
    bad(0) = 'X'
    append(0, 200L, bad)
    assertFetchFailed(200L, 0, "bad chunk magic")
  }

  @Test
  def undecodableDataIsFetchFailed(): Unit = {
    // A well-formed header over bytes that are not a serialized (compressed) stream.
    writeBoth(skip = (p, mapId, _) => p == 1 && mapId == 100L)
    val garbage = new Array[Byte](ShuffleChunk.HeaderSize + 64)
    java.util.Arrays.fill(garbage, ShuffleChunk.HeaderSize, garbage.length, 0x5a.toByte)
    val (cs, total) = chunks(1, 100L, records(1, 0).grouped(14).toSeq)
    ShuffleChunk.writeHeader(garbage, 1, 0, 64, 100L, last = false)
    append(1, 100L, garbage)
    // The rest of the chain, renumbered after the garbage chunk, so only decoding can fail.
    var cumulative = 64L
    cs.zipWithIndex.foreach { case (c, i) =>
      cumulative += c.length - ShuffleChunk.HeaderSize
      ShuffleChunk.writeHeader(c, 1, i + 1, cumulative, 100L, last = i == cs.size - 1)
      append(1, 100L, c)
    }
    register(0, 100L, Array(chunks(0, 100L, records(0, 0).grouped(14).toSeq)._2, total + 64))
    assertFetchFailed(100L, 1, "failed to decode")
  }

  @Test
  def chunkThatTurnsUpOnReReadIsUsed(): Unit = {
    writeBoth(skip = (p, mapId, seq) => p == 1 && mapId == 200L && seq == 2)
    val (cs, _) = chunks(1, 200L, records(1, 1).grouped(14).toSeq)
    var rounds = 0
    val got = read(1, beforeRetry = round => {
      rounds = round
      if (round == 1) append(1, 200L, cs(2)) // e.g. a replica that had it
    })
    assertEquals(1, rounds)
    assertEquals(want(1), got)
  }

  @Test
  def earlyEndFreesTheBufferBeingRead(): Unit = {
    writeBoth()
    val context = TaskContext.empty()
    val reader = new RpmpShuffleReader[Int, String](
      dep.shuffleHandle.asInstanceOf[RpmpShuffleHandle[Int, _, String]], 0, 2, 0, 1,
      context, context.taskMetrics.createTempShuffleReadMetrics(), clients, rpmpConf, tracker)
    val it = reader.read()
    assertTrue(it.hasNext)
    it.next() // a LIMIT 1: the task ends with the rest unread
    assertTrue(clients.liveBuffers > 0, "expected a chunk buffer in use")
    context.markTaskCompleted(None)
    // Reads still in flight free their buffers as they complete (the server may still be
    // writing into them until then): poll until none is left, with a deadline.
    val deadline = System.nanoTime() + 10L * 1000 * 1000 * 1000
    while (clients.liveBuffers != 0 && System.nanoTime() < deadline) Thread.onSpinWait()
    assertEquals(0, clients.liveBuffers, "RpmpBuffers left after an early task end")
  }
}
