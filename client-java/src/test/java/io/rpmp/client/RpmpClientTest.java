// End-to-end tests of RpmpClient against a real rpmp-server (1 GiB pool): round trips,
// records with tags, errors mapped to exceptions, raw memory, futures and close().
package io.rpmp.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RpmpClientTest {
  private static RpmpServerProcess server;
  private static RpmpClient client;

  @BeforeAll
  static void startServer() throws Exception {
    server = RpmpServerProcess.start("1G");
    client =
        RpmpClient.connect(
            server.address(), RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)));
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  static byte[] randomBytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 4096, 8 << 20})
  void zeroCopyPutGetRoundTrip(int size) throws Exception {
    byte[] data = randomBytes(size, size);
    try (RpmpBuffer buf = client.allocateBuffer(size)) {
      buf.byteBuffer().duplicate().put(data);
      buf.setSize(size);
      client.put("rt", "zc-" + size, buf);
    }
    try (RpmpBuffer got = client.get("rt", "zc-" + size)) {
      assertEquals(size, got.size());
      assertArrayEquals(data, got.toByteArray());
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 4096, 8 << 20})
  void copyingPutGetRoundTrip(int size) throws Exception {
    byte[] data = randomBytes(size, size + 1);
    client.put("rt", "heap-" + size, data);
    assertArrayEquals(data, client.getBytes("rt", "heap-" + size));

    ByteBuffer direct = ByteBuffer.allocateDirect(size + 3);
    direct.position(3);
    direct.put(data).position(3);
    client.put("rt", "direct-" + size, direct);
    assertEquals(3, direct.position());
    try (RpmpBuffer got = client.getAsync("rt", "direct-" + size).get(30, TimeUnit.SECONDS)) {
      assertArrayEquals(data, got.toByteArray());
    }
  }

  @Test
  void appendWithTagsThenMetaAndReadRecord() throws Exception {
    byte[][] parts = {randomBytes(100, 1), randomBytes(5000, 2), randomBytes(1, 3)};
    long[] tags = {7, 8, 7};
    for (int i = 0; i < parts.length; i++) {
      client.append("rec", "k", parts[i], tags[i]);
    }
    ObjectMeta meta = client.getMeta("rec", "k");
    assertEquals(5101, meta.totalLength());
    assertEquals(3, meta.records().size());
    ObjectMeta sevens = client.getMetaOfTags("rec", "k", new long[] {7, 42});
    assertEquals(5101, sevens.totalLength());
    assertEquals(2, sevens.records().size());
    assertEquals(100, sevens.records().get(0).length());
    assertEquals(1, sevens.records().get(1).length());
    assertEquals(3, client.getMetaOfTags("rec", "k", new long[0]).records().size());
    for (int i = 0; i < parts.length; i++) {
      RecordRef r = meta.records().get(i);
      assertEquals(tags[i], r.tag());
      assertEquals(parts[i].length, r.length());
      try (RpmpBuffer b = client.readRecord(r)) {
        assertArrayEquals(parts[i], b.toByteArray());
      }
      try (RpmpBuffer b = client.readRecordAsync(r).get(30, TimeUnit.SECONDS)) {
        assertArrayEquals(parts[i], b.toByteArray());
      }
    }
    // All records into one buffer at their offsets, in parallel.
    try (RpmpBuffer all = client.allocateBuffer(5101)) {
      CompletableFuture<?>[] reads = new CompletableFuture<?>[3];
      int offset = 0;
      for (int i = 0; i < 3; i++) {
        reads[i] = client.readRecordAsync(meta.records().get(i), all, offset);
        offset += parts[i].length;
      }
      CompletableFuture.allOf(reads).get(30, TimeUnit.SECONDS);
      assertEquals(5101, all.size());
      assertArrayEquals(client.getBytes("rec", "k"), all.toByteArray());
    }
  }

  @Test
  void parallelReadsIntoOneBufferCountEveryByte() throws Exception {
    // Reads of disjoint ranges complete on different threads; the buffer's size must end at
    // the furthest range whatever order they finish in (CI once saw 100 of 5101 here).
    int n = 32;
    int total = 0;
    for (int i = 0; i < n; i++) {
      client.append("par", "k", randomBytes(1 + i * 37, i), 0);
      total += 1 + i * 37;
    }
    ObjectMeta meta = client.getMeta("par", "k");
    byte[] whole = client.getBytes("par", "k");
    for (int round = 0; round < 20; round++) {
      try (RpmpBuffer all = client.allocateBuffer(total)) {
        CompletableFuture<?>[] reads = new CompletableFuture<?>[n];
        int offset = 0;
        for (int i = 0; i < n; i++) {
          reads[i] = client.readRecordAsync(meta.records().get(i), all, offset);
          offset += (int) meta.records().get(i).length();
        }
        CompletableFuture.allOf(reads).get(30, TimeUnit.SECONDS);
        assertEquals(total, all.size(), "round " + round);
        assertArrayEquals(whole, all.toByteArray());
      }
    }
  }

  @Test
  void asyncAppendsComplete() throws Exception {
    CompletableFuture<?>[] futures = new CompletableFuture<?>[50];
    for (int i = 0; i < futures.length; i++) {
      futures[i] = client.appendAsync("async", "k", ByteBuffer.wrap(new byte[] {(byte) i}), i);
    }
    CompletableFuture.allOf(futures).get(30, TimeUnit.SECONDS);
    ObjectMeta meta = client.getMeta("async", "k");
    assertEquals(50, meta.records().size());
    try (RpmpBuffer b = client.allocateBuffer(64)) {
      b.byteBuffer().put(0, (byte) 42);
      b.setSize(1);
      client.putAsync("async", "zc", b, 0).get(30, TimeUnit.SECONDS);
      assertArrayEquals(new byte[] {42}, client.getBytes("async", "zc"));
    }
  }

  @Test
  void missingKeysThrowNotFound() {
    assertThrows(RpmpNotFoundException.class, () -> client.getBytes("nope", "nope"));
    assertThrows(RpmpNotFoundException.class, () -> client.getMeta("nope", "nope"));
    assertThrows(RpmpNotFoundException.class, () -> client.delete("nope", "nope"));
    ExecutionException e =
        assertThrows(
            ExecutionException.class,
            () -> client.getAsync("nope", "nope").get(30, TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof RpmpNotFoundException, e.getCause().toString());
    assertEquals(RpmpException.NOT_FOUND, ((RpmpException) e.getCause()).code());
  }

  @Test
  void listDeleteAndNamespaces() throws Exception {
    for (String k : new String[] {"a", "b", "c"}) {
      client.put("ns-list", k, k.getBytes());
    }
    List<String> keys =
        client.list("ns-list").stream().map(KeyInfo::key).sorted().collect(Collectors.toList());
    assertEquals(List.of("a", "b", "c"), keys);
    client.delete("ns-list", "b");
    assertThrows(RpmpNotFoundException.class, () -> client.getBytes("ns-list", "b"));
    client.deleteNamespace("ns-list");
    assertThrows(RpmpNotFoundException.class, () -> client.getBytes("ns-list", "a"));
    ServerStats stats = client.stat();
    assertTrue(stats.pools().size() >= 1);
    assertTrue(stats.pools().get(0).capacity() > 0);
  }

  @Test
  void rawMemoryRoundTrip() throws Exception {
    GlobalAddress a = client.alloc(1 << 16);
    assertEquals(a, GlobalAddress.parse(a.toString()));
    byte[] data = randomBytes(1 << 16, 9);
    client.write(a, ByteBuffer.wrap(data));
    ByteBuffer back = ByteBuffer.allocateDirect(1000);
    client.read(a.plus(100), back);
    byte[] expected = new byte[1000];
    System.arraycopy(data, 100, expected, 0, 1000);
    byte[] actual = new byte[1000];
    back.get(actual);
    assertArrayEquals(expected, actual);
    client.free(a);
  }

  @Test
  void closedClientThrowsIllegalState() throws Exception {
    RpmpClient c = RpmpClient.connect(server.address(), RpmpClientOptions.defaults());
    RpmpBuffer b = c.allocateBuffer(10);
    c.put("closing", "k", new byte[] {1});
    c.close();
    c.close(); // idempotent
    assertTrue(b.isClosed());
    assertThrows(IllegalStateException.class, () -> c.getBytes("closing", "k"));
    assertThrows(IllegalStateException.class, () -> c.allocateBuffer(1));
    b.close();
  }

  @Test
  void liveBufferCountFollowsAllocateAndClose() throws Exception {
    RpmpClient c = RpmpClient.connect(server.address(), RpmpClientOptions.defaults());
    try {
      assertEquals(0, c.liveBufferCount());
      RpmpBuffer a = c.allocateBuffer(100);
      RpmpBuffer b = c.allocateBuffer(100);
      assertEquals(2, c.liveBufferCount());
      a.close();
      a.close(); // idempotent
      assertEquals(1, c.liveBufferCount());
      b.close();
      assertEquals(0, c.liveBufferCount());
    } finally {
      c.close();
    }
  }

  @Test
  void closeDoesNotRaceBufferFrees() throws Exception {
    // Threads free buffers while the client closes: every buffer is freed exactly once,
    // before the native client goes (a free after it would touch freed memory).
    for (int round = 0; round < 20; round++) {
      RpmpClient c = RpmpClient.connect(server.address(), RpmpClientOptions.defaults());
      RpmpBuffer[] buffers = new RpmpBuffer[200];
      for (int i = 0; i < buffers.length; i++) {
        buffers[i] = c.allocateBuffer(4096);
      }
      Thread[] freers = new Thread[4];
      for (int t = 0; t < freers.length; t++) {
        final int first = t;
        freers[t] =
            new Thread(
                () -> {
                  for (int i = first; i < buffers.length; i += freers.length) {
                    buffers[i].close();
                  }
                });
        freers[t].start();
      }
      c.close();
      for (Thread t : freers) {
        t.join();
      }
      for (RpmpBuffer b : buffers) {
        assertTrue(b.isClosed());
      }
      assertEquals(0, c.liveBufferCount());
    }
  }
}
