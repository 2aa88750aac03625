// Reduce side helper: reads a list of RPMP records (one-sided readRecordAsync) in
// parallel with at most `maxBytesInFlight` bytes of registered buffers (what the client
// really allocates per read: a power of two, 64 KiB at least) and `maxReqsInFlight`
// reads requested but not yet consumed, and hands them back in list order. Each returned buffer must be closed by the caller
// before the next next(). Used only by RpmpShuffleReader (task thread).
package org.apache.spark.shuffle.rpmp

import java.util.concurrent.{CompletableFuture, ExecutionException, TimeUnit, TimeoutException}

import scala.collection.mutable

import io.rpmp.client.{RecordRef, RpmpBuffer}

/** One record to fetch: which partition it belongs to and where it is. */
private[rpmp] case class RecordToFetch(partition: Int, server: String, ref: RecordRef)

/** Reading `record` failed with `cause`. */
private[rpmp] class RecordReadFailure(val record: RecordToFetch, cause: Throwable)
  extends java.io.IOException(s"RPMP read of $record failed: $cause", cause)

private[rpmp] class RecordFetcher(
    records: IndexedSeq[RecordToFetch],
    maxBytesInFlight: Long,
    timeoutMs: Long,
    clients: RpmpClientCache,
    onWaitNanos: Long => Unit,
    maxReqsInFlight: Int = RecordFetcher.DefaultMaxReqsInFlight) {

  private val inFlight = mutable.Queue.empty[(RecordToFetch, CompletableFuture[RpmpBuffer])]
  private var nextToIssue = 0
  private var bytesInFlight = 0L

  def hasNext: Boolean = inFlight.nonEmpty || nextToIssue < records.size

  private def issue(): Unit = {
    // Always keep at least one read going, even if one record exceeds the budget.
    while (nextToIssue < records.size && (inFlight.isEmpty ||
        (inFlight.size < maxReqsInFlight &&
          bytesInFlight + RecordFetcher.bufferBytes(records(nextToIssue).ref.length) <=
            maxBytesInFlight))) {
      val r = records(nextToIssue)
      nextToIssue += 1
      val future = try {
        clients.get(r.server).readRecordAsync(r.ref)
      } catch {
        case e: Exception => CompletableFuture.failedFuture[RpmpBuffer](e)
      }
      RpmpMetrics.readIssued(future, r.ref.length)
      inFlight.enqueue((r, future))
      bytesInFlight += RecordFetcher.bufferBytes(r.ref.length)
    }
  }

  /** The next record's bytes; RecordReadFailure when it cannot be read. */
  def next(): (RecordToFetch, RpmpBuffer) = {
    issue()
    val (r, future) = inFlight.dequeue()
    val start = System.nanoTime()
    val buffer = try {
      future.get(timeoutMs * 2 + 10000, TimeUnit.MILLISECONDS)
    } catch {
      case e: ExecutionException =>
        clients.invalidateOn(r.server, e.getCause)
        throw new RecordReadFailure(r, e.getCause)
      case e: Throwable =>
        // Timed out or interrupted (task killed): it may still complete; free its buffer then.
        future.whenComplete((b, _) => if (b != null) b.close())
        e match {
          case t: TimeoutException => throw new RecordReadFailure(r, t)
          case other => throw other
        }
    } finally {
      bytesInFlight -= RecordFetcher.bufferBytes(r.ref.length)
      onWaitNanos(System.nanoTime() - start)
    }
    issue()
    (r, buffer)
  }

  /** Frees buffers of reads still in flight (task ended early or failed). */
  def close(): Unit = {
    while (inFlight.nonEmpty) {
      val (_, future) = inFlight.dequeue()
      future.whenComplete((b, _) => if (b != null) b.close())
    }
    nextToIssue = records.size
  }
}

private[rpmp] object RecordFetcher {
  val DefaultMaxReqsInFlight = 64
  /** The client's smallest registered buffer (its pool's size classes are powers of two). */
  val MinBufferBytes: Long = 64L << 10

  /** Registered bytes a read of `length` bytes holds (librpmp's BufferPool size class). */
  def bufferBytes(length: Long): Long =
    if (length <= MinBufferBytes) MinBufferBytes
    else java.lang.Long.highestOneBit(length - 1) << 1
}
