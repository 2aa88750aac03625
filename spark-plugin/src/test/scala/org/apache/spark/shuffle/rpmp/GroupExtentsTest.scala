// Unit tests of GroupExtents' pure parts: extent names (<group>/x<k>, k >= 1, no leading
// zeros: the proxy's nsname.Extent reads the same names) and which append failures count
// as "no space" (a split) and which do not. ClusterSplitTest covers the rest on a cluster.
package org.apache.spark.shuffle.rpmp

import io.rpmp.client.{RpmpNoSpaceException, RpmpUnavailableException}
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.Assertions._

class GroupExtentsTest {
  @Test
  def extentNamesRoundTrip(): Unit = {
    val g = "spark/app-run/3/g2"
    assertEquals(g, GroupExtents.extentName(g, 0))
    assertEquals(s"$g/x7", GroupExtents.extentName(g, 7))
    for (k <- Seq(0, 1, 9, 10, 999)) assertEquals((g, k), GroupExtents.parse(GroupExtents.extentName(g, k)))
    // Not extents: the name is its own group.
    for (ns <- Seq("x1", s"$g/x0", s"$g/x01", s"$g/x", s"$g/x1a", s"$g/g1", s"$g/x12345")) {
      assertEquals((ns, 0), GroupExtents.parse(ns), ns)
    }
  }

  @Test
  def onlyStoreSpaceAnswersSplit(): Unit = {
    assertTrue(GroupExtents.isNoSpace(new RpmpNoSpaceException(
      "no space: no pool can hold 262080 more bytes: pool p has about 4 of 64 bytes free")))
    assertTrue(GroupExtents.isNoSpace(new RpmpNoSpaceException("namespace 'a/g0': only 1 of " +
      "2 required copies written; last error: no space: replica x: no pool can hold 9 more bytes")))
    assertFalse(GroupExtents.isNoSpace(new RpmpNoSpaceException(
      "too many sessions from this client address: all 4 in use")))
    assertFalse(GroupExtents.isNoSpace(new RpmpUnavailableException("no pool can hold")))
  }
}
