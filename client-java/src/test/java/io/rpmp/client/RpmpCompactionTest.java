// readRecord across the server's compaction, through JNI: refs from getMeta that were
// listed before compaction moved their records (and the old space was freed and
// reused) still read the right bytes, because the C++ client refetches the metadata.
package io.rpmp.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RpmpCompactionTest {
  static byte[] value(String key, int length, int version) {
    byte[] b = new byte[length];
    Arrays.fill(b, (byte) ('a' + (key.hashCode() + version) % 26));
    byte[] head = (key + "/" + version + ";").getBytes(java.nio.charset.StandardCharsets.UTF_8);
    System.arraycopy(head, 0, b, 0, head.length);
    return b;
  }

  @Test
  void refsListedBeforeCompactionMovedTheirRecordsStillReadRight() throws Exception {
    try (RpmpServerProcess server =
            RpmpServerProcess.start(
                "64M", "1M", "--compaction-grace", "50ms", "--compaction-rate", "256m");
        RpmpClient c =
            RpmpClient.connect(
                server.address(), RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)))) {
      int pins = 16;
      // Hot values first, so pin 0 too shares a segment with values that die (a
      // namespace's first segment is 4 KiB, docs/storage-format.md "Segment sizes": a pin
      // alone in it would never be moved).
      for (int j = 0; j < 8; j++) {
        c.put("jc", "hot" + (j % 4), value("hot", 16 << 10, j));
      }
      for (int i = 0; i < pins; i++) {
        c.put("jc", "pin" + i, value("pin" + i, 3000, 1));
        for (int j = 0; j < 8; j++) {
          c.put("jc", "hot" + (i % 4), value("hot", 16 << 10, j));
        }
      }
      List<RecordRef> held = new ArrayList<>();
      for (int i = 0; i < pins; i++) {
        held.add(c.getMeta("jc", "pin" + i).records().get(0));
      }
      // Overwrite the hot keys until compaction moved every pin, then a few MiB more
      // so the space the pins left is freed and reused.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      int moved = 0;
      int version = 100;
      while (moved < pins && System.nanoTime() < deadline) {
        for (int j = 0; j < 64; j++) {
          c.put("jc", "hot" + (j % 4), value("hot", 16 << 10, version++));
        }
        moved = 0;
        for (int i = 0; i < pins; i++) {
          if (c.getMeta("jc", "pin" + i).records().get(0).rmaAddr() != held.get(i).rmaAddr()) {
            moved++;
          }
        }
      }
      assertEquals(pins, moved, "compaction did not move every pin in time");
      for (int j = 0; j < 512; j++) {
        c.put("jc", "hot" + (j % 4), value("hot", 16 << 10, version++));
      }
      for (int i = 0; i < pins; i++) {
        try (RpmpBuffer got = c.readRecord(held.get(i))) {
          assertArrayEquals(value("pin" + i, 3000, 1), got.toByteArray(), "pin" + i);
        }
      }
      assertTrue(c.stat() != null);
    }
  }
}
