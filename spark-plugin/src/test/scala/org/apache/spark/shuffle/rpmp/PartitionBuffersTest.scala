// Unit tests of PartitionBuffers with a real (tiny) Spark memory manager and heap sinks
// (HeapSinks, standing in for ChunkAppender): chunks are pushed when full or when task
// memory is refused, every chunk deserializes on its own, each partition's last data chunk
// carries LAST, the header-only LASTs are asked for after it, unsent sinks are discarded,
// and all task memory is returned at the end.
package org.apache.spark.shuffle.rpmp

import java.io.ByteArrayInputStream

import scala.collection.mutable

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

import org.apache.spark.SparkConf
import org.apache.spark.memory.{TaskMemoryManager, UnifiedMemoryManager}
import org.apache.spark.serializer.JavaSerializer

/** A growable heap ChunkSink (header space first). */
final class HeapSink(initial: Int) extends ChunkSink {
  private val out = new java.io.ByteArrayOutputStream(initial)
  out.write(new Array[Byte](ShuffleChunk.HeaderSize))
  var discarded = false
  override def size: Int = out.size
  override def capacity: Int = math.max(initial, out.size)
  override def discard(): Unit = discarded = true
  override def write(b: Int): Unit = out.write(b)
  override def write(b: Array[Byte], off: Int, len: Int): Unit = out.write(b, off, len)
  def bytes: Array[Byte] = out.toByteArray
}

/**
 * Records what PartitionBuffers pushes: (partition, chunk bytes, last); -1 marks
 * pushMissingLasts. Sinks without a size hint start at 256 KiB; unpushed ones are kept.
 */
final class HeapSinks extends ChunkSinks[HeapSink] {
  val pushed = mutable.ArrayBuffer.empty[(Int, Array[Byte], Boolean)]
  val open = mutable.Set.empty[HeapSink]
  override def openSink(p: Int, sizeHint: Int): HeapSink = {
    val s = new HeapSink(if (sizeHint > 0) sizeHint else 256 << 10)
    open += s
    s
  }
  override def pushSink(p: Int, sink: HeapSink, last: Boolean): Unit = {
    open -= sink
    pushed += ((p, sink.bytes, last))
  }
  override def pushMissingLasts(): Unit = pushed += ((-1, Array.emptyByteArray, true))
}

class PartitionBuffersTest {
  private val conf = new SparkConf(false)
    .set("spark.testing.reservedMemory", "0")
    .set("spark.testing.memory", (2L << 20).toString) // ~1.2 MiB for execution + storage
  private val serializer = new JavaSerializer(conf).newInstance()

  private def newBuffers(numPartitions: Int, pushBufferSize: Int, sinks: HeapSinks) = {
    val tmm = new TaskMemoryManager(UnifiedMemoryManager(conf, numCores = 1), 0)
    (tmm, new PartitionBuffers(tmm, numPartitions, pushBufferSize,
      (_, sink) => serializer.serializeStream(sink), sinks))
  }

  private def run(numPartitions: Int, pushBufferSize: Int, records: Int) = {
    val sinks = new HeapSinks
    val (tmm, buffers) = newBuffers(numPartitions, pushBufferSize, sinks)
    for (i <- 0 until records) buffers.write(i % numPartitions, i, "x" * 100)
    val pushedBeforeEnd = sinks.pushed.size
    assertFalse(sinks.pushed.exists(_._3), "LAST before finish()")
    buffers.finish()
    buffers.releaseAll()
    assertEquals(0L, tmm.getMemoryConsumptionForThisTask, "task memory not returned")
    assertEquals((-1, true), (sinks.pushed.last._1, sinks.pushed.last._3),
      "pushMissingLasts not asked for last")
    val chunks = sinks.pushed.dropRight(1)
    // LAST only on a partition's final chunk (else its LAST is the appender's header-only one).
    for ((p, cs) <- chunks.groupBy(_._1)) {
      assertTrue(cs.init.forall(!_._3), s"partition $p: LAST before its final chunk")
    }
    val decoded = chunks.toSeq.flatMap { case (p, bytes, _) =>
      assertTrue(bytes.length > ShuffleChunk.HeaderSize)
      val data = new ByteArrayInputStream(bytes, ShuffleChunk.HeaderSize,
        bytes.length - ShuffleChunk.HeaderSize)
      serializer.deserializeStream(data).asKeyValueIterator
        .map { case (k, v) => (p, k.asInstanceOf[Int], v.asInstanceOf[String]) }
    }
    (pushedBeforeEnd, decoded)
  }

  @Test
  def aSpilledPartitionLeavesItsLastToTheAppender(): Unit = {
    val sinks = new HeapSinks
    val (_, buffers) = newBuffers(3, 1 << 20, sinks)
    buffers.write(0, 1, "a")
    buffers.flushAll() // a spill: partition 0's data goes, not as LAST
    buffers.write(1, 2, "b")
    buffers.finish()
    buffers.releaseAll()
    // Partition 0: one data chunk; 1: one data chunk with LAST; then the header-only LASTs
    // (partition 0's) are the appender's to send; 2: nothing.
    assertEquals(Seq(0, 1, -1), sinks.pushed.map(_._1).toSeq)
    assertEquals(Seq(false, true, true), sinks.pushed.map(_._3).toSeq)
  }

  @Test
  def unsentSinksAreDiscarded(): Unit = {
    val sinks = new HeapSinks
    val (tmm, buffers) = newBuffers(2, 1 << 20, sinks)
    buffers.write(0, 1, "a")
    buffers.write(1, 2, "b")
    buffers.releaseAll() // a failed task: nothing pushed, both sinks given back
    assertTrue(sinks.pushed.isEmpty)
    assertEquals(Seq(true, true), sinks.open.toSeq.map(_.discarded))
    assertEquals(0L, tmm.getMemoryConsumptionForThisTask)
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
    // 64 partitions x 64 KiB sinks exceed the ~1 MiB of task memory long before any chunk
    // reaches the 1 MiB push size: chunks must be pushed anyway.
    val (pushedBeforeEnd, decoded) = run(numPartitions = 64, pushBufferSize = 1 << 20,
      records = 40000)
    assertTrue(pushedBeforeEnd > 0, "nothing pushed under memory pressure")
    assertEquals(40000, decoded.size)
  }
}
