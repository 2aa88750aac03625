// Reduce task side of an RPMP shuffle: asks Spark's MapOutputTracker which map attempts
// are valid for its map and partition range, lists each partition's records in RPMP
// (getMeta), keeps only records tagged with a valid attempt id (retried or speculative
// attempts never count twice), fetches them with bounded bytes in flight, deserializes
// them with the shuffle's serializer and applies Spark's aggregator / ExternalSorter.
// Missing or unreadable data becomes a FetchFailedException so Spark recomputes the map.
// Created by RpmpShuffleManager.getReader.
package org.apache.spark.shuffle.rpmp

import java.io.{InputStream, IOException}
import java.nio.ByteBuffer

import scala.collection.mutable

import io.rpmp.client.{RpmpBuffer, RpmpNotFoundException}

import org.apache.spark.{Aggregator, InterruptibleIterator, MapOutputTracker, SparkEnv, TaskContext}
import org.apache.spark.internal.Logging
import org.apache.spark.shuffle.{FetchFailedException, ShuffleReader, ShuffleReadMetricsReporter}
import org.apache.spark.storage.{BlockManagerId, ShuffleBlockId}
import org.apache.spark.util.CompletionIterator
import org.apache.spark.util.collection.ExternalSorter

/** An InputStream over a ByteBuffer (no copy). */
private[rpmp] class ByteBufferStream(buffer: ByteBuffer) extends InputStream {
  override def read(): Int = if (buffer.hasRemaining) buffer.get() & 0xff else -1

  override def read(b: Array[Byte], off: Int, len: Int): Int = {
    if (len == 0) 0
    else if (!buffer.hasRemaining) -1
    else {
      val n = math.min(len, buffer.remaining())
      buffer.get(b, off, n)
      n
    }
  }

  override def available(): Int = buffer.remaining()

  override def skip(n: Long): Long = {
    val k = math.min(n, buffer.remaining().toLong).toInt
    buffer.position(buffer.position() + k)
    k
  }
}

private[spark] class RpmpShuffleReader[K, C](
    handle: RpmpShuffleHandle[K, _, C],
    startMapIndex: Int,
    endMapIndex: Int,
    startPartition: Int,
    endPartition: Int,
    context: TaskContext,
    readMetrics: ShuffleReadMetricsReporter,
    clients: RpmpClientCache,
    conf: RpmpConf,
    mapOutputTracker: MapOutputTracker = SparkEnv.get.mapOutputTracker)
  extends ShuffleReader[K, C] with Logging {

  private val dep = handle.dependency
  private val coords = handle.coordinates

  /** A map attempt whose output Spark considers valid. */
  private case class ValidAttempt(mapId: Long, mapIndex: Int, location: BlockManagerId)

  /** partition -> valid attempts with (non-empty) output for it. */
  private def validAttempts(): Map[Int, Seq[ValidAttempt]] = {
    val byPartition = mutable.Map.empty[Int, mutable.ArrayBuffer[ValidAttempt]]
    mapOutputTracker
      .getMapSizesByExecutorId(
        coords.shuffleId, startMapIndex, endMapIndex, startPartition, endPartition)
      .foreach { case (location, blocks) =>
        blocks.foreach {
          case (ShuffleBlockId(_, mapId, reduceId), _, mapIndex) =>
            byPartition.getOrElseUpdate(reduceId, mutable.ArrayBuffer.empty) +=
              ValidAttempt(mapId, mapIndex, location)
          case (other, _, _) =>
            throw new IllegalStateException(s"unexpected block $other in an RPMP shuffle")
        }
      }
    byPartition.map { case (p, attempts) => p -> attempts.toSeq }.toMap
  }

  private def fetchFailed(a: ValidAttempt, partition: Int, msg: String, cause: Throwable) =
    new FetchFailedException(
      a.location, coords.shuffleId, a.mapId, a.mapIndex, partition, msg, cause)

  /** The records to read, in partition order, only from valid attempts. */
  private def recordsToFetch(attempts: Map[Int, Seq[ValidAttempt]]): IndexedSeq[RecordToFetch] = {
    val out = mutable.ArrayBuffer.empty[RecordToFetch]
    for (partition <- attempts.keys.toSeq.sorted) {
      val expected = attempts(partition)
      val server = coords.serverFor(partition)
      val meta = try {
        clients.get(server).getMeta(coords.namespace, coords.partitionKey(partition))
      } catch {
        case e: RpmpNotFoundException =>
          throw fetchFailed(expected.head, partition,
            s"RPMP has no data for shuffle ${coords.shuffleId} partition $partition", e)
        case e: IOException =>
          clients.invalidateOn(server, e)
          throw fetchFailed(expected.head, partition,
            s"RPMP getMeta of partition $partition on $server failed: $e", e)
      }
      val wanted = expected.map(_.mapId).toSet
      val kept = meta.records().toArray(new Array[io.rpmp.client.RecordRef](0))
        .filter(r => wanted.contains(r.tag()))
      val seen = kept.map(_.tag()).toSet
      expected.find(a => !seen.contains(a.mapId)).foreach { missing =>
        throw fetchFailed(missing, partition,
          s"RPMP has no records of map attempt ${missing.mapId} in partition $partition", null)
      }
      kept.foreach(r => out += RecordToFetch(partition, server, r))
    }
    out.toIndexedSeq
  }

  override def read(): Iterator[Product2[K, C]] = {
    val attempts = validAttempts()
    val records = recordsToFetch(attempts)
    val fetcher = new RecordFetcher(records, conf.maxBytesInFlight, conf.callTimeoutMs, clients,
      waitNanos => readMetrics.incFetchWaitTime(waitNanos / 1000000))
    context.addTaskCompletionListener[Unit](_ => fetcher.close())

    val serializerInstance = dep.serializer.newInstance()
    val serializerManager = SparkEnv.get.serializerManager

    // One RPMP record = one self-contained serialized (compressed) chunk.
    val chunks: Iterator[(RecordToFetch, RpmpBuffer)] = new Iterator[(RecordToFetch, RpmpBuffer)] {
      override def hasNext: Boolean = fetcher.hasNext

      override def next(): (RecordToFetch, RpmpBuffer) = {
        try fetcher.next()
        catch {
          case e: RecordReadFailure =>
            val r = e.record
            val attempt = attempts(r.partition).find(_.mapId == r.ref.tag).get
            throw fetchFailed(attempt, r.partition, e.getMessage, e.getCause)
        }
      }
    }

    val recordIter: Iterator[(Any, Any)] = chunks.flatMap { case (r, buffer) =>
      readMetrics.incRemoteBytesRead(r.ref.length)
      readMetrics.incRemoteBlocksFetched(1)
      val blockId = ShuffleBlockId(coords.shuffleId, r.ref.tag, r.partition)
      val in = serializerManager.wrapStream(blockId, new ByteBufferStream(buffer.contents()))
      val kv = serializerInstance.deserializeStream(in).asKeyValueIterator
      CompletionIterator[(Any, Any), Iterator[(Any, Any)]](kv, {
        in.close()
        buffer.close()
      })
    }

    val metricIter = CompletionIterator[(Any, Any), Iterator[(Any, Any)]](
      recordIter.map { record =>
        readMetrics.incRecordsRead(1)
        record
      },
      context.taskMetrics().mergeShuffleReadMetrics())

    val interruptible = new InterruptibleIterator[(Any, Any)](context, metricIter)
    val result: Iterator[Product2[K, C]] = aggregateAndSort(interruptible)
    result match {
      case i: InterruptibleIterator[Product2[K, C]] @unchecked => i
      case other => new InterruptibleIterator[Product2[K, C]](context, other)
    }
  }

  /** Spark's aggregator and ExternalSorter, as the shuffle dependency asks. */
  private def aggregateAndSort(records: Iterator[(Any, Any)]): Iterator[Product2[K, C]] = {
    dep.keyOrdering match {
      case Some(ordering) =>
        val sorter: ExternalSorter[K, _, C] = dep.aggregator match {
          case Some(agg) if dep.mapSideCombine =>
            new ExternalSorter[K, C, C](context,
              Some(new Aggregator[K, C, C](identity, agg.mergeCombiners, agg.mergeCombiners)),
              ordering = Some(ordering), serializer = dep.serializer)
          case Some(agg) =>
            new ExternalSorter[K, Nothing, C](context,
              Some(agg.asInstanceOf[Aggregator[K, Nothing, C]]),
              ordering = Some(ordering), serializer = dep.serializer)
          case None =>
            new ExternalSorter[K, C, C](context, ordering = Some(ordering),
              serializer = dep.serializer)
        }
        sorter.insertAllAndUpdateMetrics(records.asInstanceOf[Iterator[(K, Nothing)]])
      case None =>
        dep.aggregator match {
          case Some(agg) if dep.mapSideCombine =>
            agg.combineCombinersByKey(records.asInstanceOf[Iterator[(K, C)]], context)
          case Some(agg) =>
            agg.combineValuesByKey(records.asInstanceOf[Iterator[(K, Nothing)]], context)
          case None =>
            records.asInstanceOf[Iterator[(K, C)]]
        }
    }
  }
}
