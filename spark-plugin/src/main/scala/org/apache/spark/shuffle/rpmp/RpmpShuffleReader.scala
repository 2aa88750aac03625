// Reduce task side of an RPMP shuffle: asks Spark's MapOutputTracker which map attempts
// are valid for its map and partition range (with their MapStatus sizes), reads their
// chunks through a ValidatedRecordIterator (only chunks tagged with a valid attempt; each
// output proven whole - chunks 0..LAST, byte counts agreeing with the MapStatus - or read
// again, then FetchFailedException naming the map) and applies Spark's aggregator /
// ExternalSorter. A task completion listener frees every buffer on any path (early end
// such as LIMIT, kill, failure). Created by RpmpShuffleManager.getReader.
package org.apache.spark.shuffle.rpmp

import java.io.InputStream
import java.nio.ByteBuffer

import scala.collection.mutable

import org.apache.spark.{Aggregator, InterruptibleIterator, MapOutputTracker, SparkEnv, TaskContext}
import org.apache.spark.internal.Logging
import org.apache.spark.internal.config
import org.apache.spark.shuffle.{ShuffleReader, ShuffleReadMetricsReporter}
import org.apache.spark.storage.ShuffleBlockId
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
    mapOutputTracker: MapOutputTracker = SparkEnv.get.mapOutputTracker,
    beforeRetry: Int => Unit = _ => ()) // tests: runs before each re-read round
  extends ShuffleReader[K, C] with Logging {

  private val dep = handle.dependency
  private val coords = handle.coordinates

  /** partition -> the valid attempts with output (non-zero MapStatus size) for it. */
  private def expectedOutputs(): Map[Int, Seq[ExpectedOutput]] = {
    val byPartition = mutable.Map.empty[Int, mutable.ArrayBuffer[ExpectedOutput]]
    mapOutputTracker
      .getMapSizesByExecutorId(
        coords.shuffleId, startMapIndex, endMapIndex, startPartition, endPartition)
      .foreach { case (location, blocks) =>
        blocks.foreach {
          case (ShuffleBlockId(_, mapId, reduceId), size, mapIndex) =>
            byPartition.getOrElseUpdate(reduceId, mutable.ArrayBuffer.empty) +=
              ExpectedOutput(reduceId, mapId, mapIndex, location, size)
          case (other, _, _) =>
            throw new IllegalStateException(s"unexpected block $other in an RPMP shuffle")
        }
      }
    byPartition.map { case (p, attempts) => p -> attempts.toSeq }.toMap
  }

  override def read(): Iterator[Product2[K, C]] = {
    val expected = expectedOutputs()
    // MapStatus.apply makes a CompressedMapStatus (sizes exact up to its log encoding) up to
    // this many partitions, a HighlyCompressedMapStatus (averages) above.
    val exactSizes = dep.partitioner.numPartitions <=
      SparkEnv.get.conf.get(config.SHUFFLE_MIN_NUM_PARTS_TO_HIGHLY_COMPRESS)
    // AQE's local and skew readers read a map range: the server then lists only its attempts.
    val mapRange = startMapIndex > 0 || math.min(endMapIndex, coords.numMaps) < coords.numMaps
    val records = new ValidatedRecordIterator(coords, expected, new ChunkLedger(exactSizes),
      clients, conf, SparkEnv.get.serializerManager, dep.serializer.newInstance(), readMetrics,
      beforeRetry, listOnlyWanted = mapRange)
    context.addTaskCompletionListener[Unit](_ => records.close())

    val metricIter = CompletionIterator[(Any, Any), Iterator[(Any, Any)]](
      records.map { record =>
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
