// Map side of RPMP's sort-based shuffle writer: serialized records are copied into
// Tungsten pages of the task's memory and their (partition id, page address) pointers
// into Spark's ShuffleInMemorySorter (PackedRecordPointer). A run = everything buffered,
// handed sorted by partition to a RunSink: when the task ends, and whenever the task
// memory manager asks this consumer to spill (its own page or pointer-array request
// could not be met). Memory work per record is O(1) whatever the partition count, and the
// records' memory is bounded by what the task memory manager grants.
// Lives in Spark's package because ShuffleInMemorySorter and PackedRecordPointer are
// package-private there. Used only by org.apache.spark.shuffle.rpmp.RpmpSortShuffleWriter
// (task thread).
package org.apache.spark.shuffle.sort

import java.util.ArrayList

import org.apache.spark.memory.{MemoryConsumer, SparkOutOfMemoryError, TaskMemoryManager, TooLargePageException}
import org.apache.spark.unsafe.{Platform, UnsafeAlignedOffset}
import org.apache.spark.unsafe.memory.MemoryBlock

/** Receives one sorted run: records grouped by ascending partition id. */
private[spark] trait RunSink {
  /** A run starts; `last` when it is the task's final run. */
  def startRun(last: Boolean): Unit

  /** One record of `partition` (non-decreasing within a run): `length` bytes at base+offset. */
  def record(partition: Int, base: AnyRef, offset: Long, length: Int): Unit

  /** The run ended (all its records were given). */
  def endRun(): Unit
}

private[spark] final class RpmpRecordSorter(
    tmm: TaskMemoryManager,
    initialPointers: Int,
    useRadixSort: Boolean,
    sink: RunSink,
    /** Buffered bytes (pages) after which a run is written even without memory pressure. */
    maxRunBytes: Long)
  extends MemoryConsumer(
    tmm,
    math.min(PackedRecordPointer.MAXIMUM_PAGE_SIZE_BYTES.toLong, tmm.pageSizeBytes()),
    tmm.getTungstenMemoryMode) {

  private val uaoSize = UnsafeAlignedOffset.getUaoSize
  private val pages = new ArrayList[MemoryBlock]()
  private var inMem = new ShuffleInMemorySorter(this, initialPointers, useRadixSort)
  private var currentPage: MemoryBlock = _
  private var pageCursor = 0L
  private var pageBytes = 0L
  private var peakMemory = 0L
  private var runsWritten = 0
  private var writing = false

  def runs: Int = runsWritten

  def peakMemoryUsedBytes: Long = math.max(peakMemory, memoryUsed)

  private def memoryUsed: Long =
    pageBytes + (if (inMem != null) inMem.getMemoryUsage else 0L)

  /** Copies `length` bytes at base+offset in as one record of `partition`. */
  def insertRecord(base: AnyRef, offset: Long, length: Int, partition: Int): Unit = {
    val dst = reserve(partition, length)
    Platform.copyMemory(base, offset, currentPage.getBaseObject, dst, length)
  }

  /**
   * One UnsafeRow in UnsafeRowSerializer's stream format (a big-endian int size, then the
   * row's bytes), copied straight from the row: no serialization stream.
   */
  def insertSizedRecord(base: AnyRef, offset: Long, size: Int, partition: Int): Unit = {
    val dst = reserve(partition, size + 4)
    val page = currentPage.getBaseObject
    Platform.putInt(page, dst,
      if (RpmpRecordSorter.LittleEndian) Integer.reverseBytes(size) else size)
    Platform.copyMemory(base, offset, page, dst + 4, size)
  }

  /** Room for one record in the current page and the pointer array; returns where to copy. */
  private def reserve(partition: Int, length: Int): Long = {
    if (pageBytes >= maxRunBytes && inMem.numRecords() > 0) writeRun(last = false)
    growPointerArrayIfNecessary()
    val required = length.toLong + uaoSize
    if (currentPage == null ||
        pageCursor + required > currentPage.getBaseOffset + currentPage.size()) {
      if (required > pageSizeLimit) {
        throw new java.io.IOException(s"a record of $length bytes exceeds the page size limit")
      }
      currentPage = allocatePage(required) // may spill (write) this sorter first
      pageCursor = currentPage.getBaseOffset
      pages.add(currentPage)
      pageBytes += currentPage.size()
      peakMemory = math.max(peakMemory, memoryUsed)
    }
    val base = currentPage.getBaseObject
    val address = tmm.encodePageNumberAndOffset(currentPage, pageCursor)
    UnsafeAlignedOffset.putSize(base, pageCursor, length)
    val dst = pageCursor + uaoSize
    pageCursor += required
    inMem.insertRecord(address, partition)
    dst
  }

  private def pageSizeLimit: Long = PackedRecordPointer.MAXIMUM_PAGE_SIZE_BYTES.toLong

  private def growPointerArrayIfNecessary(): Unit = {
    if (!inMem.hasSpaceForAnotherRecord) {
      val used = inMem.getMemoryUsage
      val array = try allocateArray(used / 8 * 2) catch {
        case _: TooLargePageException =>
          writeRun(last = false)
          return
        case e: SparkOutOfMemoryError =>
          if (!inMem.hasSpaceForAnotherRecord) throw e
          return // a spill during the request made room
      }
      if (inMem.hasSpaceForAnotherRecord) freeArray(array) // spilled while allocating
      else inMem.expandPointerArray(array)
      peakMemory = math.max(peakMemory, memoryUsed)
    }
  }

  /** The task memory manager needs memory: write what is buffered as a run. */
  override def spill(size: Long, trigger: MemoryConsumer): Long = {
    // Like ShuffleExternalSorter: only our own requests make us write (a write is pushes to
    // RPMP, done on the task thread; another consumer's request must not run it re-entrantly).
    if ((trigger ne this) || writing || inMem == null || inMem.numRecords() == 0) 0L
    else writeRun(last = false)
  }

  /** Writes the final run (possibly empty) and frees everything. */
  def finish(): Unit = {
    writeRun(last = true)
    freeAll()
  }

  /** Sorts the buffered records, gives them to the sink, frees the pages. Returns bytes freed. */
  private def writeRun(last: Boolean): Long = {
    writing = true
    try {
      sink.startRun(last)
      val it = inMem.getSortedIterator
      while (it.hasNext) {
        it.loadNext()
        val p = it.packedRecordPointer
        val pointer = p.getRecordPointer
        val base = tmm.getPage(pointer)
        val offset = tmm.getOffsetInPage(pointer)
        val length = UnsafeAlignedOffset.getSize(base, offset)
        sink.record(p.getPartitionId, base, offset + uaoSize, length)
      }
      sink.endRun()
      runsWritten += 1
    } finally {
      writing = false
    }
    val freed = freePages()
    inMem.reset()
    freed
  }

  private def freePages(): Long = {
    peakMemory = math.max(peakMemory, memoryUsed)
    var freed = 0L
    pages.forEach { page =>
      freed += page.size()
      freePage(page)
    }
    pages.clear()
    currentPage = null
    pageCursor = 0L
    pageBytes = 0L
    freed
  }

  /** Frees pages and the pointer array (after finish, or when the task failed). */
  def freeAll(): Unit = {
    freePages()
    if (inMem != null) {
      inMem.free()
      inMem = null
    }
  }
}

private[spark] object RpmpRecordSorter {
  val LittleEndian: Boolean = java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN
}
