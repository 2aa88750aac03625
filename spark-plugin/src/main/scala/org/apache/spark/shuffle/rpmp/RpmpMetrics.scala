// The plugin's client-side metrics in Spark's metrics system: one set of Dropwizard counters,
// timers and a gauge per JVM (driver or executor), exposed as the metrics Source "rpmp" (so
// every configured sink - PrometheusServlet, JMX, CSV, console... - reports them as
// <namespace>.<executor id>.rpmp.<metric>; docs/operations.md lists them). Writers
// (RpmpShuffleWriter, ChunkPusher) and the reader (RecordFetcher, ValidatedRecordIterator)
// count into it from any thread; RpmpShuffleManager registers the Source with the JVM's
// SparkEnv once it exists (Source is private[spark], hence this package).
package org.apache.spark.shuffle.rpmp

import java.util.concurrent.{CompletableFuture, TimeUnit}

import com.codahale.metrics.{Counter, Gauge, MetricRegistry, Timer}
import io.rpmp.client.ClusterCounters

import org.apache.spark.SparkEnv
import org.apache.spark.internal.Logging
import org.apache.spark.metrics.source.Source

/** The "rpmp" metrics Source: RpmpMetrics' registry. */
private[spark] class RpmpMetricsSource(override val metricRegistry: MetricRegistry)
  extends Source {
  override val sourceName: String = RpmpMetrics.SourceName
}

private[spark] object RpmpMetrics extends Logging {
  val SourceName = "rpmp"

  val registry = new MetricRegistry()
  /** Chunk data bytes (header excluded) RPMP acknowledged, and those chunks. */
  val bytesWritten = registry.counter("bytesWritten")
  val chunksWritten = registry.counter("chunksWritten")
  /** Appends that failed (the task then fails and Spark retries it). */
  val appendFailures = registry.counter("appendFailures")
  /** Time from an append's issue to its acknowledgement. */
  val writeLatency = registry.timer("writeLatency")
  /** Chunk bytes (header included) read back, and those chunks. */
  val bytesRead = registry.counter("bytesRead")
  val chunksRead = registry.counter("chunksRead")
  /** Chunk reads that failed (counted as missing: read again on a retry round). */
  val readFailures = registry.counter("readFailures")
  /** Time from a chunk read's issue to its completion. */
  val readLatency = registry.timer("readLatency")
  /** Retry rounds of reduce tasks, and map outputs read again in them. */
  val fetchRetries = registry.counter("fetchRetries")
  val refetches = registry.counter("refetches")
  /** FetchFailedExceptions the reader raised (Spark then reruns the map). */
  val fetchFailures = registry.counter("fetchFailures")
  /** Placement groups this JVM split into a new extent for space (GroupExtents). */
  val splits = registry.counter("splits")

  // The live-buffer count and cluster counters of the newest shuffle manager of this JVM.
  @volatile private var liveBufferCount: () => Int = () => 0
  @volatile private var clusterCounts: () => ClusterCounters = () => ClusterCounters.ZERO
  registry.register("liveBuffers", new Gauge[Int] { override def getValue: Int = liveBufferCount() })
  /** librpmp's cluster clients: connections opened, staged copies, failover retries, sessions. */
  private def clusterGauge(name: String, read: ClusterCounters => Long): Unit =
    registry.register(name, new Gauge[Long] { override def getValue: Long = read(clusterCounts()) })
  clusterGauge("serverConnections", _.serverConnections)
  clusterGauge("stagedCopies", _.stagedCopies)
  clusterGauge("failoverRetries", _.failoverRetries)
  clusterGauge("sessionsOpened", _.sessionsOpened)
  clusterGauge("sessionsReestablished", _.sessionsReestablished)
  clusterGauge("sessionRefusals", _.sessionRefusals)

  private val source = new RpmpMetricsSource(registry)
  // The metrics system the source is registered with (a new SparkEnv has a new one).
  private var registeredWith: AnyRef = _

  /**
   * Registers the Source with this JVM's SparkEnv's metrics system, once per SparkEnv, and
   * makes the liveBuffers gauge read `liveBuffers` and the cluster gauges `clusterCounters`
   * (summed over the JVM's cluster clients). A no-op before SparkEnv exists.
   */
  def register(liveBuffers: () => Int, clusterCounters: () => ClusterCounters): Unit = synchronized {
    val env = SparkEnv.get
    if (env != null && (registeredWith ne env.metricsSystem)) {
      liveBufferCount = liveBuffers
      clusterCounts = clusterCounters
      env.metricsSystem.registerSource(source)
      registeredWith = env.metricsSystem
      logInfo(s"Registered the RPMP metrics source '$SourceName'")
    }
  }

  /** Counts an append of `dataBytes` data bytes when `future` completes. */
  def appendIssued(future: CompletableFuture[_], dataBytes: Long): Unit =
    countWhenDone(future, dataBytes, writeLatency, bytesWritten, chunksWritten, appendFailures)

  /** Counts a chunk read of `bytes` bytes when `future` completes. */
  def readIssued(future: CompletableFuture[_], bytes: Long): Unit =
    countWhenDone(future, bytes, readLatency, bytesRead, chunksRead, readFailures)

  private def countWhenDone(future: CompletableFuture[_], bytes: Long, latency: Timer,
      byteCount: Counter, chunkCount: Counter, failures: Counter): Unit = {
    val start = System.nanoTime()
    future.whenComplete((_, error) => {
      latency.update(System.nanoTime() - start, TimeUnit.NANOSECONDS)
      if (error == null) {
        byteCount.inc(bytes)
        chunkCount.inc()
      } else {
        failures.inc()
      }
    })
  }
}
