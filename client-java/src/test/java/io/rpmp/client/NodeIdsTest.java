// Unit tests of NodeIds: node ids print as rpmpctl prints them, even those above 2^63
// (negative as a Java long), in NamespaceInfo and RecordRef too (no server needed).
package io.rpmp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class NodeIdsTest {
  @Test
  void sixteenLowercaseHexDigits() {
    assertEquals("80ff37acd4d8f63f", NodeIds.hex(0x80ff37acd4d8f63fL));
    assertEquals("00000000000000a1", NodeIds.hex(0xa1L));
    assertEquals("[80ff37acd4d8f63f, 00000000000000a1]", NodeIds.hex(List.of(0x80ff37acd4d8f63fL, 0xa1L)));
  }

  @Test
  void toStringsUseTheHexForm() {
    NamespaceInfo ns = new NamespaceInfo("app/1", 2, 1, Duration.ZERO,
        List.of(0x80ff37acd4d8f63fL, 0xa1L), 0x80ff37acd4d8f63fL, false);
    assertTrue(ns.toString().contains("nodes=[80ff37acd4d8f63f, 00000000000000a1], primary=80ff37acd4d8f63f"),
        ns.toString());
    RecordRef r = new RecordRef(0, 1, 0, 0, 0, 0, 0x80ff37acd4d8f63fL);
    assertTrue(r.toString().contains("node=80ff37acd4d8f63f"), r.toString());
  }
}
