// The "rpmp" metrics Source in Spark's metrics system: a real job (local[2]) against a real
// rpmp-server with Spark's CsvSink configured (spark.metrics.conf.*.sink.csv.*, period 1 s)
// must make the sink write <appId>.driver.rpmp.bytesWritten with a nonzero count; the
// counters must agree with Spark's own task metrics (bytes written) and count reads; the
// liveBuffers gauge is back at zero once the job is done.
package org.apache.spark.shuffle.rpmp

import java.io.File
import java.nio.file.{Files, Path}
import java.util.concurrent.atomic.AtomicLong

import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark.{SparkConf, SparkContext, SparkEnv}
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}

@TestInstance(Lifecycle.PER_CLASS)
class RpmpMetricsTest {
  private var server: TestRpmpServer = _

  @BeforeAll
  def startServer(): Unit = server = TestRpmpServer.start()

  @AfterAll
  def stopServer(): Unit = if (server != null) server.close()

  /** Polls `condition` every 50 ms; fails with `what` after `seconds`. */
  private def waitFor(seconds: Int, what: => String)(condition: => Boolean): Unit = {
    val deadline = System.nanoTime() + seconds * 1000000000L
    while (!condition) {
      if (System.nanoTime() > deadline) fail(s"gave up after $seconds s: $what")
      Thread.sleep(50)
    }
  }

  /** The last count a CsvSink file holds ("t,count" header, then "time,count" lines). */
  private def lastCount(csv: File): Option[Long] =
    if (!csv.isFile) None
    else {
      val lines = Files.readAllLines(csv.toPath)
      if (lines.size < 2) None else Some(lines.get(lines.size - 1).split(",")(1).trim.toLong)
    }

  @Test
  def countersReachTheMetricsSinks(): Unit = {
    val dir: Path = Files.createTempDirectory("rpmp-metrics-csv")
    val conf = new SparkConf()
      .setMaster("local[2]")
      .setAppName("rpmp-metrics-test")
      .set("spark.ui.enabled", "false")
      .set("spark.shuffle.manager", "io.rpmp.spark.PmofShuffleManager")
      .set(RpmpConf.ServerKey, server.address)
      .set(RpmpConf.PushBufferSizeKey, "4k") // several chunks per partition
      .set("spark.metrics.conf.*.sink.csv.class", "org.apache.spark.metrics.sink.CsvSink")
      .set("spark.metrics.conf.*.sink.csv.period", "1")
      .set("spark.metrics.conf.*.sink.csv.unit", "seconds")
      .set("spark.metrics.conf.*.sink.csv.directory", dir.toString)
    val sc = new SparkContext(conf)
    try {
      val sparkBytesWritten = new AtomicLong()
      sc.addSparkListener(new SparkListener {
        override def onTaskEnd(end: SparkListenerTaskEnd): Unit = if (end.taskMetrics != null) {
          sparkBytesWritten.addAndGet(end.taskMetrics.shuffleWriteMetrics.bytesWritten)
        }
      })
      val written0 = RpmpMetrics.bytesWritten.getCount
      val read0 = RpmpMetrics.bytesRead.getCount
      val chunks0 = RpmpMetrics.chunksRead.getCount
      val sums = sc.parallelize(0 until 20000, 4).map(i => (i % 101, i.toLong))
        .reduceByKey(_ + _, 3).collect().toMap
      assertEquals((0 until 20000).groupBy(_ % 101).map { case (k, v) => k -> v.map(_.toLong).sum },
        sums)
      assertTrue(SparkEnv.get.metricsSystem.getSourcesByName(RpmpMetrics.SourceName).nonEmpty,
        "the rpmp Source is not registered")
      // Acknowledgement callbacks may run just after the task saw its appends complete.
      sc.listenerBus.waitUntilEmpty()
      waitFor(10, s"bytesWritten +${RpmpMetrics.bytesWritten.getCount - written0}, Spark's " +
        s"task metrics ${sparkBytesWritten.get}") {
        RpmpMetrics.bytesWritten.getCount - written0 == sparkBytesWritten.get
      }
      assertTrue(sparkBytesWritten.get > 0)
      assertTrue(RpmpMetrics.bytesRead.getCount - read0 > 0, "no bytes read counted")
      assertTrue(RpmpMetrics.chunksRead.getCount - chunks0 > 0, "no chunks read counted")
      waitFor(10, "liveBuffers back at 0")(
        RpmpMetrics.registry.getGauges.get("liveBuffers").getValue == 0)
      // The sink: <namespace (the app id)>.driver.rpmp.bytesWritten.csv, nonzero.
      val csv = new File(dir.toFile, s"${sc.applicationId}.driver.rpmp.bytesWritten.csv")
      waitFor(15, s"a nonzero count in $csv (files: ${dir.toFile.list().sorted.mkString(", ")})") {
        lastCount(csv).exists(_ > 0)
      }
    } finally {
      sc.stop()
      dir.toFile.listFiles().foreach(_.delete())
      Files.deleteIfExists(dir)
    }
  }
}
