// Turns the sorted runs of RpmpRecordSorter into RPMP chunks: each partition's records go
// through Spark's compression/encryption stream (SerializerManager.wrapStream) straight
// into registered memory (a ChunkAppender sink), and every time that buffer reaches the
// push size, or the partition's run ends, the stream is closed and the chunk appended
// (LAST on the final run's last chunk of the partition) while the task goes on compressing
// the next one. A partition that pushed in an earlier run but has nothing in the final one
// gets a header-only LAST chunk. Used only by RpmpSortShuffleWriter (task thread).
package org.apache.spark.shuffle.rpmp

import java.io.OutputStream

import org.apache.spark.shuffle.sort.RunSink
import org.apache.spark.unsafe.Platform

/**
 * @param appender       this map attempt's appender (its buffers: push size plus Slack)
 * @param wrap           Spark's compression (and encryption) around a chunk's bytes for a
 *                       partition
 * @param pushBufferSize a chunk is closed at the first record boundary past this many bytes
 */
private[rpmp] final class ChunkPusher(
    appender: ChunkAppender,
    wrap: (Int, OutputStream) => OutputStream,
    pushBufferSize: Int) extends RunSink {

  private val copyBuffer = new Array[Byte](ChunkPusher.CopyBytes)
  private var copyLength = 0
  private var lastRun = false
  private var partition = -1
  private var sink: RegisteredSink = _
  private var stream: OutputStream = _

  /** Data bytes (headers excluded) pushed per partition: the MapStatus sizes. */
  def partitionLengths: Array[Long] = appender.partitionLengths

  def chunksPushed: Long = appender.chunksPushed

  override def startRun(last: Boolean): Unit = {
    lastRun = last
    partition = -1
  }

  override def record(p: Int, base: AnyRef, offset: Long, length: Int): Unit = {
    if (p != partition) {
      if (partition >= 0) closeChunk(endOfRun = true)
      partition = p
    }
    if (stream == null) {
      sink = appender.openSink(partition)
      stream = wrap(partition, sink)
    }
    var off = offset
    var left = length
    while (left > 0) {
      val n = math.min(left, copyBuffer.length - copyLength)
      Platform.copyMemory(base, off, copyBuffer, Platform.BYTE_ARRAY_OFFSET + copyLength, n)
      copyLength += n
      off += n
      left -= n
      if (copyLength == copyBuffer.length) drainCopyBuffer()
    }
    // Chunks end at record boundaries: each is a stream the reader decodes on its own.
    if (sink.size >= pushBufferSize) closeChunk(endOfRun = false)
  }

  override def endRun(): Unit = {
    if (partition >= 0 && stream != null) closeChunk(endOfRun = true)
    partition = -1
    if (lastRun) appender.pushMissingLasts()
  }

  private def drainCopyBuffer(): Unit = {
    if (copyLength > 0) {
      stream.write(copyBuffer, 0, copyLength)
      copyLength = 0
    }
  }

  /** Closes the partition's current chunk and appends it; endOfRun: its run is over. */
  private def closeChunk(endOfRun: Boolean): Unit = {
    drainCopyBuffer()
    stream.close()
    stream = null
    val s = sink
    sink = null
    appender.pushSink(partition, s, last = endOfRun && lastRun)
  }

  /** Waits for every append (the map output is then whole in RPMP). */
  def finish(): Unit = appender.finish()

  /** Returns every buffer; buffers of appends still pending are freed when those complete. */
  def release(): Unit = {
    if (stream != null) {
      try stream.close() catch { case _: Exception => }
      stream = null
    }
    if (sink != null) {
      sink.buffer.close()
      sink = null
    }
    appender.release()
  }
}

private[rpmp] object ChunkPusher {
  /** Room past the push size for the compressor's last block and the record that crossed it. */
  val Slack: Int = 256 << 10
  /** Records are copied out of the sorter's pages in batches of this many bytes. */
  val CopyBytes: Int = 64 << 10
}
