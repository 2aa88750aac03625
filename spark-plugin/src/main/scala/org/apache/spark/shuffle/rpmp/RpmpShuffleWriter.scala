// Map task side of an RPMP shuffle: partitions the records, serializes them into
// PartitionBuffers and appends every full buffer to RPMP object <partitionId> of the
// shuffle's namespace, tagged with this map attempt's id, as one chunk (ShuffleChunk:
// header stamped in place with seq, cumulative data bytes and LAST on the final chunk).
// stop(true) waits for all appends and reports each partition's data bytes in a MapStatus
// whose location is synthetic (it does not die with this executor), with Spark's
// order-independent row checksum of the input records (dep.rowBasedChecksums, Spark 4.1+)
// so Spark can tell a non-deterministic rerun. Created by RpmpShuffleManager.getWriter.
package org.apache.spark.shuffle.rpmp

import java.io.{IOException, OutputStream}
import java.nio.ByteBuffer
import java.util.concurrent.{CompletableFuture, TimeUnit}

import scala.collection.mutable

import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.internal.Logging
import org.apache.spark.scheduler.MapStatus
import org.apache.spark.shuffle.{ShuffleWriteMetricsReporter, ShuffleWriter}
import org.apache.spark.storage.{BlockManagerId, ShuffleBlockId}

private[spark] class RpmpShuffleWriter[K, V, C](
    handle: RpmpShuffleHandle[K, V, C],
    mapId: Long, // Spark passes context.taskAttemptId(): unique per attempt
    context: TaskContext,
    metrics: ShuffleWriteMetricsReporter,
    clients: RpmpClientCache,
    conf: RpmpConf)
  extends ShuffleWriter[K, V] with Logging {

  private val dep = handle.dependency
  private val coords = handle.coordinates
  private val numPartitions = dep.partitioner.numPartitions
  // Data bytes (chunk headers excluded) pushed per partition: the MapStatus sizes.
  private val partitionLengths = new Array[Long](numPartitions)
  private val nextSeq = new Array[Int](numPartitions)
  private val sawLast = new Array[Boolean](numPartitions)
  private val serializerInstance = dep.serializer.newInstance()
  private val serializerManager = SparkEnv.get.serializerManager
  private val pending = mutable.Queue.empty[(Int, CompletableFuture[Void])]
  // One per partition when Spark asks for row checksums (SQL shuffles, Spark 4.1+), else empty.
  private val rowChecksums: Option[RowChecksums] = SparkCompat.rowChecksums(dep)
  private var buffers: PartitionBuffers = _
  private var stopping = false

  private def openStream(partition: Int, sink: OutputStream) = {
    val blockId = ShuffleBlockId(coords.shuffleId, mapId, partition)
    serializerInstance.serializeStream(serializerManager.wrapStream(blockId, sink))
  }

  /**
   * Stamps the chunk header into bytes[0, 32) and appends bytes[0, length) as one chunk
   * (copied into registered memory before returning). `last`: the partition's final chunk.
   */
  private def push(partition: Int, bytes: Array[Byte], length: Int, last: Boolean): Unit = {
    val start = System.nanoTime()
    require(!sawLast(partition), s"partition $partition pushed after its LAST chunk")
    val dataLength = length - ShuffleChunk.HeaderSize
    require(dataLength >= 0, s"chunk of $length bytes has no header")
    val cumulative = partitionLengths(partition) + dataLength
    ShuffleChunk.writeHeader(bytes, partition, nextSeq(partition), cumulative, mapId, last)
    while (pending.size >= conf.maxPushesInFlight) awaitOldest()
    val server = coords.serverFor(partition)
    val future = try {
      clients.get(server).appendAsync(
        coords.namespace, coords.partitionKey(partition), ByteBuffer.wrap(bytes, 0, length), mapId)
    } catch {
      case e: IOException =>
        clients.invalidateOn(server, e)
        throw e
    }
    RpmpMetrics.appendIssued(future, dataLength)
    pending.enqueue((partition, future))
    nextSeq(partition) += 1
    sawLast(partition) = last
    partitionLengths(partition) = cumulative
    metrics.incBytesWritten(dataLength)
    metrics.incWriteTime(System.nanoTime() - start)
  }

  private def awaitOldest(): Unit = {
    val (partition, future) = pending.dequeue()
    try {
      future.get(conf.callTimeoutMs * 2 + 10000, TimeUnit.MILLISECONDS)
    } catch {
      case e: java.util.concurrent.ExecutionException =>
        val cause = e.getCause
        clients.invalidateOn(coords.serverFor(partition), cause)
        throw new IOException(
          s"RPMP append of shuffle ${coords.shuffleId} partition $partition failed: $cause", cause)
      case e: java.util.concurrent.TimeoutException =>
        throw new IOException(s"RPMP append of partition $partition did not complete", e)
    }
  }

  override def write(records: Iterator[Product2[K, V]]): Unit = {
    buffers = new PartitionBuffers(
      context.taskMemoryManager(), numPartitions, conf.pushBufferSize, openStream, push)
    val partitioner = dep.partitioner
    // Like Spark's writers: the checksum covers the input records, before map-side combine.
    val input = RowChecksums.tap(records, rowChecksums, partitioner.getPartition)
    val iter: Iterator[Product2[Any, Any]] = if (dep.mapSideCombine) {
      dep.aggregator.get.combineValuesByKey(input, context)
    } else {
      input
    }
    while (iter.hasNext) {
      val record = iter.next()
      buffers.write(partitioner.getPartition(record._1), record._1, record._2)
      metrics.incRecordsWritten(1)
    }
    buffers.finish()
    for (p <- 0 until numPartitions if nextSeq(p) > 0 && !sawLast(p)) {
      throw new IllegalStateException(s"partition $p of map $mapId has no LAST chunk")
    }
    val start = System.nanoTime()
    while (pending.nonEmpty) awaitOldest()
    metrics.incWriteTime(System.nanoTime() - start)
  }

  override def stop(success: Boolean): Option[MapStatus] = {
    if (stopping) return None
    stopping = true
    try {
      RpmpShuffleWriter.mapStatus(success, coords, mapId, partitionLengths, rowChecksums)
    } finally {
      if (buffers != null) buffers.releaseAll()
      pending.clear()
    }
  }

  override def getPartitionLengths(): Array[Long] = partitionLengths
}

private[spark] object RpmpShuffleWriter {
  /**
   * What a map writer's stop(success) reports, for both writers: the MapStatus with the
   * data-byte sizes and the row checksum (0 without one) when the attempt succeeded; None
   * otherwise, so what the attempt appended is in no MapStatus and readers ignore it.
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
