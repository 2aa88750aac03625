// Turns the sorted runs of RpmpRecordSorter into RPMP chunks (ShuffleChunk format,
// docs/append-path.md section 2): each partition's records go through Spark's
// compression/encryption stream (SerializerManager.wrapStream) straight into registered
// memory (an RpmpBuffer) after 32 bytes kept for the chunk header, and every time that buffer
// reaches the push size, or the partition's run ends, the stream is closed, the header
// stamped (seq, cumulative data bytes, LAST on the final run's last chunk of the partition)
// and the buffer appended zero-copy to object <partition> (appendAsync), tagged with the map
// attempt id, while the task goes on compressing the next chunk. A partition that pushed in
// an earlier run but has nothing in the final one gets a header-only LAST chunk. At most maxPushesInFlight appends are pending; their buffers
// come back to a small pool. Used only by RpmpSortShuffleWriter (task thread).
package org.apache.spark.shuffle.rpmp

import java.io.{IOException, OutputStream}
import java.util.ArrayDeque
import java.util.concurrent.{CompletableFuture, ExecutionException, TimeoutException, TimeUnit}

import scala.collection.mutable

import io.rpmp.client.RpmpBuffer

import org.apache.spark.shuffle.ShuffleWriteMetricsReporter
import org.apache.spark.shuffle.sort.RunSink
import org.apache.spark.unsafe.Platform

/**
 * An OutputStream writing into registered memory from `start`; grows (new buffer, one copy)
 * when a chunk overshoots its buffer, which the slack of the pooled buffers makes rare.
 */
private[rpmp] final class RegisteredSink(
    var buffer: RpmpBuffer, start: Int, grow: Int => RpmpBuffer) extends OutputStream {
  private var view = buffer.byteBuffer()
  private var pos = start

  def size: Int = pos

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

  override def close(): Unit = {} // the bytes stay; the pusher appends them
}

private[rpmp] final class ChunkPusher(
    coords: RpmpShuffleCoordinates,
    mapId: Long,
    clients: RpmpClientCache,
    conf: RpmpConf,
    metrics: ShuffleWriteMetricsReporter,
    /** Spark's compression (and encryption) around a chunk's bytes for a partition. */
    wrap: (Int, OutputStream) => OutputStream,
    numPartitions: Int) extends RunSink {

  private val headerBytes = ShuffleChunk.HeaderSize
  private val header = new Array[Byte](ShuffleChunk.HeaderSize)
  private val bufferBytes = conf.pushBufferSize + ChunkPusher.Slack
  /** Data bytes (headers excluded) pushed per partition: the MapStatus sizes. */
  val partitionLengths = new Array[Long](numPartitions)
  /** Chunks pushed per partition (the next chunk's seq). */
  private val chunks = new Array[Int](numPartitions)
  private val sawLast = new Array[Boolean](numPartitions)

  private val copyBuffer = new Array[Byte](ChunkPusher.CopyBytes)
  private var copyLength = 0
  private var lastRun = false
  private var partition = -1
  private var sink: RegisteredSink = _
  private var stream: OutputStream = _

  private case class Push(partition: Int, server: String, buffer: RpmpBuffer,
                          future: CompletableFuture[Void])
  private val pending = new ArrayDeque[Push]()
  private val free = mutable.Map.empty[String, ArrayDeque[RpmpBuffer]]
  private var failed = false

  def chunksPushed: Long = chunks.iterator.map(_.toLong).sum

  override def startRun(last: Boolean): Unit = {
    lastRun = last
    partition = -1
  }

  override def record(p: Int, base: AnyRef, offset: Long, length: Int): Unit = {
    if (p != partition) {
      if (partition >= 0) closeChunk(endOfRun = true)
      partition = p
    }
    if (stream == null) openChunk()
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
    if (sink.size >= conf.pushBufferSize) closeChunk(endOfRun = false)
  }

  override def endRun(): Unit = {
    if (partition >= 0 && stream != null) closeChunk(endOfRun = true)
    partition = -1
    if (lastRun) {
      // Partitions whose data all went out in earlier runs: a header-only LAST chunk.
      var p = 0
      while (p < numPartitions) {
        if (chunks(p) > 0 && !sawLast(p)) {
          val buffer = takeBuffer(coords.serverFor(p))
          buffer.setSize(headerBytes)
          push(p, buffer, 0, last = true)
        }
        p += 1
      }
    }
  }

  private def drainCopyBuffer(): Unit = {
    if (copyLength > 0) {
      stream.write(copyBuffer, 0, copyLength)
      copyLength = 0
    }
  }

  private def openChunk(): Unit = {
    val server = coords.serverFor(partition)
    sink = new RegisteredSink(takeBuffer(server), headerBytes,
      n => clients.get(server).allocateBufferForWrite(coords.namespace, n))
    stream = wrap(partition, sink)
  }

  /** Closes the partition's current chunk and appends it; endOfRun: its run is over. */
  private def closeChunk(endOfRun: Boolean): Unit = {
    drainCopyBuffer()
    stream.close()
    stream = null
    val buffer = sink.buffer
    val total = sink.size
    sink = null
    val dataBytes = total - headerBytes
    buffer.setSize(total)
    push(partition, buffer, dataBytes, last = endOfRun && lastRun)
  }

  /** Stamps the header into buffer[0, 32) (its size already set) and appends the buffer. */
  private def push(p: Int, buffer: RpmpBuffer, dataBytes: Int, last: Boolean): Unit = {
    val start = System.nanoTime()
    require(!sawLast(p), s"partition $p pushed after its LAST chunk")
    val cumulative = partitionLengths(p) + dataBytes
    ShuffleChunk.writeHeader(header, p, chunks(p), cumulative, mapId, last)
    buffer.byteBuffer().put(0, header, 0, headerBytes)
    val server = coords.serverFor(p)
    val future = try {
      clients.get(server).appendAsync(coords.namespace, coords.partitionKey(p), buffer, mapId)
    } catch {
      case e: Exception =>
        buffer.close()
        clients.invalidateOn(server, e)
        throw new IOException(s"RPMP append of shuffle ${coords.shuffleId} partition $p: $e", e)
    }
    RpmpMetrics.appendIssued(future, dataBytes)
    pending.add(Push(p, server, buffer, future))
    chunks(p) += 1
    sawLast(p) = last
    partitionLengths(p) = cumulative
    metrics.incBytesWritten(dataBytes.toLong)
    metrics.incWriteTime(System.nanoTime() - start)
  }

  /** A pooled buffer for `server`, waiting for the oldest push when too many are pending. */
  private def takeBuffer(server: String): RpmpBuffer = {
    val pool = free.getOrElseUpdate(server, new ArrayDeque[RpmpBuffer]())
    if (pool.isEmpty && pending.size >= conf.maxPushesInFlight) awaitOldest()
    if (!pool.isEmpty) {
      val b = pool.poll()
      b.setSize(0)
      b
    } else {
      // Memory of the connection the appends go to (cluster mode: the primary's): no copy.
      clients.get(server).allocateBufferForWrite(coords.namespace, bufferBytes)
    }
  }

  private def awaitOldest(): Unit = {
    val push = pending.poll()
    val start = System.nanoTime()
    try {
      push.future.get(conf.callTimeoutMs * 2 + 10000, TimeUnit.MILLISECONDS)
    } catch {
      case e: ExecutionException =>
        failed = true
        push.buffer.close()
        clients.invalidateOn(push.server, e.getCause)
        throw new IOException(s"RPMP append of shuffle ${coords.shuffleId} partition " +
          s"${push.partition} failed: ${e.getCause}", e.getCause)
      case e: TimeoutException =>
        failed = true
        pending.addFirst(push) // still owned by the native call: freed in release()
        throw new IOException(s"RPMP append of partition ${push.partition} did not complete", e)
    } finally {
      metrics.incWriteTime(System.nanoTime() - start)
    }
    // Buffers that grew past the pool size are not kept.
    if (push.buffer.capacity() <= bufferBytes * 2) {
      free.getOrElseUpdate(push.server, new ArrayDeque[RpmpBuffer]()).add(push.buffer)
    } else {
      push.buffer.close()
    }
  }

  /** Waits for every append (the map output is then whole in RPMP). */
  def finish(): Unit = {
    var p = 0
    while (p < numPartitions) {
      if (chunks(p) > 0 && !sawLast(p)) {
        throw new IllegalStateException(s"partition $p of map $mapId has no LAST chunk")
      }
      p += 1
    }
    while (!pending.isEmpty) awaitOldest()
  }

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
    while (!pending.isEmpty) {
      val push = pending.poll()
      push.future.whenComplete((_, _) => push.buffer.close())
    }
    free.values.foreach { pool =>
      while (!pool.isEmpty) pool.poll().close()
    }
    free.clear()
  }
}

private[rpmp] object ChunkPusher {
  /** Room past the push size for the compressor's last block and the record that crossed it. */
  val Slack: Int = 256 << 10
  /** Records are copied out of the sorter's pages in batches of this many bytes. */
  val CopyBytes: Int = 64 << 10
}
