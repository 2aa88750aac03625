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
    val chunks = mutable.ArrayBuffer.empty[(Int, Array[Byte], Boolean)]
    val buffers = new PartitionBuffers(tmm, numPartitions, pushBufferSize,
      (_, sink) => serializer.serializeStream(sink),
      (p, bytes, len, last) => chunks += ((p, java.util.Arrays.copyOf(bytes, len), last)))
    for (i <- 0 until records) buffers.write(i % numPartitions, i, "x" * 100)
    val pushedBeforeEnd = chunks.size
    assertFalse(chunks.exists(_._3), "LAST before finish()")
    buffers.finish()
    buffers.releaseAll()
    assertEquals(0L, tmm.getMemoryConsumptionForThisTask, "task memory not returned")
    // Every partition that pushed anything ends with exactly one LAST chunk, at its end.
    for ((p, cs) <- chunks.groupBy(_._1)) {
      assertEquals(Seq(true), cs.map(_._3).dropWhile(!_).toSeq, s"partition $p")
      assertEquals(1, cs.count(_._3), s"partition $p")
    }
    val decoded = chunks.toSeq.flatMap { case (p, bytes, _) =>
      assertTrue(bytes.length >= ShuffleChunk.HeaderSize)
      val data = new ByteArrayInputStream(bytes, ShuffleChunk.HeaderSize,
        bytes.length - ShuffleChunk.HeaderSize)
      if (bytes.length == ShuffleChunk.HeaderSize) Iterator.empty
      else serializer.deserializeStream(data).asKeyValueIterator
        .map { case (k, v) => (p, k.asInstanceOf[Int], v.asInstanceOf[String]) }
    }
    (pushedBeforeEnd, decoded)
  }

  @Test
  def finalChunkIsHeaderOnlyWhenNothingIsLeft(): Unit = {
    val memoryManager = UnifiedMemoryManager(conf, numCores = 1)
    val tmm = new TaskMemoryManager(memoryManager, 0)
    val serializer = new JavaSerializer(conf).newInstance()
    val chunks = mutable.ArrayBuffer.empty[(Int, Int, Boolean)]
    val buffers = new PartitionBuffers(tmm, 3, 1 << 20,
      (_, sink) => serializer.serializeStream(sink),
      (p, _, len, last) => chunks += ((p, len, last)))
    buffers.write(0, 1, "a")
    buffers.flushAll() // a spill: partition 0's data goes, not as LAST
    buffers.write(1, 2, "b")
    buffers.finish()
    buffers.releaseAll()
    // Partition 0: data chunk, then a header-only LAST; 1: one data chunk with LAST; 2: none.
    assertEquals(Seq(0, 0, 1), chunks.map(_._1).toSeq)
    assertEquals(Seq(false, true, true), chunks.map(_._3).toSeq)
    assertEquals(ShuffleChunk.HeaderSize, chunks(1)._2)
    assertTrue(chunks(0)._2 > ShuffleChunk.HeaderSize && chunks(2)._2 > ShuffleChunk.HeaderSize)
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
