// Map side of an RPMP shuffle for map-side-combining shuffles and serializers without
// relocation: one open chunk per reduce partition, each a sink of a ChunkSinks (in the
// plugin the ChunkAppender: registered memory, the chunk header's bytes left at its start,
// so nothing is copied on the way to RPMP). A chunk that reaches the push size, or every
// one when Spark asks this consumer to spill, is closed and handed to ChunkSinks.pushSink;
// finish() pushes the rest with last = true, then asks for the header-only LAST chunks of
// partitions that have nothing left. What the sinks hold is accounted as the task's
// execution memory (the pool Spark bounds per task), so Spark's limits bound how much a
// task buffers. Used only by RpmpShuffleWriter (task thread).
package org.apache.spark.shuffle.rpmp

import java.io.OutputStream

import org.apache.spark.memory.{MemoryConsumer, MemoryMode, TaskMemoryManager}
import org.apache.spark.serializer.SerializationStream

/**
 * @param openStream wraps a partition's sink into a new serialization stream (compression
 *                   included); called lazily at the first record of each chunk
 * @param chunks     gives the sinks and appends the full ones
 */
private[rpmp] class PartitionBuffers[S <: ChunkSink](
    taskMemoryManager: TaskMemoryManager,
    numPartitions: Int,
    pushBufferSize: Int,
    openStream: (Int, OutputStream) => SerializationStream,
    chunks: ChunkSinks[S])
  extends MemoryConsumer(taskMemoryManager, MemoryMode.ON_HEAP) {

  private val sinks = new Array[ChunkSink](numPartitions)
  private val streams = new Array[SerializationStream](numPartitions)
  // Partitions that filled a chunk before: their next sinks start at the full size.
  private val filledBefore = new Array[Boolean](numPartitions)
  private val firstSinkBytes = math.min(pushBufferSize, 64 << 10) + ShuffleChunk.HeaderSize
  private val memoryChunk = math.max(pushBufferSize.toLong, 1L << 20)
  private var granted = 0L
  // Sum of the open sinks' capacities, kept up to date per write (O(1), not a scan per record).
  private var held = 0L
  private var inSpillableSection = false

  def write(partition: Int, key: Any, value: Any): Unit = {
    var stream = streams(partition)
    if (stream == null) {
      val sink = chunks.openSink(partition, if (filledBefore(partition)) 0 else firstSinkBytes)
      sinks(partition) = sink
      held += sink.capacity
      stream = openStream(partition, sink)
      streams(partition) = stream
    }
    val sink = sinks(partition)
    val before = sink.capacity
    stream.writeKey(key)
    stream.writeValue(value)
    held += sink.capacity - before
    if (sink.size - ShuffleChunk.HeaderSize >= pushBufferSize) {
      filledBefore(partition) = true
      flush(partition)
    }
    if (held > granted) ensureMemory()
  }

  /** Memory held by the open sinks (their capacity). */
  def bufferedBytes: Long = held

  /** Gets task memory for what is buffered; pushes the largest chunks when refused. */
  private def ensureMemory(): Unit = {
    while (held > granted) {
      inSpillableSection = true
      val got = try acquireMemory(memoryChunk) finally inSpillableSection = false
      granted += got
      if (got < memoryChunk) {
        flushLargest()
        if (held > granted && !sinks.exists(_ != null)) {
          return // nothing left to push: keep going on what we have
        }
      }
    }
  }

  private def flushLargest(): Unit = {
    var best = -1
    var bestSize = 0
    for (p <- sinks.indices) {
      val s = sinks(p)
      if (s != null && s.size > bestSize) {
        best = p
        bestSize = s.size
      }
    }
    if (best >= 0) flush(best)
  }

  /** Closes partition p's open chunk, if any, and pushes it (`last`: its final one). */
  def flush(partition: Int, last: Boolean = false): Unit = {
    val stream = streams(partition)
    if (stream != null) {
      stream.close()
      streams(partition) = null
      val sink = sinks(partition).asInstanceOf[S]
      sinks(partition) = null
      held -= sink.capacity
      if (sink.size > ShuffleChunk.HeaderSize) chunks.pushSink(partition, sink, last)
      else sink.discard()
    }
  }

  /** Pushes every partition's buffered data (not as final chunks: a spill). */
  def flushAll(): Unit = {
    for (p <- chunks.pushOrder(numPartitions)) flush(p)
  }

  /** Pushes every partition's final chunk (after the last record). */
  def finish(): Unit = {
    for (p <- chunks.pushOrder(numPartitions)) flush(p, last = true)
    chunks.pushMissingLasts()
  }

  /** Called by the task memory manager when another consumer needs memory. */
  override def spill(size: Long, trigger: MemoryConsumer): Long = {
    if (trigger eq this) {
      0L // our own request: ensureMemory pushes buffers itself
    } else if (inSpillableSection) {
      0L
    } else {
      flushAll()
      releaseAll()
    }
  }

  /** Returns all task memory; open sinks are dropped unsent (after flushAll, or on failure). */
  def releaseAll(): Long = {
    for (p <- sinks.indices) {
      if (sinks(p) != null) sinks(p).discard()
      sinks(p) = null
      streams(p) = null
    }
    held = 0
    val freed = granted
    if (granted > 0) freeMemory(granted)
    granted = 0
    freed
  }
}
