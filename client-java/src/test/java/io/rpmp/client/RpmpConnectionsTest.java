// RpmpClientOptions.connections against a real 2-shard rpmp-server (docs/sharding.md): the
// number reaches librpmp through JNI (one session per connection, in the server's log),
// several connections per shard when it exceeds the shards, every value read back exact;
// out-of-range counts are refused before any connection.
package io.rpmp.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class RpmpConnectionsTest {
  private static RpmpServerProcess server;

  @BeforeAll
  static void startServer() throws Exception {
    server = RpmpServerProcess.start("512M", "64M", "--data-threads", "2");
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  private static int count(String text, String what) {
    int n = 0;
    for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1)) {
      n++;
    }
    return n;
  }

  /** Polls the server's log until `what` appears `want` times (5 s), returns the last count. */
  private static int awaitCount(String what, int want) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    int n;
    do {
      n = count(server.log(), what);
      if (n >= want) {
        return n;
      }
      Thread.sleep(20);
    } while (System.nanoTime() < deadline);
    return n;
  }

  @Test
  void fiveConnectionsToTwoShardsEachWithItsSession() throws Exception {
    RpmpClientOptions o =
        RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)).name("java-wide").connections(5);
    assertEquals(5, o.connections());
    try (RpmpClient c = RpmpClient.connect(server.address(), o)) {
      assertEquals(5, awaitCount("client 'java-wide'", 5));
      // Threads spread over the connections; every value reads back through the same client.
      List<CompletableFuture<Void>> writers = new ArrayList<>();
      for (int t = 0; t < 5; t++) {
        int thread = t;
        writers.add(
            CompletableFuture.runAsync(
                () -> {
                  for (int i = 0; i < 20; i++) {
                    byte[] v = RpmpClientTest.randomBytes(100 + thread * 1000 + i, thread * 100 + i);
                    try {
                      c.put("wide", "k-" + thread + "-" + i, v);
                    } catch (RpmpException e) {
                      throw new RuntimeException(e);
                    }
                  }
                }));
      }
      CompletableFuture.allOf(writers.toArray(new CompletableFuture<?>[0])).get(60, TimeUnit.SECONDS);
      for (int t = 0; t < 5; t++) {
        for (int i = 0; i < 20; i++) {
          assertArrayEquals(
              RpmpClientTest.randomBytes(100 + t * 1000 + i, t * 100 + i), c.getBytes("wide", "k-" + t + "-" + i));
        }
      }
    }
    // The default: one connection per shard.
    try (RpmpClient c =
        RpmpClient.connect(
            server.address(), RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)).name("java-default"))) {
      // Connect returns once every connection said HELLO: all are logged by then.
      assertEquals(2, awaitCount("client 'java-default'", 2));
    }
  }

  @Test
  void outOfRangeCountsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> RpmpClientOptions.defaults().connections(-1));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> RpmpClientOptions.defaults().connections(65));
    assertEquals("connections must be 0 (automatic) to 64, not 65", e.getMessage());
  }
}
