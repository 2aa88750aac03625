// MapStatuses on Spark 4.x: the MapStatus carries the writer's row checksum.
package org.apache.spark.shuffle.rpmp

import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class MapStatusesTest {
  @Test
  def mapStatusCarriesTheChecksumOnThisSpark(): Unit = {
    assertTrue(MapStatuses.carriesChecksum)
    val c = RpmpShuffleCoordinates("app", "1", 3, 10, 5, Seq("a:1"))
    val s = MapStatuses(RpmpMapWriter.location(c, 7L), Array(10L, 0L, 3L), 7L, 12345L)
    assertEquals(12345L, s.checksumValue)
    assertEquals(7L, s.mapId)
    assertEquals(0L, s.getSizeForBlock(1))
  }
}
