// The chunk format of an RPMP shuffle (docs/append-path.md section 2): every append a map
// attempt makes is a 32-byte header followed by `data_len` bytes of Spark's serialized,
// compressed stream for one partition. The header says which (map attempt, partition) the
// chunk belongs to, its sequence number, the cumulative data bytes of chunks 0..seq and
// whether it is the attempt's LAST chunk for that partition, so a reader can prove it holds
// a whole map output. Pure functions; any thread. Used by RpmpShuffleWriter (stamping, into
// header space reserved at the front of each partition buffer) and the reader (parsing).
package org.apache.spark.shuffle.rpmp

import java.io.IOException
import java.nio.{ByteBuffer, ByteOrder}

/** A chunk whose header is malformed (bad magic, version, lengths). */
private[spark] class ChunkFormatException(msg: String) extends IOException(msg)

/** A parsed chunk header; `dataLength` = record length - HeaderSize. */
private[spark] final case class ChunkHeader(
    partition: Int,
    seq: Int,
    cumulativeBytes: Long,
    mapId: Long,
    last: Boolean,
    dataLength: Long)

private[spark] object ShuffleChunk {
  val HeaderSize = 32
  /** "RPSC" as a little-endian u32. */
  val Magic = 0x43535052
  val Version: Byte = 1
  val FlagLast = 1

  /**
   * Stamps a header into bytes[0, 32) of a chunk whose data is bytes[32, 32 + dataLength).
   * `cumulativeBytes` counts data bytes of chunks 0..seq (this one included).
   */
  def writeHeader(
      bytes: Array[Byte],
      partition: Int,
      seq: Int,
      cumulativeBytes: Long,
      mapId: Long,
      last: Boolean): Unit = {
    require(bytes.length >= HeaderSize, s"chunk of ${bytes.length} bytes has no header space")
    require(partition >= 0 && seq >= 0 && cumulativeBytes >= 0,
      s"bad chunk header fields: partition $partition seq $seq cumulative $cumulativeBytes")
    val b = ByteBuffer.wrap(bytes, 0, HeaderSize).order(ByteOrder.LITTLE_ENDIAN)
    b.putInt(Magic)
    b.put(Version)
    b.put((if (last) FlagLast else 0).toByte)
    b.putShort(0)
    b.putInt(partition)
    b.putInt(seq)
    b.putLong(cumulativeBytes)
    b.putLong(mapId)
  }

  /** A header-only chunk (the LAST chunk when the final flush has no data). */
  def headerOnly(partition: Int, seq: Int, cumulativeBytes: Long, mapId: Long): Array[Byte] = {
    val bytes = new Array[Byte](HeaderSize)
    writeHeader(bytes, partition, seq, cumulativeBytes, mapId, last = true)
    bytes
  }

  /**
   * Parses the header at `chunk`'s position (not moved) of a record of `recordLength` bytes.
   * ChunkFormatException when the record is too short or the header is not a version-1 one.
   */
  def readHeader(chunk: ByteBuffer, recordLength: Long): ChunkHeader = {
    if (recordLength < HeaderSize || chunk.remaining() < HeaderSize) {
      throw new ChunkFormatException(
        s"record of $recordLength bytes is shorter than a $HeaderSize-byte chunk header")
    }
    val b = chunk.duplicate().order(ByteOrder.LITTLE_ENDIAN)
    val at = b.position()
    val magic = b.getInt(at)
    if (magic != Magic) {
      throw new ChunkFormatException(f"bad chunk magic 0x$magic%08x (want 0x$Magic%08x)")
    }
    val version = b.get(at + 4)
    if (version != Version) throw new ChunkFormatException(s"chunk version $version, want 1")
    val flags = b.get(at + 5)
    if ((flags & ~FlagLast) != 0 || b.getShort(at + 6) != 0) {
      throw new ChunkFormatException(s"unknown chunk flags $flags / reserved bits set")
    }
    val partition = b.getInt(at + 8)
    val seq = b.getInt(at + 12)
    val cumulative = b.getLong(at + 16)
    val dataLength = recordLength - HeaderSize
    if (partition < 0 || seq < 0 || cumulative < dataLength) {
      throw new ChunkFormatException(
        s"inconsistent chunk header: partition $partition seq $seq cumulative $cumulative " +
          s"data $dataLength")
    }
    ChunkHeader(partition, seq, cumulative, b.getLong(at + 24), (flags & FlagLast) != 0,
      dataLength)
  }
}
