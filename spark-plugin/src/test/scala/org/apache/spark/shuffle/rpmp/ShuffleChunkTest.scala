// Unit tests of the chunk header codec (ShuffleChunk): layout as docs/append-path.md
// section 2 gives it, round trip, and clear errors for malformed headers.
package org.apache.spark.shuffle.rpmp

import java.nio.{ByteBuffer, ByteOrder}

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class ShuffleChunkTest {
  @Test
  def layoutMatchesTheDocument(): Unit = {
    val bytes = new Array[Byte](32 + 5)
    ShuffleChunk.writeHeader(bytes, partition = 7, seq = 3, cumulativeBytes = 1005,
      mapId = 0x1122334455L, last = true)
    assertEquals("RPSC", new String(bytes, 0, 4, "US-ASCII"))
    val b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    assertEquals(1, b.get(4))
    assertEquals(1, b.get(5)) // LAST
    assertEquals(0, b.getShort(6))
    assertEquals(7, b.getInt(8))
    assertEquals(3, b.getInt(12))
    assertEquals(1005L, b.getLong(16))
    assertEquals(0x1122334455L, b.getLong(24))
  }

  @Test
  def roundTrips(): Unit = {
    val bytes = new Array[Byte](32 + 100)
    ShuffleChunk.writeHeader(bytes, 2, 0, 100, 42L, last = false)
    assertEquals(ChunkHeader(2, 0, 100, 42L, last = false, dataLength = 100),
      ShuffleChunk.readHeader(ByteBuffer.wrap(bytes), bytes.length))
    val only = ShuffleChunk.headerOnly(2, 1, 100, 42L)
    assertEquals(32, only.length)
    assertEquals(ChunkHeader(2, 1, 100, 42L, last = true, dataLength = 0),
      ShuffleChunk.readHeader(ByteBuffer.wrap(only), 32))
    // At a non-zero position.
    val shifted = ByteBuffer.allocate(40)
    shifted.position(8)
    shifted.put(only)
    shifted.position(8)
    assertEquals(1, ShuffleChunk.readHeader(shifted, 32).seq)
    assertEquals(8, shifted.position())
  }

  @Test
  def rejectsMalformedHeaders(): Unit = {
    def bad(mutate: Array[Byte] => Unit, length: Int = 40): Unit = {
      val bytes = new Array[Byte](40)
      ShuffleChunk.writeHeader(bytes, 1, 0, 8, 5L, last = true)
      mutate(bytes)
      assertThrows(classOf[ChunkFormatException],
        () => ShuffleChunk.readHeader(ByteBuffer.wrap(bytes), length))
    }
    bad(b => b(0) = 'X')             // magic
    bad(b => b(4) = 2)               // version
    bad(b => b(5) = 4)               // unknown flag
    bad(b => b(6) = 1)               // reserved
    bad(_ => (), length = 31)        // shorter than a header
    bad(b => b(16) = 7)              // cumulative (7) < this chunk's data (8)
    bad(b => b(11) = 0x80.toByte)    // negative partition
  }
}
