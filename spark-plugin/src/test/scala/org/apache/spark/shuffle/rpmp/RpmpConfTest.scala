// Unit tests of RpmpConf: defaults, parsing and rejection of bad values.
package org.apache.spark.shuffle.rpmp

import org.apache.spark.SparkConf
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.Test

class RpmpConfTest {
  @Test
  def defaults(): Unit = {
    val c = RpmpConf(new SparkConf(false).set(RpmpConf.ServerKey, "h:1"))
    assertEquals(Seq("h:1"), c.servers)
    assertEquals(1 << 20, c.pushBufferSize)
    assertEquals(48L << 20, c.maxBytesInFlight)
    assertEquals(30000L, c.timeoutMs)
    assertEquals(FallbackPolicy.Sort, c.fallback)
    assertEquals("auto", c.provider)
    assertFalse(c.clusterMode)
    assertEquals(2, c.replicas)
    assertEquals(24L * 3600, c.ttlSeconds)
    assertEquals(30000L, c.retryForMs)
    assertEquals(30000L, c.callTimeoutMs)
    assertEquals(WriterPath.Auto, c.writerPath)
    assertEquals(192 << 10, c.bypassChunkBytes)
    assertEquals(16L << 20, c.minFreeBytes)
    assertEquals(0, c.connections)
  }

  @Test
  def clientConnections(): Unit = {
    val base = new SparkConf(false).set(RpmpConf.ServerKey, "h:1")
    assertEquals(6, RpmpConf(base.clone.set(RpmpConf.ConnectionsKey, "6")).connections)
    for (bad <- Seq("-1", "65")) {
      val e = assertThrows(classOf[IllegalArgumentException], () =>
        RpmpConf(base.clone.set(RpmpConf.ConnectionsKey, bad)))
      assertTrue(e.getMessage.contains(s"spark.rpmp.client.connections must be in [0, 64]"), e.getMessage)
    }
  }

  @Test
  def roomForANewShuffle(): Unit = {
    val mib = 1L << 20
    // Enough pools with room (capped at the pools there are); none at all is left to
    // createNamespace to report.
    assertEquals(None, ShuffleRoom.shortage(Seq(40 * mib, 20 * mib, 1 * mib), 2, 16 * mib))
    assertEquals(None, ShuffleRoom.shortage(Seq(20 * mib), 3, 16 * mib))
    assertEquals(None, ShuffleRoom.shortage(Nil, 2, 16 * mib))
    assertEquals(None, ShuffleRoom.shortage(Seq(0L), 1, 0L))
    val why = ShuffleRoom.shortage(Seq(40 * mib, 3 * mib, 1 * mib), 2, 16 * mib)
    assertTrue(why.isDefined)
    assertTrue(why.get.contains("needs 16.0 MiB") && why.get.contains("each of 2 pool(s)") &&
      why.get.contains("40.0 MiB") && why.get.contains("3.0 MiB") && why.get.contains("44.0 MiB"),
      why.get)
    assertThrows(classOf[IllegalArgumentException], () =>
      RpmpConf(new SparkConf(false).set(RpmpConf.ServerKey, "h:1").set(RpmpConf.MinFreeSpaceKey, "-1")))
  }

  @Test
  def clusterMode(): Unit = {
    val c = RpmpConf(new SparkConf(false)
      .set(RpmpConf.ProxiesKey, "p1:7410, p2:7411")
      .set(RpmpConf.ReplicasKey, "3")
      .set(RpmpConf.TtlKey, "2h")
      .set(RpmpConf.RetryForKey, "10s")
      .set(RpmpConf.TimeoutKey, "5s"), Map.empty[String, String])
    assertTrue(c.clusterMode)
    assertEquals(Seq("p1:7410", "p2:7411"), c.proxies)
    assertEquals(Nil, c.servers)
    assertEquals(3, c.replicas)
    assertEquals(7200L, c.ttlSeconds)
    assertEquals(15000L, c.callTimeoutMs)
    // Env RPMP_PROXIES only when neither key is set.
    val env = Map(RpmpConf.ProxiesEnv -> "e:1,f:2")
    assertEquals(Seq("e:1", "f:2"), RpmpConf(new SparkConf(false), env).proxies)
    assertFalse(RpmpConf(new SparkConf(false).set(RpmpConf.ServerKey, "h:1"), env).clusterMode)
    assertFalse(RpmpConf(new SparkConf(false), Map.empty[String, String]).clusterMode)
  }

  @Test
  def placementGroups(): Unit = {
    // One group: the shuffle's own namespace, as before placement groups.
    val one = RpmpShuffleCoordinates("app", "2", 3, 10, 5, Nil, Seq("p:1"))
    assertEquals(Seq("spark/app-2/3"), one.namespaces)
    assertEquals("spark/app-2/3", one.namespaceOf(4))
    // Three groups of 5 partitions: runs of one, partition p in group p % 3, each group a
    // child of the shuffle's namespace.
    val three = one.copy(groups = 3)
    assertEquals(Seq("spark/app-2/3/g0", "spark/app-2/3/g1", "spark/app-2/3/g2"), three.namespaces)
    assertEquals("spark/app-2/3/g1", three.namespaceOf(4))
    assertEquals("spark/app-2/3/g0", three.namespaceOf(3))
    // Many partitions: runs of consecutive partitions per group (at most 32, at least 8 runs
    // a group), every group used, shares within one run of each other.
    val wide = RpmpShuffleCoordinates("app", "2", 3, 10, 2000, Nil, Seq("p:1"), groups = 6)
    assertEquals((0 until 32).map(_ => 0), (0 until 32).map(wide.groupOf))
    assertEquals(1, wide.groupOf(32))
    assertEquals(0, wide.groupOf(6 * 32))
    val shares = (0 until 2000).groupBy(wide.groupOf).map { case (g, ps) => g -> ps.size }
    assertEquals((0 until 6).toSet, shares.keySet)
    assertTrue(shares.values.max - shares.values.min <= 32, s"shares $shares")
    // Runs shrink with the partitions per group: 200 partitions in 6 groups, runs of 4.
    val mid = wide.copy(numPartitions = 200)
    assertEquals(Seq(0, 0, 0, 0, 1, 1, 1, 1, 2), (0 until 9).map(mid.groupOf))
    assertEquals((0 until 6).toSet, (0 until 200).map(mid.groupOf).toSet)
    // Pushing many partitions at once goes group by group: every id once, each group's
    // ids together and ascending, the groups in order.
    val order = mid.partitionsByGroup.toSeq
    assertEquals((0 until 200).toSet, order.toSet)
    assertEquals(200, order.size)
    assertEquals(Seq(0, 1, 2, 3, 24, 25, 26, 27, 48), order.take(9))
    assertEquals(order.map(mid.groupOf).sorted, order.map(mid.groupOf))
    assertEquals((0 until 5).toSeq, three.copy(groups = 1).partitionsByGroup.toSeq)
    // Auto: twice the live nodes, at most the partitions; 1 without a node map.
    assertEquals(6, RpmpShuffleManager.placementGroups(0, 200, Some(3)))
    assertEquals(4, RpmpShuffleManager.placementGroups(0, 4, Some(3)))
    assertEquals(1, RpmpShuffleManager.placementGroups(0, 200, None))
    assertEquals(5, RpmpShuffleManager.placementGroups(5, 200, Some(3)))
    assertEquals(1, RpmpShuffleManager.placementGroups(5, 0, Some(3)))
    assertEquals(7, RpmpConf(new SparkConf(false).set(RpmpConf.PlacementGroupsKey, "7")).placementGroups)
    assertThrows(classOf[IllegalArgumentException], () =>
      RpmpConf(new SparkConf(false).set(RpmpConf.PlacementGroupsKey, "-1")))
  }

  @Test
  def clusterCoordinates(): Unit = {
    val c = RpmpShuffleCoordinates("app", "2", 3, 10, 5, Nil, Seq("p1:7410", "p2:7411"))
    assertTrue(c.clusterMode)
    assertEquals("cluster:p1:7410,p2:7411", c.serverFor(0))
    assertEquals(c.serverFor(0), c.serverFor(4))
    // The location is synthetic: neither a proxy's, a server's nor an executor's host.
    val loc = RpmpMapWriter.location(c, 17L)
    assertEquals("rpmp-shuffle-3", loc.executorId)
    assertEquals(RpmpMapWriter.SyntheticHost, loc.host)
    assertTrue(loc.host.endsWith(".invalid"))
  }

  @Test
  def parsesValues(): Unit = {
    val c = RpmpConf(new SparkConf(false)
      .set(RpmpConf.ServerKey, "a:1, b:2")
      .set(RpmpConf.PushBufferSizeKey, "64k")
      .set(RpmpConf.MaxBytesInFlightKey, "8m")
      .set(RpmpConf.TimeoutKey, "5s")
      .set(RpmpConf.FallbackKey, "FAIL")
      .set(RpmpConf.WriterPathKey, " Bypass")
      .set(RpmpConf.BypassChunkSizeKey, "1m"))
    assertEquals(Seq("a:1", "b:2"), c.servers)
    assertEquals(64 << 10, c.pushBufferSize)
    assertEquals(8L << 20, c.maxBytesInFlight)
    assertEquals(5000L, c.timeoutMs)
    assertEquals(FallbackPolicy.Fail, c.fallback)
    assertEquals(WriterPath.Bypass, c.writerPath)
    assertEquals(1 << 20, c.bypassChunkBytes)
  }

  @Test
  def rejectsBadValues(): Unit = {
    def conf(k: String, v: String) = new SparkConf(false).set(RpmpConf.ServerKey, "h:1").set(k, v)
    assertThrows(classOf[IllegalArgumentException],
      () => RpmpConf(conf(RpmpConf.ServerKey, "no-port")))
    assertThrows(classOf[IllegalArgumentException],
      () => RpmpConf(conf(RpmpConf.FallbackKey, "maybe")))
    val path = assertThrows(classOf[IllegalArgumentException],
      () => RpmpConf(conf(RpmpConf.WriterPathKey, "fast")))
    assertTrue(path.getMessage.contains("auto|bypass|sort|buffers"), path.getMessage)
    for (bad <- Seq("1k", "512m")) {
      val e = assertThrows(classOf[IllegalArgumentException],
        () => RpmpConf(conf(RpmpConf.BypassChunkSizeKey, bad)))
      assertTrue(e.getMessage.contains(RpmpConf.BypassChunkSizeKey), e.getMessage)
    }
    // Both modes at once.
    assertThrows(classOf[IllegalArgumentException],
      () => RpmpConf(conf(RpmpConf.ProxiesKey, "p:1")))
    def cluster(k: String, v: String) =
      new SparkConf(false).set(RpmpConf.ProxiesKey, "p:1").set(k, v)
    assertThrows(classOf[IllegalArgumentException],
      () => RpmpConf(cluster(RpmpConf.ProxiesKey, "no-port")))
    assertThrows(classOf[IllegalArgumentException],
      () => RpmpConf(cluster(RpmpConf.ProxiesKey, " , ")))
    assertThrows(classOf[IllegalArgumentException],
      () => RpmpConf(cluster(RpmpConf.ReplicasKey, "0")))
  }

  @Test
  def placesPartitionsOnServers(): Unit = {
    val c = RpmpShuffleCoordinates("app", "run7", 3, 10, 5, Seq("a:1", "b:2"))
    assertEquals("spark/app-run7/3", c.namespace)
    // Two runs (application attempts) of one appId never share a namespace.
    assertNotEquals(c.namespace, c.copy(runId = "run8").namespace)
    assertThrows(classOf[IllegalArgumentException], () => c.copy(runId = ""))
    assertEquals("a:1", c.serverFor(0))
    assertEquals("b:2", c.serverFor(3))
    assertEquals("4", c.partitionKey(4))
  }

  @Test
  def refusesSettingsItCannotHonour(): Unit = {
    val old = assertThrows(classOf[IllegalArgumentException], () => RpmpConf.checkSparkSettings(
      new SparkConf(false).set("spark.shuffle.useOldFetchProtocol", "true")))
    assertTrue(old.getMessage.contains("spark.shuffle.useOldFetchProtocol"), old.getMessage)
    val push = assertThrows(classOf[IllegalArgumentException], () => RpmpConf.checkSparkSettings(
      new SparkConf(false).set("spark.shuffle.push.enabled", "true")))
    assertTrue(push.getMessage.contains("spark.shuffle.push.enabled"), push.getMessage)
    // The manager refuses them at construction, before any shuffle.
    assertThrows(classOf[IllegalArgumentException], () => new RpmpShuffleManager(
      new SparkConf(false).set(RpmpConf.ServerKey, "h:1")
        .set("spark.shuffle.useOldFetchProtocol", "true"), true))
    RpmpConf.checkSparkSettings(new SparkConf(false)
      .set("spark.shuffle.useOldFetchProtocol", "false").set("spark.shuffle.push.enabled", "false"))
  }

  @Test
  def namespaceKeeperPeriodIsAThirdOfTheTtl(): Unit = {
    assertEquals(0L, new NamespaceKeeper(0, () => ()).periodMs) // ttl 0: never expires
    assertEquals(1000L, new NamespaceKeeper(2, () => ()).periodMs)
    assertEquals(8 * 3600 * 1000L, new NamespaceKeeper(24 * 3600, () => ()).periodMs)
  }
  @Test
  def authSecret(): Unit = {
    def conf = new SparkConf(false).set(RpmpConf.ServerKey, "h:1")
    assertTrue(RpmpConf(conf).authSecret.isEmpty)  // none: librpmp reads RPMP_SECRET_FILE
    val s = RpmpConf(conf.set(RpmpConf.AuthSecretKey, "0123456789abcdef-secret")).authSecret
    assertArrayEquals("0123456789abcdef-secret".getBytes("UTF-8"), s.value)
    assertFalse(s.toString.contains("0123"))  // never printed, also not through RpmpConf
    assertFalse(RpmpConf(conf.set(RpmpConf.AuthSecretKey, "0123456789abcdef-secret")).toString
      .contains("0123"))
    val f = java.nio.file.Files.createTempFile("rpmp-secret", "")
    try {
      java.nio.file.Files.write(f, "from-a-file-0123456789\n".getBytes("UTF-8"))
      val fromFile = RpmpConf(conf.set(RpmpConf.AuthSecretFileKey, f.toString)).authSecret
      assertArrayEquals("from-a-file-0123456789".getBytes("UTF-8"), fromFile.value)
      val both = assertThrows(classOf[IllegalArgumentException], () =>
        RpmpConf(conf.set(RpmpConf.AuthSecretKey, "0123456789abcdef-secret")
          .set(RpmpConf.AuthSecretFileKey, f.toString)))
      assertTrue(both.getMessage.contains("not both"))
    } finally java.nio.file.Files.delete(f)
    val missing = assertThrows(classOf[IllegalArgumentException], () =>
      RpmpConf(conf.set(RpmpConf.AuthSecretFileKey, "/nonexistent/rpmp.secret")))
    assertTrue(missing.getMessage.contains(RpmpConf.AuthSecretFileKey))
    val short = assertThrows(classOf[IllegalArgumentException], () =>
      RpmpConf(conf.set(RpmpConf.AuthSecretKey, "short")))
    assertTrue(short.getMessage.contains("at least 16 bytes"))
    val refused = new RpmpAuthException(
      new io.rpmp.client.RpmpException(io.rpmp.client.RpmpException.PERMISSION_DENIED, "wrong cluster secret"))
    assertTrue(refused.getMessage.contains(RpmpConf.AuthSecretKey))
    assertTrue(refused.getMessage.contains("wrong cluster secret"))
  }
}
