// Map side of an RPMP shuffle: one serialized (and compressed) byte buffer per reduce
// partition, accounted to Spark's task memory manager. Each buffer starts with
// ShuffleChunk.HeaderSize bytes reserved for the chunk header, so the writer stamps it in
// place (no copy). A buffer that reaches the push size, or all of them when Spark asks this
// consumer to spill, is closed as one self-contained chunk and handed to `push`; finish()
// pushes the rest with last = true (a header-only chunk for a partition that pushed before
// and has nothing left). Used only by RpmpShuffleWriter (task thread).
package org.apache.spark.shuffle.rpmp

import java.io.OutputStream

import org.apache.spark.memory.{MemoryConsumer, MemoryMode, TaskMemoryManager}
import org.apache.spark.serializer.SerializationStream

/**
 * A growable byte array exposed without copying (an OutputStream sink). Its first `reserved`
 * bytes are left for a header: writes start after them.
 */
private[rpmp] final class ByteSink(initial: Int, reserved: Int = ShuffleChunk.HeaderSize)
  extends OutputStream {
  private var buf = new Array[Byte](math.max(initial, 64) + reserved)
  private var count = reserved

  /** Bytes in array(), header space included. */
  def size: Int = count
  /** Bytes written after the header space. */
  def dataSize: Int = count - reserved
  def array: Array[Byte] = buf
  def reset(): Unit = count = reserved
  def capacity: Int = buf.length

  private def ensure(extra: Int): Unit = {
    if (count + extra > buf.length) {
      val grown = math.max(buf.length.toLong * 2, count.toLong + extra)
      require(grown <= Int.MaxValue - 16, "partition buffer over 2 GiB")
      buf = java.util.Arrays.copyOf(buf, grown.toInt)
    }
  }

  override def write(b: Int): Unit = {
    ensure(1)
    buf(count) = b.toByte
    count += 1
  }

  override def write(b: Array[Byte], off: Int, len: Int): Unit = {
    ensure(len)
    System.arraycopy(b, off, buf, count, len)
    count += len
  }

  override def close(): Unit = {} // the bytes stay until reset()
}

/**
 * @param openStream wraps a partition's sink into a new serialization stream (compression
 *                   included); called lazily at the first record of each chunk
 * @param push       takes a finished chunk (partition, bytes, length, last): bytes[0, 32) is
 *                   header space for the caller to stamp, bytes[32, length) the data; the array
 *                   is reused after it returns, so push must copy or send synchronously
 */
private[rpmp] class PartitionBuffers(
    taskMemoryManager: TaskMemoryManager,
    numPartitions: Int,
    pushBufferSize: Int,
    openStream: (Int, OutputStream) => SerializationStream,
    push: (Int, Array[Byte], Int, Boolean) => Unit)
  extends MemoryConsumer(taskMemoryManager, MemoryMode.ON_HEAP) {

  private val sinks = new Array[ByteSink](numPartitions)
  private val streams = new Array[SerializationStream](numPartitions)
  // Partitions that pushed a chunk already (their final chunk must carry LAST).
  private val pushedBefore = new Array[Boolean](numPartitions)
  private val memoryChunk = math.max(pushBufferSize.toLong, 1L << 20)
  private var granted = 0L
  // Sum of the sinks' capacities, kept up to date per write (O(1), not a scan per record).
  private var held = 0L
  private var inSpillableSection = false

  def write(partition: Int, key: Any, value: Any): Unit = {
    var stream = streams(partition)
    if (stream == null) {
      if (sinks(partition) == null) {
        sinks(partition) = new ByteSink(math.min(pushBufferSize, 64 << 10))
        held += sinks(partition).capacity
      }
      stream = openStream(partition, sinks(partition))
      streams(partition) = stream
    }
    val sink = sinks(partition)
    val before = sink.capacity
    stream.writeKey(key)
    stream.writeValue(value)
    held += sink.capacity - before
    if (sink.dataSize >= pushBufferSize) {
      flush(partition)
    }
    if (held > granted) ensureMemory()
  }

  /** Heap held by the sinks (their arrays' capacity). */
  def bufferedBytes: Long = held

  /** Gets task memory for what is buffered; pushes the largest buffers when refused. */
  private def ensureMemory(): Unit = {
    var used = bufferedBytes
    while (used > granted) {
      inSpillableSection = true
      val got = try acquireMemory(memoryChunk) finally inSpillableSection = false
      granted += got
      if (got < memoryChunk) {
        flushLargest()
        dropIdleSinks()
        used = bufferedBytes
        if (used > granted && !sinks.exists(s => s != null && s.dataSize > 0)) {
          return // nothing left to push: keep going on what we have
        }
      }
      used = bufferedBytes
    }
  }

  private def flushLargest(): Unit = {
    var best = -1
    var bestSize = 0
    for (p <- sinks.indices) {
      val s = sinks(p)
      if (s != null && s.dataSize > bestSize) {
        best = p
        bestSize = s.dataSize
      }
    }
    if (best >= 0) flush(best)
  }

  /**
   * Closes partition p's stream and pushes its bytes as one chunk. With `last`, the chunk is
   * the partition's final one: a partition that pushed before and has no data left pushes a
   * header-only chunk; one that never had data pushes nothing.
   */
  def flush(partition: Int, last: Boolean = false): Unit = {
    val stream = streams(partition)
    var pushed = false
    if (stream != null) {
      stream.close()
      streams(partition) = null
      val sink = sinks(partition)
      if (sink.dataSize > 0) {
        push(partition, sink.array, sink.size, last)
        pushed = true
      }
      sink.reset()
    }
    if (last && !pushed && pushedBefore(partition)) {
      push(partition, new Array[Byte](ShuffleChunk.HeaderSize), ShuffleChunk.HeaderSize, true)
      pushed = true
    }
    if (pushed) pushedBefore(partition) = true
  }

  /** Pushes every partition's buffered data (not as final chunks: a spill). */
  def flushAll(): Unit = {
    for (p <- 0 until numPartitions) flush(p)
  }

  /** Pushes every partition's final chunk (after the last record). */
  def finish(): Unit = {
    for (p <- 0 until numPartitions) flush(p, last = true)
  }

  /** Frees sinks that hold no data so their heap goes back. */
  private def dropIdleSinks(): Unit = {
    for (p <- sinks.indices) {
      if (sinks(p) != null && streams(p) == null) {
        held -= sinks(p).capacity
        sinks(p) = null
      }
    }
  }

  /** Called by the task memory manager when another consumer needs memory. */
  override def spill(size: Long, trigger: MemoryConsumer): Long = {
    if (trigger eq this) {
      0L // our own request: ensureMemory pushes buffers itself
    } else if (inSpillableSection) {
      0L
    } else {
      flushAll()
      dropIdleSinks()
      releaseAll()
    }
  }

  /** Returns all task memory; the sinks are dropped (call after flushAll or on failure). */
  def releaseAll(): Long = {
    for (p <- sinks.indices) {
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
