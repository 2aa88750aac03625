// Real Spark jobs (local[2]) through io.rpmp.spark.PmofShuffleManager in cluster mode
// (spark.rpmp.proxies) against a real local RPMP cluster (TestRpmpCluster: etcd + 2
// rpmp-proxy + 3 rpmp-server): results equal plain Scala; each shuffle is a namespace with
// spark.rpmp.replicas (capped at the live node count) and spark.rpmp.ttl; stop() deletes
// spark/<appId>-<runId> recursively; a job longer than the ttl keeps its shuffle. Fails when
// etcd or rpmp-proxy is missing.
package org.apache.spark.shuffle.rpmp

import java.time.Duration

import scala.jdk.CollectionConverters._

import io.rpmp.client.{RpmpClient, RpmpClientOptions, RpmpNotFoundException}
import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark.{ShuffleDependency, SparkConf, SparkContext}
import org.apache.spark.rdd.RDD

@TestInstance(Lifecycle.PER_CLASS)
class PmofShuffleClusterTest {
  private var cluster: TestRpmpCluster = _
  private var client: RpmpClient = _

  @BeforeAll
  def startCluster(): Unit = {
    assertTrue(TestRpmpCluster.available,
      s"needs ${TestRpmpCluster.etcd} and rpmp-proxy/rpmpctl in ${TestRpmpCluster.binDir}")
    cluster = TestRpmpCluster.start(3)
    client = RpmpClient.connectCluster(cluster.proxyList,
      RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)))
  }

  @AfterAll
  def stopCluster(): Unit = {
    if (client != null) client.close()
    if (cluster != null) cluster.close()
  }

  private def sparkConf(): SparkConf = new SparkConf()
    .setMaster("local[2]")
    .setAppName("rpmp-cluster-test")
    .set("spark.ui.enabled", "false")
    .set("spark.shuffle.manager", "io.rpmp.spark.PmofShuffleManager")
    .set(RpmpConf.ProxiesKey, cluster.proxyList)
    .set(RpmpConf.FallbackKey, "fail")
    .set(RpmpConf.PushBufferSizeKey, "4k")
    .set(RpmpConf.TimeoutKey, "10s")

  private def data(sc: SparkContext): RDD[(Int, String)] =
    sc.parallelize(0 until 20000, 4).map(i => (i % 997, "v" * (i % 50) + i))

  private def expected = (0 until 20000).map(i => (i % 997, "v" * (i % 50) + i))

  private def shuffleId(rdd: RDD[_]): Int =
    rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleId

  private def namespaceOf(rdd: RDD[_]): String = TestShuffles.namespaceOf(rdd)

  @Test
  def jobsMatchPlainScalaAndStopDeletesTheApp(): Unit = {
    var app: String = null
    var ns: String = null
    val sc = new SparkContext(sparkConf().set(RpmpConf.ReplicasKey, "2").set(RpmpConf.TtlKey, "2h"))
    try {
      app = sc.applicationId
      val grouped = data(sc).groupByKey(5).mapValues(_.toSeq.sorted).collect().toMap
      assertEquals(expected.groupBy(_._1).map { case (k, v) => k -> v.map(_._2).sorted }, grouped)
      val reducedRdd = data(sc).mapValues(_.length.toLong).reduceByKey(_ + _, 3)
      val reduced = reducedRdd.collect().toMap
      assertEquals(
        expected.groupBy(_._1).map { case (k, v) => k -> v.map(_._2.length.toLong).sum }, reduced)
      val sorted = data(sc).map { case (k, v) => (v, k) }.sortByKey(numPartitions = 4).keys.collect()
      assertEquals(expected.map(_._2).sorted, sorted.toSeq)

      // Placement groups: 3 partitions over min(3, 2 x 3 live nodes) groups, each its own
      // namespace with 2 copies; together they use every node.
      val coords = TestShuffles.coordinatesOf(reducedRdd)
      assertEquals(3, coords.groups)
      ns = coords.namespaceOf(0)
      val nodes = coords.namespaces.flatMap { g =>
        val info = client.describeNamespace(g)
        assertEquals(2, info.replicas())
        assertEquals(2, info.replicaNodes().size())
        assertEquals(Duration.ofHours(2), info.ttl())
        info.replicaNodes().asScala.map(_.longValue)
      }.toSet
      assertFalse(client.list(ns).isEmpty, s"nothing stored in $ns")
      assertEquals(3, nodes.size, s"the groups' copies are on nodes $nodes, not on all 3")
      // The rpmp Source's cluster gauges read this JVM's cluster client: it connected to
      // the servers, and the writers' and reader's buffers needed no staging copy.
      def gauge(name: String) =
        RpmpMetrics.registry.getGauges.get(name).getValue.asInstanceOf[Long]
      assertTrue(gauge("serverConnections") >= 1, "serverConnections")
      assertEquals(0L, gauge("stagedCopies"))
      assertEquals(0L, gauge("failoverRetries"), "no server failed: nothing retried")
    } finally sc.stop()
    assertThrows(classOf[RpmpNotFoundException], () => client.describeNamespace(ns))
    // Nothing under spark/<appId>-<runId> left to delete.
    val appPrefix = ns.split('/').take(2).mkString("/")
    assertThrows(classOf[RpmpNotFoundException], () => client.deleteNamespaces(appPrefix, true))
  }

  @Test
  def replicasAreCappedAtTheLiveNodeCount(): Unit = {
    val sc = new SparkContext(sparkConf().set(RpmpConf.ReplicasKey, "5"))
    try {
      val rdd = data(sc).mapValues(_ => 1).reduceByKey(_ + _, 2)
      assertEquals(997, rdd.count())
      val info = client.describeNamespace(
        namespaceOf(rdd))
      assertEquals(3, info.replicas(), info.toString)
    } finally sc.stop()
  }

  @Test
  def aJobLongerThanTheTtlKeepsItsShuffle(): Unit = {
    val sc = new SparkContext(sparkConf().set(RpmpConf.TtlKey, "2s"))
    try {
      val rdd = data(sc).mapValues(_ => 1).reduceByKey(_ + _, 2)
      assertEquals(997, rdd.count())
      val ns = namespaceOf(rdd)
      // Three ttls (the proxy checks every 300 ms): untouched, the namespace would be gone.
      val until = System.nanoTime() + 6L * 1000000000L
      while (System.nanoTime() < until) {
        assertEquals(ns, client.describeNamespace(ns).name(), "namespace expired mid-job")
        Thread.sleep(200)
      }
      // The second job reuses the map outputs (its map stage is skipped) and reads them.
      assertEquals(expected.groupBy(_._1).map { case (k, v) => k -> v.size },
        rdd.collect().toMap)
    } finally sc.stop()
  }
}
