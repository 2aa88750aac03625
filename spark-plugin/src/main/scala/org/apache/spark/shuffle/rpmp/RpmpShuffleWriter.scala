// Map task side of an RPMP shuffle: partitions the records, serializes them into
// PartitionBuffers and appends every full buffer to RPMP object <partitionId> of the
// shuffle's namespace, tagged with this map attempt's id, as one chunk (ShuffleChunk:
// header stamped in place with seq, cumulative data bytes and LAST on the final chunk).
// stop(true) waits for all appends and reports each partition's data bytes in a MapStatus
// whose location is synthetic (it does not die with this executor), with Spark's
// order-independent row checksum of the input records (dep.rowBasedChecksums, Spark 4.1+)
// so Spark can tell a non-deterministic rerun (RpmpMapWriter). Created by
// RpmpShuffleManager.getWriter for map-side-combining shuffles and serializers without
// relocation.
package org.apache.spark.shuffle.rpmp

import java.io.{IOException, OutputStream}
import java.nio.ByteBuffer
import java.util.concurrent.{CompletableFuture, TimeUnit}

import scala.collection.mutable

import org.apache.spark.{SparkEnv, TaskContext}
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter
import org.apache.spark.storage.ShuffleBlockId

private[spark] class RpmpShuffleWriter[K, V, C](
    handle: RpmpShuffleHandle[K, V, C],
    mapId: Long, // Spark passes context.taskAttemptId(): unique per attempt
    context: TaskContext,
    metrics: ShuffleWriteMetricsReporter,
    clients: RpmpClientCache,
    conf: RpmpConf)
  extends RpmpMapWriter[K, V, C](handle, mapId) {

  private val nextSeq = new Array[Int](numPartitions)
  private val sawLast = new Array[Boolean](numPartitions)
  private val serializerInstance = dep.serializer.newInstance()
  private val serializerManager = SparkEnv.get.serializerManager
  private val pending = mutable.Queue.empty[(Int, CompletableFuture[Void])]
  private var buffers: PartitionBuffers = _

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
        coords.namespaceOf(partition), coords.partitionKey(partition),
        ByteBuffer.wrap(bytes, 0, length), mapId)
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

  override protected def release(): Unit = {
    if (buffers != null) buffers.releaseAll()
    pending.clear()
  }
}
