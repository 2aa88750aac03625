// ChunkAppender's in-flight window against a real rpmp-server: a writer that pushes sinks it
// already holds (the bypass writer's end of task, one chunk per partition) issues them back
// to back, while the per-partition buffers writer (awaitWindowOnPush) never has more than
// maxPushesInFlight appends pending; taking a new buffer waits for the window either way.
// Every chunk reads back whole in both cases.
package org.apache.spark.shuffle.rpmp

import java.time.Duration

import io.rpmp.client.{RpmpClient, RpmpClientOptions}
import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark.SparkConf
import org.apache.spark.executor.ShuffleWriteMetrics

@TestInstance(Lifecycle.PER_CLASS)
class ChunkAppenderTest {
  private var server: TestRpmpServer = _
  private var client: RpmpClient = _
  private val partitions = 16
  private val window = 2

  @BeforeAll
  def startServer(): Unit = {
    server = TestRpmpServer.start("256M")
    client = RpmpClient.connect(server.address,
      RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)))
  }

  @AfterAll
  def stopServer(): Unit = {
    if (client != null) client.close()
    if (server != null) server.close()
  }

  /**
   * Opens a sink for every partition, then pushes them all as LAST chunks of map `mapId`;
   * returns the most appends pending at once, after checking every chunk reads back.
   */
  private def pushAll(shuffleId: Int, awaitWindowOnPush: Boolean): Int = {
    val conf = RpmpConf(new SparkConf()
      .set(RpmpConf.ServerKey, server.address)
      .set(RpmpConf.MaxPushesInFlightKey, window.toString)
      .set(RpmpConf.TimeoutKey, "10s"), Map.empty[String, String])
    val coords = RpmpShuffleCoordinates("app-chunk-appender", "run1", shuffleId, 1, partitions,
      Seq(server.address))
    val clients = new RpmpClientCache(conf, "chunk-appender-test")
    val mapId = 7L
    try {
      val appender = new ChunkAppender(coords, mapId, clients, conf, new ShuffleWriteMetrics(),
        partitions, 4096, awaitWindowOnPush)
      val sinks = (0 until partitions).map(p => appender.openSink(p, 0))
      assertEquals(0, appender.pendingPushes, "opening the sinks pushed nothing")
      var peak = 0
      for (p <- 0 until partitions) {
        val bytes = Array.fill[Byte](1000 + p)(p.toByte)
        sinks(p).write(bytes, 0, bytes.length)
        appender.pushSink(p, sinks(p), last = true)
        peak = math.max(peak, appender.pendingPushes)
      }
      appender.finish()
      assertEquals(0, appender.pendingPushes)
      for (p <- 0 until partitions) {
        val meta = client.getMeta(coords.namespaceOf(p), coords.partitionKey(p))
        assertEquals(1, meta.records().size(), s"partition $p: one chunk")
        assertEquals(ShuffleChunk.HeaderSize + 1000 + p, meta.totalLength(), s"partition $p")
      }
      appender.release()
      peak
    } finally {
      clients.closeAll()
    }
  }

  @Test
  def pushesOfHeldSinksGoBackToBack(): Unit = {
    assertEquals(partitions, pushAll(shuffleId = 1, awaitWindowOnPush = false))
  }

  @Test
  def theBuffersWriterKeepsTheWindowOnEveryPush(): Unit = {
    val peak = pushAll(shuffleId = 2, awaitWindowOnPush = true)
    assertTrue(peak <= window, s"at most $window appends pending, saw $peak")
  }
}
