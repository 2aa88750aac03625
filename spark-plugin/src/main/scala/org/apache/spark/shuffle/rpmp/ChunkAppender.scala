// Appends one map attempt's chunks (ShuffleChunk format, docs/append-path.md section 2)
// from registered memory, zero-copy: hands out RegisteredSinks in pooled RpmpBuffers of the
// connection each partition's appends go to (the first 32 bytes left for the header),
// stamps each finished chunk's header (seq, cumulative data bytes, LAST) and appends it
// with appendAsync tagged with the map attempt id; their buffers come back to the pool.
// Memory: a new buffer is taken only while fewer than maxPushesInFlight appends are pending
// (takeBuffer waits for the oldest otherwise), so a writer holds at most its open sinks
// plus that many buffers in flight (plus the pooled ones of other placement groups). With
// awaitWindowOnPush every push also waits while that many are pending: for a writer that
// accounts its sinks as task memory and releases it at the push (PartitionBuffers), so that
// what it released is freed soon. The others push whole sinks they already hold and do not
// wait there: the bypass writer's end of task pushes one chunk per partition back to back. Keeps the per-partition data sizes
// the MapStatus reports. The one append path of the plugin: every map writer's chunks go
// through it (RpmpMapWriter.newAppender), on the task thread only. Cluster mode: appends go
// to the group's current extent, and a chunk refused for space is appended again, whole, to
// the next extent (GroupExtents).
package org.apache.spark.shuffle.rpmp

import java.io.IOException
import java.util.ArrayDeque
import java.util.concurrent.{CompletableFuture, ExecutionException, TimeoutException, TimeUnit}

import scala.collection.mutable

import io.rpmp.client.{RpmpBuffer, RpmpException}

import org.apache.spark.shuffle.ShuffleWriteMetricsReporter

/**
 * @param bufferBytes       capacity of the pooled buffers (a chunk that outgrows one moves to
 *                          a bigger buffer once)
 * @param awaitWindowOnPush every push waits while maxPushesInFlight appends are pending
 */
private[rpmp] final class ChunkAppender(
    coords: RpmpShuffleCoordinates,
    mapId: Long,
    clients: RpmpClientCache,
    conf: RpmpConf,
    metrics: ShuffleWriteMetricsReporter,
    numPartitions: Int,
    bufferBytes: Int,
    awaitWindowOnPush: Boolean) extends ChunkSinks[RegisteredSink] {

  private val headerBytes = ShuffleChunk.HeaderSize
  private val header = new Array[Byte](ShuffleChunk.HeaderSize)
  /** Data bytes (headers excluded) pushed per partition: the MapStatus sizes. */
  val partitionLengths = new Array[Long](numPartitions)
  /** Chunks pushed per partition (the next chunk's seq). */
  private val chunks = new Array[Int](numPartitions)
  private val sawLast = new Array[Boolean](numPartitions)

  private case class Push(partition: Int, server: String, ns: String, buffer: RpmpBuffer,
                          future: CompletableFuture[Void])
  private val pending = new ArrayDeque[Push]()
  // Pooled buffers by (endpoint, namespace): a buffer is memory of the connection to its
  // namespace's primary, so it serves only appends to that namespace (placement group).
  private val free = mutable.Map.empty[(String, String), ArrayDeque[RpmpBuffer]]

  def chunksPushed: Long = chunks.iterator.map(_.toLong).sum

  /** Appends issued and not yet awaited (tests of the window). */
  private[rpmp] def pendingPushes: Int = pending.size

  override def openSink(p: Int, sizeHint: Int): RegisteredSink = {
    val server = coords.serverFor(p)
    val ns = writeNamespace(p)
    val bytes = if (sizeHint > 0) math.min(sizeHint, bufferBytes) else bufferBytes
    new RegisteredSink(takeBuffer(server, ns, bytes), headerBytes,
      n => clients.get(server).allocateBufferForWrite(ns, n))
  }

  override def pushSink(p: Int, sink: RegisteredSink, last: Boolean): Unit = {
    val buffer = sink.buffer
    buffer.setSize(sink.size)
    push(p, buffer, sink.size - headerBytes, last)
  }

  override def pushOrder(numPartitions: Int): Array[Int] = coords.partitionsByGroup

  override def pushMissingLasts(): Unit = {
    for (p <- pushOrder(numPartitions)) {
      if (chunks(p) > 0 && !sawLast(p)) {
        val buffer = takeBuffer(coords.serverFor(p), writeNamespace(p), headerBytes)
        buffer.setSize(headerBytes)
        push(p, buffer, 0, last = true)
      }
    }
  }

  /**
   * Stamps the header into buffer[0, 32) (its size already set) and appends the buffer (with
   * awaitWindowOnPush, after waiting for the oldest appends while maxPushesInFlight are
   * pending). The buffer is this appender's from here on, whatever happens.
   */
  private def push(p: Int, buffer: RpmpBuffer, dataBytes: Int, last: Boolean): Unit = {
    val server = coords.serverFor(p)
    val ns = writeNamespace(p)
    try {
      require(!sawLast(p), s"partition $p pushed after its LAST chunk")
      if (awaitWindowOnPush) {
        while (pending.size >= conf.maxPushesInFlight) awaitOldest() // counts its own wait
      }
    } catch {
      case e: Throwable =>
        buffer.close()
        throw e
    }
    val start = System.nanoTime() // the issue only: waiting above is already write time
    ShuffleChunk.writeHeader(header, p, chunks(p), partitionLengths(p) + dataBytes, mapId, last)
    buffer.byteBuffer().put(0, header, 0, headerBytes)
    val future = try {
      clients.get(server).appendAsync(ns, coords.partitionKey(p), buffer, mapId)
    } catch {
      case e: Exception =>
        buffer.close()
        clients.invalidateOn(server, e)
        throw new IOException(s"RPMP append of shuffle ${coords.shuffleId} partition $p: $e", e)
    }
    RpmpMetrics.appendIssued(future, dataBytes)
    pending.add(Push(p, server, ns, buffer, future))
    chunks(p) += 1
    sawLast(p) = last
    partitionLengths(p) += dataBytes
    metrics.incBytesWritten(dataBytes.toLong)
    metrics.incWriteTime(System.nanoTime() - start)
  }

  /** Where partition p's chunks go now: its group, or (cluster mode) the group's extent. */
  private def writeNamespace(p: Int): String =
    if (coords.clusterMode) GroupExtents.writeNamespace(coords.namespaceOf(p))
    else coords.namespaceOf(p)

  /**
   * `push` was refused for space: appends the same bytes (same header, so a copy the
   * refusing primary kept is a duplicate the reader drops) to the group's next extents, up to
   * GroupExtents.MaxMovesPerChunk of them; the error when none takes it.
   */
  private def appendToNextExtent(push: Push, refused: Throwable): Unit = {
    val client = clients.get(push.server)
    val what = s"shuffle ${coords.shuffleId} partition ${push.partition} map $mapId"
    var (group, k) = GroupExtents.parse(push.ns)
    var cause = refused
    var moves = 0
    try {
      while (moves < GroupExtents.MaxMovesPerChunk) {
        moves += 1
        k = GroupExtents.moveOn(client, group, k, push.buffer.size().toLong, what, cause)
        val future = client.appendAsync(GroupExtents.extentName(group, k),
          coords.partitionKey(push.partition), push.buffer, mapId)
        RpmpMetrics.appendIssued(future, push.buffer.size() - headerBytes)
        try {
          future.get(conf.callTimeoutMs * 2 + 10000, TimeUnit.MILLISECONDS)
          return
        } catch {
          case e: ExecutionException if GroupExtents.isNoSpace(e.getCause) => cause = e.getCause
          case e: TimeoutException =>
            pending.addFirst(push.copy(future = future)) // owned by that call: release() frees it
            throw new IOException(s"RPMP append of $what to an extent did not complete", e)
        }
      }
      throw GroupExtents.exhausted(what, cause)
    } catch {
      case e: RpmpException =>
        push.buffer.close()
        throw e
    }
  }

  /**
   * A buffer of at least `bytes` for appends to `ns` through `server`: a pooled one (pooled
   * ones too small are dropped), waiting for the oldest push first when too many are pending,
   * else a new one.
   */
  private def takeBuffer(server: String, ns: String, bytes: Int): RpmpBuffer = {
    val pool = free.getOrElseUpdate((server, ns), new ArrayDeque[RpmpBuffer]())
    if (pool.isEmpty && pending.size >= conf.maxPushesInFlight) awaitOldest()
    while (!pool.isEmpty) {
      val b = pool.poll()
      if (b.capacity() >= bytes) {
        b.setSize(0)
        return b
      }
      b.close()
    }
    // Memory of the connection the appends go to (cluster mode: the primary's): no copy.
    clients.get(server).allocateBufferForWrite(ns, bytes)
  }

  private def awaitOldest(): Unit = {
    val push = pending.poll()
    val start = System.nanoTime()
    try {
      try push.future.get(conf.callTimeoutMs * 2 + 10000, TimeUnit.MILLISECONDS) catch {
        case e: ExecutionException if coords.clusterMode && GroupExtents.isNoSpace(e.getCause) =>
          appendToNextExtent(push, e.getCause)
      }
    } catch {
      case e: ExecutionException =>
        push.buffer.close()
        clients.invalidateOn(push.server, e.getCause)
        throw new IOException(s"RPMP append of shuffle ${coords.shuffleId} partition " +
          s"${push.partition} failed: ${e.getCause}", e.getCause)
      case e: TimeoutException =>
        pending.addFirst(push) // still owned by the native call: freed in release()
        throw new IOException(s"RPMP append of partition ${push.partition} did not complete", e)
    } finally {
      metrics.incWriteTime(System.nanoTime() - start)
    }
    // Buffers that grew past the pool size are not kept.
    if (push.buffer.capacity() <= bufferBytes * 2) {
      free.getOrElseUpdate((push.server, push.ns), new ArrayDeque[RpmpBuffer]()).add(push.buffer)
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

  /** Returns every pooled buffer; buffers of appends still pending go when those complete. */
  def release(): Unit = {
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
