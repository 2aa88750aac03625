// What the three map writers of an RPMP shuffle share (RpmpShuffleWriter,
// RpmpSortShuffleWriter, RpmpBypassShuffleWriter): the MapTask they are built from, the
// fields derived from its handle, the row checksums, Spark's stream wrapping and the
// ChunkAppender every writer's chunks go through, the per-partition data sizes that go into
// the MapStatus, and stop(): the MapStatus of a successful attempt (None otherwise), then,
// once, the writer's own release() of what it holds. Subclassed only by those writers,
// which RpmpShuffleManager.getWriter creates; the companion object builds the MapStatus and
// its synthetic location.
package org.apache.spark.shuffle.rpmp

import java.io.OutputStream

import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.internal.Logging
import org.apache.spark.scheduler.MapStatus
import org.apache.spark.shuffle.{ShuffleWriteMetricsReporter, ShuffleWriter}
import org.apache.spark.storage.{BlockManagerId, ShuffleBlockId}

/** What RpmpShuffleManager.getWriter gives a map writer. */
private[spark] final class MapTask[K, V, C](
    val handle: RpmpShuffleHandle[K, V, C],
    val mapId: Long, // Spark passes context.taskAttemptId(): unique per attempt
    val context: TaskContext,
    val metrics: ShuffleWriteMetricsReporter,
    val clients: RpmpClientCache,
    val conf: RpmpConf)

private[spark] abstract class RpmpMapWriter[K, V, C](task: MapTask[K, V, C])
  extends ShuffleWriter[K, V] with Logging {

  protected val mapId: Long = task.mapId
  protected val context: TaskContext = task.context
  protected val metrics: ShuffleWriteMetricsReporter = task.metrics
  protected val conf: RpmpConf = task.conf
  protected val dep = task.handle.dependency
  protected val coords = task.handle.coordinates
  protected val numPartitions: Int = dep.partitioner.numPartitions
  // One per partition when Spark asks for row checksums (SQL shuffles, Spark 4.1+), else None.
  protected val rowChecksums: Option[RowChecksums] = SparkCompat.rowChecksums(dep)
  // Data bytes (chunk headers excluded) pushed per partition: the MapStatus sizes.
  protected var partitionLengths = new Array[Long](numPartitions)
  private var stopping = false

  /** The input records, each added to the row checksums (like Spark's writers: before combine). */
  protected def checksummed(input: Iterator[Product2[K, V]]): Iterator[Product2[K, V]] =
    RowChecksums.tap(input, rowChecksums, dep.partitioner.getPartition)

  /** Spark's compression (and encryption) around one chunk's bytes of partition p. */
  protected def wrapStream(p: Int, out: OutputStream): OutputStream =
    SparkEnv.get.serializerManager.wrapStream(ShuffleBlockId(coords.shuffleId, mapId, p), out)

  /**
   * The appender of this attempt's chunks, pooling buffers of `bufferBytes`; with
   * `awaitWindowOnPush` every push waits for the in-flight window (ChunkAppender).
   */
  protected def newAppender(bufferBytes: Int, awaitWindowOnPush: Boolean = false): ChunkAppender =
    new ChunkAppender(coords, mapId, task.clients, conf, metrics, numPartitions, bufferBytes,
      awaitWindowOnPush)

  /** Frees what the writer holds (buffers, pages, streams, pushes); called once, by stop. */
  protected def release(): Unit

  override final def stop(success: Boolean): Option[MapStatus] = {
    if (stopping) return None
    stopping = true
    try {
      RpmpMapWriter.mapStatus(success, coords, mapId, partitionLengths, rowChecksums)
    } finally {
      release()
    }
  }

  override final def getPartitionLengths(): Array[Long] = partitionLengths
}

private[spark] object RpmpMapWriter {
  /**
   * What a map writer's stop(success) reports: the MapStatus with the data-byte sizes and
   * the row checksum (0 without one) when the attempt succeeded; None otherwise, so what
   * the attempt appended is in no MapStatus and readers ignore it.
   */
  def mapStatus(
      success: Boolean,
      coords: RpmpShuffleCoordinates,
      mapId: Long,
      partitionLengths: Array[Long],
      rowChecksums: Option[RowChecksums]): Option[MapStatus] =
    if (!success) None
    else Some(MapStatuses(location(coords, mapId), partitionLengths, mapId,
      rowChecksums.map(_.aggregated).getOrElse(0L)))

  /** Host of every RPMP MapStatus location: no executor, worker or RPMP node has it. */
  val SyntheticHost = "rpmp-shuffle.invalid"

  /**
   * The MapStatus location of a map output stored in RPMP: executor id
   * "rpmp-shuffle-<shuffleId>" and host SyntheticHost, which name no real executor or host, so
   *  - losing an executor (removal by executor id) or a Standalone worker or host (removal by
   *    host) never unregisters RPMP outputs, and reduce tasks get no false locality;
   *  - a FetchFailed (data missing in RPMP) makes the DAGScheduler drop every output of this one
   *    shuffle (it removes all outputs of the failing location's executor id), so the map stage
   *    is recomputed in one go rather than one map per stage attempt.
   */
  def location(coords: RpmpShuffleCoordinates, mapId: Long): BlockManagerId =
    BlockManagerId(s"rpmp-shuffle-${coords.shuffleId}", SyntheticHost, 1)
}
