// Map task side of an RPMP shuffle for serializers that support relocation of serialized
// objects (UnsafeRowSerializer for every DataFrame shuffle, Kryo) and no map-side combine:
// records are serialized once into Tungsten pages (RpmpRecordSorter), sorted by partition
// id, and each partition's run is compressed into registered memory and appended as chunks
// (ChunkPusher). UnsafeRows skip the serializer: their bytes go to the page as they are,
// in UnsafeRowSerializer's format. Per-record work and memory do not depend on the number
// of partitions. stop(true) reports exact per-partition sizes (RpmpMapWriter).
// Created by RpmpShuffleManager.getWriter when RpmpSortShuffleWriter.canUse.
package org.apache.spark.shuffle.rpmp

import org.apache.spark.{ShuffleDependency, SparkEnv}
import org.apache.spark.shuffle.sort.RpmpRecordSorter
import org.apache.spark.unsafe.Platform
import org.apache.spark.util.Utils

private[spark] class RpmpSortShuffleWriter[K, V, C](task: MapTask[K, V, C])
  extends RpmpMapWriter[K, V, C](task) {

  private var sorter: RpmpRecordSorter = _
  private var pusher: ChunkPusher = _

  override def write(input: Iterator[Product2[K, V]]): Unit = {
    val records = checksummed(input)
    pusher = new ChunkPusher(newAppender(conf.pushBufferSize + ChunkPusher.Slack), wrapStream,
      conf.pushBufferSize)
    sorter = new RpmpRecordSorter(context.taskMemoryManager(), 4096,
      SparkEnv.get.conf.getBoolean("spark.shuffle.sort.useRadixSort", true), pusher,
      conf.sortRunBytes)
    val partitioner = dep.partitioner
    val unsafeRows = RpmpSortShuffleWriter.isUnsafeRowSerializer(dep)
    // The generic path: one serialization stream for the whole task into a reused array.
    val serBuffer = new ExposedByteArrayOutputStream(64 << 10)
    val serStream = dep.serializer.newInstance().serializeStream(serBuffer)
    def insertSerialized(key: Any, value: Any, partition: Int): Unit = {
      serBuffer.reset()
      serStream.writeKey(key)
      serStream.writeValue(value)
      serStream.flush()
      sorter.insertRecord(serBuffer.array, Platform.BYTE_ARRAY_OFFSET, serBuffer.size, partition)
    }
    var count = 0L
    if (unsafeRows) {
      // Only here is UnsafeRow (Spark SQL) touched: RDD-only applications never load it.
      count = UnsafeRowInsert.insertAll(records, partitioner, sorter, insertSerialized)
    } else {
      while (records.hasNext) {
        val record = records.next()
        insertSerialized(record._1, record._2, partitioner.getPartition(record._1))
        count += 1
      }
    }
    metrics.incRecordsWritten(count)
    sorter.finish()
    context.taskMetrics().incPeakExecutionMemory(sorter.peakMemoryUsedBytes)
    pusher.finish()
    partitionLengths = pusher.partitionLengths
    logDebug(s"map $mapId: $count records, ${sorter.runs} run(s), ${pusher.chunksPushed} chunks")
  }

  override protected def release(): Unit = {
    if (sorter != null) Utils.tryLogNonFatalError(sorter.freeAll())
    if (pusher != null) Utils.tryLogNonFatalError(pusher.release())
  }
}

private[spark] object RpmpSortShuffleWriter {
  /** Spark's own condition for its serialized (unsafe) shuffle path. */
  def canUse(dep: ShuffleDependency[_, _, _]): Boolean =
    dep.serializer.supportsRelocationOfSerializedObjects && !dep.mapSideCombine &&
      dep.partitioner.numPartitions <= (1 << 24)

  def isUnsafeRowSerializer(dep: ShuffleDependency[_, _, _]): Boolean =
    dep.serializer.getClass.getName == "org.apache.spark.sql.execution.UnsafeRowSerializer"
}

/** The UnsafeRow fast path's loop (a separate class: it is the only one naming UnsafeRow). */
private[rpmp] object UnsafeRowInsert {
  def insertAll(
      records: Iterator[Product2[Any, Any]],
      partitioner: org.apache.spark.Partitioner,
      sorter: RpmpRecordSorter,
      fallback: (Any, Any, Int) => Unit): Long = {
    var count = 0L
    while (records.hasNext) {
      val record = records.next()
      val partition = partitioner.getPartition(record._1)
      record._2 match {
        case row: org.apache.spark.sql.catalyst.expressions.UnsafeRow =>
          sorter.insertSizedRecord(row.getBaseObject, row.getBaseOffset, row.getSizeInBytes,
            partition)
        case other => fallback(record._1, other, partition)
      }
      count += 1
    }
    count
  }
}

/** A ByteArrayOutputStream whose array is read in place. */
private[rpmp] final class ExposedByteArrayOutputStream(initial: Int)
  extends java.io.ByteArrayOutputStream(initial) {
  def array: Array[Byte] = buf
}
