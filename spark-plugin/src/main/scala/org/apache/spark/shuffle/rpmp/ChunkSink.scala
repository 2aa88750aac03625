// Where a map writer's chunk bytes go before they are appended (ShuffleChunk format,
// docs/append-path.md section 2): a ChunkSink is an OutputStream whose first
// ShuffleChunk.HeaderSize bytes are left for the header the appender stamps; ChunkSinks
// hands sinks out and takes full ones back to append them. ChunkAppender is the one real
// ChunkSinks, with RegisteredSinks in registered memory (no copy on the way to RPMP); unit
// tests of PartitionBuffers use heap sinks. Task thread only.
package org.apache.spark.shuffle.rpmp

import java.io.OutputStream

import io.rpmp.client.RpmpBuffer

/** One chunk being written: bytes [0, HeaderSize) are the header's, data follows. */
private[rpmp] abstract class ChunkSink extends OutputStream {
  /** Bytes written, header space included. */
  def size: Int

  /** Bytes it holds before it has to grow. */
  def capacity: Int

  /** Drops the chunk unsent: its memory goes back. */
  def discard(): Unit
}

/** Sinks for one map attempt's partitions, and the appends of the full ones. */
private[rpmp] trait ChunkSinks[S <: ChunkSink] {
  /**
   * A sink for partition p's next chunk; sizeHint > 0 asks for about that many bytes first
   * (a partition whose size is not known yet), 0 for the appender's full buffer size.
   */
  def openSink(p: Int, sizeHint: Int = 0): S

  /** Appends what `sink` holds as partition p's next chunk; the sink is the appender's now. */
  def pushSink(p: Int, sink: S, last: Boolean): Unit

  /**
   * After a map attempt's last record: a header-only LAST chunk for every partition that
   * pushed chunks but not yet its LAST one (its data all went out in earlier chunks).
   */
  def pushMissingLasts(): Unit

  /**
   * The order in which a writer pushes many of its `numPartitions` partitions at once:
   * ChunkAppender goes group by group, so each primary gets its appends in one burst.
   */
  def pushOrder(numPartitions: Int): Array[Int] = Array.range(0, numPartitions)
}

/**
 * A ChunkSink in registered memory, writing from `start`; grows (new buffer, one copy) when
 * a chunk overshoots its buffer, which the slack of the pooled buffers makes rare.
 */
private[rpmp] final class RegisteredSink(
    var buffer: RpmpBuffer, start: Int, grow: Int => RpmpBuffer) extends ChunkSink {
  private var view = buffer.byteBuffer()
  private var pos = start

  override def size: Int = pos

  override def capacity: Int = view.capacity()

  override def discard(): Unit = buffer.close()

  private def ensure(extra: Int): Unit = {
    if (pos.toLong + extra > view.capacity()) {
      val needed = math.max(view.capacity().toLong * 2, pos.toLong + extra)
      require(needed <= Int.MaxValue - 16, "chunk over 2 GiB")
      val bigger = grow(needed.toInt)
      val dst = bigger.byteBuffer()
      val src = view.duplicate()
      src.position(0).limit(pos)
      dst.duplicate().put(src)
      buffer.close()
      buffer = bigger
      view = dst
    }
  }

  override def write(b: Int): Unit = {
    ensure(1)
    view.put(pos, b.toByte)
    pos += 1
  }

  override def write(b: Array[Byte], off: Int, len: Int): Unit = {
    ensure(len)
    view.put(pos, b, off, len)
    pos += len
  }

  override def close(): Unit = {} // the bytes stay; the appender appends them
}
