// Map task side of an RPMP shuffle for map-side-combining shuffles and serializers without
// relocation: partitions the records and serializes them into PartitionBuffers, whose
// chunks are sinks of this attempt's ChunkAppender (registered memory), so every full
// chunk is appended, zero-copy, to RPMP object <partitionId> of the shuffle's namespace,
// tagged with this map attempt's id (ShuffleChunk: header stamped in place with seq,
// cumulative data bytes and LAST on the final chunk). stop(true) waits for all appends and
// reports each partition's data bytes in a MapStatus whose location is synthetic (it does
// not die with this executor), with Spark's order-independent row checksum of the input
// records (dep.rowBasedChecksums, Spark 4.1+) so Spark can tell a non-deterministic rerun
// (RpmpMapWriter). Created by RpmpShuffleManager.getWriter when neither the bypass nor the
// sort path applies (spark.rpmp.writer.path=buffers, or map-side combine).
package org.apache.spark.shuffle.rpmp

import org.apache.spark.util.Utils

private[spark] class RpmpShuffleWriter[K, V, C](task: MapTask[K, V, C])
  extends RpmpMapWriter[K, V, C](task) {

  private var appender: ChunkAppender = _
  private var buffers: PartitionBuffers[RegisteredSink] = _

  override def write(records: Iterator[Product2[K, V]]): Unit = {
    // PartitionBuffers releases a sink's task memory when it pushes it: the window on
    // every push keeps what is released but still in flight bounded.
    appender = newAppender(conf.pushBufferSize + ChunkPusher.Slack, awaitWindowOnPush = true)
    val serializer = dep.serializer.newInstance()
    buffers = new PartitionBuffers(context.taskMemoryManager(), numPartitions,
      conf.pushBufferSize, (p, sink) => serializer.serializeStream(wrapStream(p, sink)),
      appender)
    val partitioner = dep.partitioner
    val input = checksummed(records)
    val iter: Iterator[Product2[Any, Any]] = if (dep.mapSideCombine) {
      dep.aggregator.get.combineValuesByKey(input, context)
    } else {
      input
    }
    var count = 0L
    while (iter.hasNext) {
      val record = iter.next()
      buffers.write(partitioner.getPartition(record._1), record._1, record._2)
      count += 1
    }
    metrics.incRecordsWritten(count)
    buffers.finish()
    appender.finish()
    partitionLengths = appender.partitionLengths
  }

  override protected def release(): Unit = {
    if (buffers != null) Utils.tryLogNonFatalError(buffers.releaseAll())
    if (appender != null) Utils.tryLogNonFatalError(appender.release())
  }
}
