// What the three map writers of an RPMP shuffle share (RpmpShuffleWriter,
// RpmpSortShuffleWriter, RpmpBypassShuffleWriter): the fields derived from the handle, the
// row checksums, the per-partition data sizes that go into the MapStatus, and stop(): the
// MapStatus of a successful attempt (None otherwise), then, once, the writer's own release()
// of what it holds. Subclassed only by those writers, which RpmpShuffleManager.getWriter
// creates; the companion object builds the MapStatus and its synthetic location.
package org.apache.spark.shuffle.rpmp

import org.apache.spark.internal.Logging
import org.apache.spark.scheduler.MapStatus
import org.apache.spark.shuffle.ShuffleWriter
import org.apache.spark.storage.BlockManagerId

private[spark] abstract class RpmpMapWriter[K, V, C](
    handle: RpmpShuffleHandle[K, V, C],
    mapId: Long) // Spark passes context.taskAttemptId(): unique per attempt
  extends ShuffleWriter[K, V] with Logging {

  protected val dep = handle.dependency
  protected val coords = handle.coordinates
  protected val numPartitions: Int = dep.partitioner.numPartitions
  // One per partition when Spark asks for row checksums (SQL shuffles, Spark 4.1+), else None.
  protected val rowChecksums: Option[RowChecksums] = SparkCompat.rowChecksums(dep)
  // Data bytes (chunk headers excluded) pushed per partition: the MapStatus sizes.
  protected var partitionLengths = new Array[Long](numPartitions)
  private var stopping = false

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
