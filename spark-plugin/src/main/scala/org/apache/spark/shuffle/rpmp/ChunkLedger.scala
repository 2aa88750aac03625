// Reduce side bookkeeping of complete-or-refetch reads (docs/append-path.md section 2):
// which chunks of each (partition, map attempt) a reduce task has accepted, and whether
// they prove the attempt's whole output for that partition: chunks 0..last contiguous,
// exactly one LAST, cumulative bytes consistent, total agreeing with the MapStatus size.
// Duplicates (same seq, same bytes) are dropped. Pure logic, no I/O; one instance per
// reduce task, used only by ValidatedRecordIterator on the task thread.
package org.apache.spark.shuffle.rpmp

import scala.collection.mutable

import io.rpmp.client.RecordRef

import org.apache.spark.scheduler.MapStatus
import org.apache.spark.storage.BlockManagerId

/** What Spark's MapOutputTracker says of one valid map attempt's output for one partition. */
private[spark] case class ExpectedOutput(
    partition: Int,
    mapId: Long,
    mapIndex: Int,
    location: BlockManagerId,
    reportedSize: Long)

/** A chunk whose seq was seen before with other bytes: two different outputs claim one seq. */
private[spark] class ChunkConflictException(msg: String) extends ChunkFormatException(msg)

private[spark] object ChunkLedger {
  /**
   * Whether `actual` data bytes agree with the size a MapStatus reports. `exactSizes`: the
   * MapStatus is a CompressedMapStatus (at most spark.shuffle.minNumPartitionsToHighlyCompress
   * partitions), whose size is a function of the exact one; otherwise (HighlyCompressedMapStatus:
   * averages) only "has data" can be checked.
   */
  def sizeAgrees(actual: Long, reported: Long, exactSizes: Boolean): Boolean =
    if (exactSizes) MapStatus.decompressSize(MapStatus.compressSize(actual)) == reported
    else (actual > 0) == (reported > 0)
}

private[spark] class ChunkLedger(exactSizes: Boolean) {
  private case class Accepted(header: ChunkHeader, length: Long, crc: Int)

  // (partition, mapId) -> seq -> accepted chunk
  private val chunks = mutable.HashMap.empty[(Int, Long), mutable.HashMap[Int, Accepted]]

  private def of(partition: Int, mapId: Long) =
    chunks.getOrElseUpdate((partition, mapId), mutable.HashMap.empty)

  /**
   * True when a record with `ref`'s tag, length and CRC was accepted already for `partition`:
   * a copy listed again (another replica, a retry) need not be read.
   */
  def alreadyHave(partition: Int, ref: RecordRef): Boolean =
    chunks.get((partition, ref.tag)).exists(_.values.exists(a =>
      a.length == ref.length && a.crc == ref.crc))

  /**
   * Accepts a chunk read from `partition`'s object as record `ref`. True: new, its records are to
   * be read; false: a duplicate of an accepted chunk (same seq, same bytes), to be dropped.
   * ChunkFormatException when its header names another partition or attempt than where it is
   * stored; ChunkConflictException when its seq was accepted with other bytes.
   */
  def offer(partition: Int, ref: RecordRef, h: ChunkHeader): Boolean = {
    if (h.partition != partition || h.mapId != ref.tag) {
      throw new ChunkFormatException(s"chunk header says partition ${h.partition} map " +
        s"${h.mapId}, but it is stored in partition $partition with tag ${ref.tag}")
    }
    val bySeq = of(partition, h.mapId)
    bySeq.get(h.seq) match {
      case Some(a) if a.length == ref.length && a.crc == ref.crc && a.header == h => false
      case Some(a) =>
        throw new ChunkConflictException(s"map ${h.mapId} partition $partition: chunk seq " +
          s"${h.seq} seen twice with different bytes (${a.length} and ${ref.length} bytes)")
      case None =>
        bySeq(h.seq) = Accepted(h, ref.length, ref.crc)
        true
    }
  }

  /** Forgets an accepted chunk whose data could not be decoded, so a retry may bring it again. */
  def forget(partition: Int, mapId: Long, seq: Int): Unit =
    chunks.get((partition, mapId)).foreach(_.remove(seq))

  /** Data bytes accepted for (partition, mapId). */
  def dataBytes(partition: Int, mapId: Long): Long =
    chunks.get((partition, mapId)).map(_.values.map(_.header.dataLength).sum).getOrElse(0L)

  /** Why the accepted chunks do not prove e's whole output; None when they do. */
  def problem(e: ExpectedOutput): Option[String] = {
    val bySeq = chunks.getOrElse((e.partition, e.mapId), mutable.HashMap.empty[Int, Accepted])
    val lasts = bySeq.values.filter(_.header.last).map(_.header.seq).toSeq.sorted
    if (bySeq.isEmpty) {
      Some("no chunk found")
    } else if (lasts.isEmpty) {
      Some(s"no LAST chunk among seqs ${bySeq.keys.toSeq.sorted.mkString(",")}")
    } else if (lasts.size > 1) {
      Some(s"${lasts.size} LAST chunks (seqs ${lasts.mkString(",")})")
    } else {
      val last = lasts.head
      val missing = (0 to last).filterNot(bySeq.contains)
      val beyond = bySeq.keys.filter(_ > last)
      if (missing.nonEmpty) {
        Some(s"chunk seq(s) ${missing.take(10).mkString(",")} of 0..$last missing")
      } else if (beyond.nonEmpty) {
        Some(s"chunk(s) ${beyond.toSeq.sorted.mkString(",")} after the LAST chunk $last")
      } else {
        var sum = 0L
        var bad: Option[String] = None
        for (seq <- 0 to last if bad.isEmpty) {
          val h = bySeq(seq).header
          sum += h.dataLength
          if (h.cumulativeBytes != sum) {
            bad = Some(s"chunk seq $seq says ${h.cumulativeBytes} cumulative bytes, chunks " +
              s"0..$seq hold $sum")
          }
        }
        bad.orElse {
          if (ChunkLedger.sizeAgrees(sum, e.reportedSize, exactSizes)) None
          else Some(s"chunks hold $sum data bytes, the MapStatus reports ${e.reportedSize}")
        }
      }
    }
  }
}
