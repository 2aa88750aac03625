// RpmpClient in cluster mode (connectCluster) against a real local cluster (etcd + 2
// rpmp-proxy + 3 rpmp-server processes, LocalRpmpCluster): namespace admin
// (create/describe/delete recursive), R=2 writes and reads, one-sided record reads, and
// after the primary of a namespace is killed with destroyForcibly() every value still
// reads back from its replica, and new writes go through once the placement moved.
package io.rpmp.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class) // the server kill comes last
class RpmpClusterTest {
  private LocalRpmpCluster cluster;
  private RpmpClient client;

  @BeforeAll
  void startCluster() throws Exception {
    assertTrue(LocalRpmpCluster.available(),
        "needs " + LocalRpmpCluster.etcdBinary() + " and rpmp-server, rpmp-proxy, rpmpctl in "
            + LocalRpmpCluster.binDir());
    cluster = LocalRpmpCluster.start(3);
    client = RpmpClient.connectCluster(cluster.proxyList(), options());
  }

  private static RpmpClientOptions options() {
    return RpmpClientOptions.defaults()
        .timeout(Duration.ofSeconds(5))
        .retryFor(Duration.ofSeconds(30))
        .namespaceDefaults(2, 0, Duration.ofHours(1));
  }

  @AfterAll
  void stopCluster() {
    if (client != null) {
      client.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  @Order(1)
  void namespaceAdmin() throws Exception {
    assertTrue(client.isCluster());
    NamespaceInfo info = client.createNamespace("jt-admin/a", 2, 1, Duration.ofMinutes(30));
    assertEquals(2, info.replicas());
    assertEquals(1, info.minReplicas());
    assertEquals(Duration.ofMinutes(30), info.ttl());
    assertEquals(2, info.replicaNodes().size());
    assertTrue(info.replicaNodes().contains(info.primary()), info.toString());
    // Idempotent for equal options, ALREADY_EXISTS for different ones.
    assertEquals(info.replicaNodes(),
        client.createNamespace("jt-admin/a", 2, 1, Duration.ofMinutes(30)).replicaNodes());
    RpmpException different = assertThrows(RpmpException.class,
        () -> client.createNamespace("jt-admin/a", 3, 0, Duration.ZERO));
    assertEquals(RpmpException.ALREADY_EXISTS, different.code());
    // More replicas than live nodes.
    RpmpException tooMany = assertThrows(RpmpException.class,
        () -> client.createNamespace("jt-admin/b", 4, 0, Duration.ZERO));
    assertEquals(RpmpException.FAILED_PRECONDITION, tooMany.code(), tooMany.toString());
    assertEquals(info.replicaNodes(), client.describeNamespace("jt-admin/a").replicaNodes());
    client.touchNamespace("jt-admin/a");

    client.put("jt-admin/a", "k", new byte[] {1, 2, 3});
    client.put("jt-admin/c/d", "k", new byte[] {4}); // created on first write
    assertEquals(2, client.describeNamespace("jt-admin/c/d").replicas());
    assertEquals(Duration.ofHours(1), client.describeNamespace("jt-admin/c/d").ttl());

    List<String> deleted = client.deleteNamespaces("jt-admin", true);
    assertTrue(deleted.containsAll(List.of("jt-admin/a", "jt-admin/c/d")), deleted.toString());
    assertThrows(RpmpNotFoundException.class, () -> client.describeNamespace("jt-admin/a"));
    assertThrows(RpmpNotFoundException.class, () -> client.describeNamespace("jt-admin/c/d"));
    // Nothing left to match: NotFound (as the proxy answers).
    assertThrows(RpmpNotFoundException.class, () -> client.deleteNamespaces("jt-admin", true));
  }

  @Test
  @Order(2)
  void serverDirectClientHasNoClusterAdmin() throws Exception {
    try (RpmpClient direct = RpmpClient.connect(cluster.servers.get(0).address(),
        RpmpClientOptions.defaults().timeout(Duration.ofSeconds(5)))) {
      assertFalse(direct.isCluster());
      RpmpException e = assertThrows(RpmpException.class,
          () -> direct.createNamespace("x", 1, 0, Duration.ZERO));
      assertEquals(RpmpException.FAILED_PRECONDITION, e.code());
      assertEquals(RpmpException.FAILED_PRECONDITION,
          assertThrows(RpmpException.class, direct::clusterCounters).code());
    }
  }

  @Test
  @Order(2)
  void buffersForANamespaceCarryAppendsAndReads() throws Exception {
    String ns = "jt-routed/0";
    client.createNamespace(ns, 1, 0, Duration.ofHours(1));
    List<RpmpBuffer> bufs = new java.util.ArrayList<>();
    List<java.util.concurrent.CompletableFuture<Void>> appends = new java.util.ArrayList<>();
    for (int i = 1; i <= 8; i++) {
      byte[] v = RpmpClientTest.randomBytes(3000 + i * 40000, i);
      RpmpBuffer b = client.allocateBufferForWrite(ns, v.length);
      b.byteBuffer().duplicate().put(v);
      b.setSize(v.length);
      bufs.add(b);
      appends.add(client.appendAsync(ns, "log", b, i));
    }
    for (java.util.concurrent.CompletableFuture<Void> f : appends) {
      f.get(30, TimeUnit.SECONDS);
    }
    bufs.forEach(RpmpBuffer::close);
    ObjectMeta meta = client.getMeta(ns, "log");
    assertEquals(8, meta.records().size());
    for (RecordRef r : meta.records()) {
      try (RpmpBuffer b = client.readRecordAsync(r).get(30, TimeUnit.SECONDS)) {
        assertArrayEquals(
            RpmpClientTest.randomBytes(3000 + (int) r.tag() * 40000, (int) r.tag()), b.toByteArray());
      }
    }
    assertThrows(IllegalArgumentException.class, () -> client.allocateBufferForWrite(ns, -1));
    // Every append and read went out of the memory it was written or read in: no copies.
    ClusterCounters counters = client.clusterCounters();
    assertTrue(counters.serverConnections() >= 1, counters.toString());
    assertEquals(0, counters.stagedCopies(), counters.toString());
    assertEquals(0, counters.stagedBytes(), counters.toString());
    // Sums (the Spark plugin adds up the counters of a JVM's clients).
    ClusterCounters twice = counters.plus(counters);
    assertEquals(2 * counters.serverConnections(), twice.serverConnections());
    assertEquals(2 * counters.failoverRetries(), twice.failoverRetries());
    assertEquals(counters.serverConnections(), ClusterCounters.ZERO.plus(counters).serverConnections());
    client.deleteNamespaces("jt-routed", true);
  }

  @Test
  @Order(3)
  void readsSurviveAKilledServer() throws Exception {
    String ns = "jt-kill/0";
    NamespaceInfo info = client.createNamespace(ns, 2, 0, Duration.ofHours(1));
    Map<String, byte[]> values = new HashMap<>();
    for (int i = 0; i < 6; i++) {
      byte[] v = RpmpClientTest.randomBytes(1000 + i * 12000, i);
      client.put(ns, "k" + i, v);
      values.put("k" + i, v);
    }
    for (long tag = 1; tag <= 5; tag++) {
      client.append(ns, "part", RpmpClientTest.randomBytes(5000, (int) tag), tag);
    }
    ObjectMeta before = client.getMeta(ns, "part");
    assertEquals(5, before.records().size());
    for (RecordRef r : before.records()) {
      assertNotEquals(0L, r.nodeId(), r.toString());
      try (RpmpBuffer b = client.readRecord(r)) {
        assertArrayEquals(RpmpClientTest.randomBytes(5000, (int) r.tag()), b.toByteArray());
      }
    }

    // Kill the namespace's primary (found by asking each server its node id).
    LocalRpmpCluster.Child victim = null;
    for (LocalRpmpCluster.Child s : cluster.servers) {
      try (RpmpClient direct = RpmpClient.connect(s.address(),
          RpmpClientOptions.defaults().timeout(Duration.ofSeconds(5)))) {
        if (direct.nodeId() == info.primary()) {
          victim = s;
        }
      }
    }
    assertTrue(victim != null, "no server has node id " + info.primary());
    victim.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    assertFalse(victim.process.isAlive());

    // Reads fail over to the replica. (librpmp today keeps the cached placement after a
    // successful failover, so each of these calls first waits out the client timeout on
    // the dead primary: ~5 s per call here; hence only a few values.)
    for (Map.Entry<String, byte[]> e : values.entrySet()) {
      assertArrayEquals(e.getValue(), client.getBytes(ns, e.getKey()), e.getKey());
    }
    ObjectMeta after = client.getMeta(ns, "part");
    assertEquals(5, after.records().size());
    for (RecordRef r : after.records()) {
      assertNotEquals(info.primary(), r.nodeId(), "record listed by the dead node");
      try (RpmpBuffer b = client.readRecordAsync(r).get(30, TimeUnit.SECONDS)) {
        assertArrayEquals(RpmpClientTest.randomBytes(5000, (int) r.tag()), b.toByteArray());
      }
    }
    // Writes resume once the proxy substituted the dead member (within retryFor).
    client.put(ns, "after-kill", new byte[] {9, 9});
    assertArrayEquals(new byte[] {9, 9}, client.getBytes(ns, "after-kill"));
    client.deleteNamespaces("jt-kill", true);
  }
}
