// Map task side of an RPMP shuffle with few partitions (at most Spark's
// spark.shuffle.sort.bypassMergeThreshold, 200 by default) and no map-side combine: like
// Spark's BypassMergeSortShuffleWriter, one serialization stream per partition and no sort
// and no copy into pages. Each partition's stream (Spark's compression/encryption
// included) writes straight into a registered buffer (ChunkAppender.openSink); when it holds
// a chunk's worth (spark.rpmp.writer.bypassChunkSize) at a record boundary the stream is
// closed and the chunk appended zero-copy while the task goes on. Memory: at most one
// buffer per partition plus the pushes in flight, in native memory reused across tasks, and
// no execution memory (as Spark's own bypass path). stop(true) reports exact per-partition
// sizes like the other writers. Created by RpmpShuffleManager.getWriter when
// RpmpBypassShuffleWriter.canUse (or spark.rpmp.writer.path=bypass).
package org.apache.spark.shuffle.rpmp

import org.apache.spark.{ShuffleDependency, SparkEnv}
import org.apache.spark.serializer.SerializationStream
import org.apache.spark.util.Utils

private[spark] class RpmpBypassShuffleWriter[K, V, C](task: MapTask[K, V, C])
  extends RpmpMapWriter[K, V, C](task) {

  private val sinks = new Array[RegisteredSink](numPartitions)
  private val streams = new Array[SerializationStream](numPartitions)
  private var appender: ChunkAppender = _

  override def write(input: Iterator[Product2[K, V]]): Unit = {
    val records = checksummed(input)
    appender = newAppender(RpmpBypassShuffleWriter.bufferBytes(conf))
    val serializer = dep.serializer.newInstance()
    val partitioner = dep.partitioner
    val chunkBytes = conf.bypassChunkBytes + ShuffleChunk.HeaderSize
    var count = 0L
    while (records.hasNext) {
      val record = records.next()
      val p = partitioner.getPartition(record._1)
      var stream = streams(p)
      if (stream == null) {
        val sink = appender.openSink(p)
        sinks(p) = sink
        stream = serializer.serializeStream(wrapStream(p, sink))
        streams(p) = stream
      }
      stream.writeKey(record._1.asInstanceOf[Any])
      stream.writeValue(record._2.asInstanceOf[Any])
      count += 1
      // Chunks end at record boundaries: each is a stream the reader decodes on its own.
      if (sinks(p).size >= chunkBytes) closeChunk(p, last = false)
    }
    metrics.incRecordsWritten(count)
    val order = appender.pushOrder(numPartitions) // each primary's last chunks in one burst
    var i = 0
    while (i < order.length) {
      val p = order(i)
      if (streams(p) != null) closeChunk(p, last = true)
      i += 1
    }
    appender.pushMissingLasts()
    appender.finish()
    partitionLengths = appender.partitionLengths
  }

  private def closeChunk(p: Int, last: Boolean): Unit = {
    streams(p).close()
    streams(p) = null
    val sink = sinks(p)
    sinks(p) = null
    appender.pushSink(p, sink, last)
  }

  override protected def release(): Unit = {
    var p = 0
    while (p < numPartitions) {
      if (streams(p) != null) {
        Utils.tryLogNonFatalError(streams(p).close())
        streams(p) = null
      }
      if (sinks(p) != null) {
        Utils.tryLogNonFatalError(sinks(p).buffer.close())
        sinks(p) = null
      }
      p += 1
    }
    if (appender != null) Utils.tryLogNonFatalError(appender.release())
  }
}

private[spark] object RpmpBypassShuffleWriter {
  /** Spark's own condition for its bypass-merge path: few partitions, no map-side combine. */
  def canUse(dep: ShuffleDependency[_, _, _]): Boolean = {
    val threshold = SparkEnv.get.conf.getInt("spark.shuffle.sort.bypassMergeThreshold", 200)
    !dep.mapSideCombine && dep.partitioner.numPartitions <= threshold
  }

  /** Room past the chunk size for the compressor's last block and the record crossing it. */
  val Slack: Int = 64 << 10

  /** Capacity of a partition's buffer (192k chunks: 256 KiB, one size class of librpmp). */
  def bufferBytes(conf: RpmpConf): Int = conf.bypassChunkBytes + Slack
}
