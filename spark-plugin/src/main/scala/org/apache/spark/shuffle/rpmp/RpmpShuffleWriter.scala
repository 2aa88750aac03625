// Map task side of an RPMP shuffle: partitions the records, serializes them into
// PartitionBuffers and appends every full buffer to RPMP object <partitionId> of the
// shuffle's namespace, tagged with this map attempt's id. stop(true) waits for all
// appends and reports exact per-partition sizes in a MapStatus whose location is the
// RPMP server (it does not die with this executor). Created by RpmpShuffleManager.getWriter.
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
  private val partitionLengths = new Array[Long](numPartitions)
  private val serializerInstance = dep.serializer.newInstance()
  private val serializerManager = SparkEnv.get.serializerManager
  private val pending = mutable.Queue.empty[(Int, CompletableFuture[Void])]
  private var buffers: PartitionBuffers = _
  private var stopping = false

  private def openStream(partition: Int, sink: OutputStream) = {
    val blockId = ShuffleBlockId(coords.shuffleId, mapId, partition)
    serializerInstance.serializeStream(serializerManager.wrapStream(blockId, sink))
  }

  /** Appends one chunk (copied into registered memory before returning). */
  private def push(partition: Int, bytes: Array[Byte], length: Int): Unit = {
    val start = System.nanoTime()
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
    pending.enqueue((partition, future))
    partitionLengths(partition) += length
    metrics.incBytesWritten(length)
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
    val iter: Iterator[Product2[Any, Any]] = if (dep.mapSideCombine) {
      dep.aggregator.get.combineValuesByKey(records, context)
    } else {
      records
    }
    while (iter.hasNext) {
      val record = iter.next()
      buffers.write(partitioner.getPartition(record._1), record._1, record._2)
      metrics.incRecordsWritten(1)
    }
    buffers.flushAll()
    val start = System.nanoTime()
    while (pending.nonEmpty) awaitOldest()
    metrics.incWriteTime(System.nanoTime() - start)
  }

  override def stop(success: Boolean): Option[MapStatus] = {
    if (stopping) return None
    stopping = true
    try {
      if (success) {
        Some(MapStatus(RpmpShuffleWriter.location(coords, mapId), partitionLengths, mapId))
      } else {
        None // what this attempt appended is ignored: its id is in no MapStatus
      }
    } finally {
      if (buffers != null) buffers.releaseAll()
      pending.clear()
    }
  }

  override def getPartitionLengths(): Array[Long] = partitionLengths
}

private[spark] object RpmpShuffleWriter {
  /**
   * The MapStatus location of a map output stored in RPMP. The host and port are the RPMP server's
   * (the data lives there); the executor id names the shuffle, "rpmp-shuffle-<shuffleId>", and no
   * real executor, so that
   *  - losing an executor never unregisters RPMP outputs (the DAGScheduler removes outputs by the
   *    lost executor's id, or by a lost Standalone worker's host), and
   *  - a FetchFailed (data missing in RPMP) makes the DAGScheduler drop every output of this one
   *    shuffle (it removes all outputs of the failing location's executor id), so the map stage
   *    is recomputed in one go rather than one map per stage attempt.
   */
  def location(coords: RpmpShuffleCoordinates, mapId: Long): BlockManagerId = {
    val (host, port) = coords.locationHostPort
    BlockManagerId(s"rpmp-shuffle-${coords.shuffleId}", host, port)
  }
}
