// Unit tests of PartitionBuffers with a real (tiny) Spark memory manager: buffers are
// pushed when full or when task memory is refused, every chunk deserializes on its own,
// and all task memory is returned at the end.
package org.apache.spark.shuffle.rpmp

import java.io.ByteArrayInputStream

import scala.collection.mutable

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import org.apache.spark.SparkConf
import org.apache.spark.memory.{TaskMemoryManager, UnifiedMemoryManager}
import org.apache.spark.serializer.JavaSerializer

class PartitionBuffersTest {
  private val conf = new SparkConf(false)
    .set("spark.testing.reservedMemory", "0")
    .set("spark.testing.memory", (2L << 20).toString) // ~1.2 MiB for execution + storage

  private def run(numPartitions: Int, pushBufferSize: Int, records: Int) = {
    val memoryManager = UnifiedMemoryManager(conf, numCores = 1)
    val tmm = new TaskMemoryManager(memoryManager, 0)
    val serializer = new JavaSerializer(conf).newInstance()
    val chunks = mutable.ArrayBuffer.empty[(Int, Array[Byte])]
    val buffers = new PartitionBuffers(tmm, numPartitions, pushBufferSize,
      (_, sink) => serializer.serializeStream(sink),
      (p, bytes, len) => chunks += ((p, java.util.Arrays.copyOf(bytes, len))))
    for (i <- 0 until records) buffers.write(i % numPartitions, i, "x" * 100)
    val pushedBeforeEnd = chunks.size
    buffers.flushAll()
    buffers.releaseAll()
    assertEquals(0L, tmm.getMemoryConsumptionForThisTask, "task memory not returned")
    val decoded = chunks.toSeq.flatMap { case (p, bytes) =>
      serializer.deserializeStream(new ByteArrayInputStream(bytes)).asKeyValueIterator
        .map { case (k, v) => (p, k.asInstanceOf[Int], v.asInstanceOf[String]) }
    }
    (pushedBeforeEnd, decoded)
  }

  @Test
  def everyRecordLandsInItsPartitionOnce(): Unit = {
    val (_, decoded) = run(numPartitions = 7, pushBufferSize = 4096, records = 5000)
    assertEquals(5000, decoded.size)
    assertEquals((0 until 5000).toSet, decoded.map(_._2).toSet)
    decoded.foreach { case (p, k, _) => assertEquals(k % 7, p) }
  }

  @Test
  def refusedMemoryPushesBuffersEarly(): Unit = {
    // 64 partitions x 64 KiB sinks exceed the ~1 MiB of task memory long before any buffer
    // reaches the 1 MiB push size: buffers must be pushed anyway.
    val (pushedBeforeEnd, decoded) = run(numPartitions = 64, pushBufferSize = 1 << 20,
      records = 40000)
    assertTrue(pushedBeforeEnd > 0, "nothing pushed under memory pressure")
    assertEquals(40000, decoded.size)
  }
}
