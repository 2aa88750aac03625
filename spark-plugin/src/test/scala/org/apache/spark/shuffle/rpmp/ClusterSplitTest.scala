// Split instead of fail, on a real RPMP cluster (TestRpmpCluster: etcd + 2 proxies + 3
// rpmp-server with 64 MiB pools): a shuffle of about 150 MiB (incompressible, one copy)
// stored as 2 placement groups, so each group's node gets about 75 MiB, more than its
// pool. The groups fill, split into extents (<group>/x<k>) on the third node, and the job's
// per-partition counts and checksums still equal those computed without Spark; extents
// exist afterwards and every node holds part of the shuffle. Then a partition with chunks
// in an extent reads whole through RpmpShuffleReader, and once that extent is dropped the
// same read fails with FetchFailedException instead of returning part of the partition.
// Fails when etcd or rpmp-proxy is missing.
package org.apache.spark.shuffle.rpmp

import java.time.Duration

import scala.jdk.CollectionConverters._

import io.rpmp.client.{RpmpClient, RpmpClientOptions, RpmpNotFoundException}
import org.junit.jupiter.api.{AfterAll, BeforeAll, MethodOrderer, Order, Test, TestInstance, TestMethodOrder}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark.{HashPartitioner, MapOutputTrackerMaster, ShuffleDependency, SparkConf, SparkContext, SparkEnv, TaskContext}
import org.apache.spark.rdd.RDD
import org.apache.spark.shuffle.FetchFailedException

@TestInstance(Lifecycle.PER_CLASS)
@TestMethodOrder(classOf[MethodOrderer.OrderAnnotation])
class ClusterSplitTest {
  import ClusterSpreadTest.{crc, row}
  import ClusterSplitTest._

  private var cluster: TestRpmpCluster = _
  private var admin: RpmpClient = _
  private var sc: SparkContext = _
  private var rdd: RDD[(Int, Array[Byte])] = _
  private var got: Map[Int, (Long, Long)] = _
  private var splitsBefore = 0L

  @BeforeAll
  def start(): Unit = {
    assertTrue(TestRpmpCluster.available,
      s"needs ${TestRpmpCluster.etcd} and rpmp-proxy/rpmpctl in ${TestRpmpCluster.binDir}")
    cluster = TestRpmpCluster.start(3, poolSize = s"${PoolMiB}m")
    admin = RpmpClient.connectCluster(cluster.proxyList,
      RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)))
    sc = new SparkContext(new SparkConf()
      .setMaster("local[2]")
      .setAppName("rpmp-cluster-split-test")
      .set("spark.ui.enabled", "false")
      .set("spark.shuffle.manager", "io.rpmp.spark.PmofShuffleManager")
      .set(RpmpConf.ProxiesKey, cluster.proxyList)
      .set(RpmpConf.FallbackKey, "fail")
      .set(RpmpConf.ReplicasKey, "1")
      .set(RpmpConf.PlacementGroupsKey, "2")
      .set(RpmpConf.ReadRetriesKey, "1")
      .set(RpmpConf.ReadRetryWaitKey, "10ms")
      .set(RpmpConf.TimeoutKey, "20s"))
    splitsBefore = RpmpMetrics.splits.getCount
    rdd = sc.parallelize(0 until Rows, 8).map(i => (i, row(i)))
      .partitionBy(new HashPartitioner(Partitions))
    got = rdd.mapPartitionsWithIndex { (part, it) =>
      var n = 0L
      var sum = 0L
      it.foreach { case (_, b) => n += 1; sum += crc(b) }
      Iterator(part -> (n, sum))
    }.collect().toMap
  }

  @AfterAll
  def stop(): Unit = {
    if (sc != null) sc.stop()
    if (admin != null) admin.close()
    if (cluster != null) cluster.close()
  }

  private def coords = TestShuffles.coordinatesOf(rdd)
  private def group(g: Int) = s"${coords.namespace}/g$g"

  /** (partition, rows, sum of the rows' CRC-32s): order-independent. */
  private def expected: Map[Int, (Long, Long)] = {
    val p = new HashPartitioner(Partitions)
    (0 until Rows).groupBy(i => p.getPartition(i)).map { case (part, rows) =>
      part -> (rows.size.toLong, rows.map(i => crc(row(i))).sum)
    }
  }

  @Test
  @Order(1)
  def groupsThatFillSplitIntoExtentsAndTheShuffleIsExact(): Unit = {
    assertEquals(2, coords.groups)
    assertTrue(Rows.toLong * ClusterSpreadTest.RowBytes / 2 > (PoolMiB.toLong << 20),
      "each group gets more than one pool")
    assertEquals(expected, got)
    for (g <- 0 until 2) {
      val extents = GroupExtents.list(admin, group(g))
      assertTrue(extents.nonEmpty, s"group ${group(g)} did not split")
      // The extent avoids the node that was full.
      val base = admin.describeNamespace(group(g)).replicaNodes().asScala.toSet
      val first = admin.describeNamespace(extents.head).replicaNodes().asScala.toSet
      assertTrue(base.intersect(first).isEmpty, s"extent ${extents.head} on $first, group on $base")
    }
    assertTrue(RpmpMetrics.splits.getCount > splitsBefore, "no split counted")
    val usedPerNode = cluster.servers.map { s =>
      val c = RpmpClient.connect(s, RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)))
      try s -> c.stat().pools().asScala.map(_.used()).sum finally c.close()
    }.toMap
    usedPerNode.foreach { case (server, used) =>
      assertTrue(used > (PoolMiB.toLong << 20) / 8,
        s"$server holds only $used bytes of the shuffle: $usedPerNode")
    }
  }

  /** Reads partition p as a reduce task would: (rows, sum of CRCs). */
  private def read(p: Int, clients: RpmpClientCache, conf: RpmpConf): (Long, Long) = {
    val handle = rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleHandle
      .asInstanceOf[RpmpShuffleHandle[Int, _, Array[Byte]]]
    val context = TaskContext.empty()
    try {
      val reader = new RpmpShuffleReader[Int, Array[Byte]](handle, 0, coords.numMaps, p, p + 1,
        context, context.taskMetrics.createTempShuffleReadMetrics(), clients, conf,
        SparkEnv.get.mapOutputTracker.asInstanceOf[MapOutputTrackerMaster])
      var n = 0L
      var sum = 0L
      reader.read().foreach { kv => n += 1; sum += crc(kv._2) }
      (n, sum)
    } finally {
      context.markTaskCompleted(None)
    }
  }

  @Test
  @Order(2)
  def aDroppedExtentFailsTheReadInsteadOfReturningPart(): Unit = {
    val conf = RpmpConf(sc.getConf)
    val clients = new RpmpClientCache(conf, "split-test")
    try {
      val extent = GroupExtents.extentName(group(0), 1)
      // A partition of group 0 with chunks in its first extent.
      val p = (0 until Partitions by 2).find { p =>
        try !admin.getMeta(extent, p.toString).records().isEmpty
        catch { case _: RpmpNotFoundException => false }
      }.getOrElse(fail[Int](s"no partition of group 0 has chunks in $extent"))
      assertEquals(expected(p), read(p, clients, conf), s"partition $p read whole")
      admin.deleteNamespaces(extent, false)
      val e = assertThrows(classOf[FetchFailedException], () => read(p, clients, conf))
      assertTrue(e.getMessage.contains(s"partition $p"), e.getMessage)
      assertEquals(0, clients.liveBuffers, "RpmpBuffers left after the failed read")
    } finally clients.closeAll()
  }

  @Test
  @Order(3)
  def reduceTasksOfOneStageAttemptShareOneExtentListing(): Unit = {
    // GroupExtents.listForStage: the first reduce task of a stage attempt lists the group's
    // extents (a proxy call per extent name), the others reuse that; a new stage attempt
    // (after a map re-run) lists again, and list() always asks.
    val g = "spark/extent-listing-test/g0"
    assertEquals(Seq.empty[String], GroupExtents.listForStage(admin, g, 7, 0))
    admin.createNamespace(GroupExtents.extentName(g, 1), 1, 0, Duration.ofMinutes(10))
    try {
      assertEquals(Seq.empty[String], GroupExtents.listForStage(admin, g, 7, 0))
      assertEquals(Seq(s"$g/x1"), GroupExtents.listForStage(admin, g, 7, 1))
      assertEquals(Seq(s"$g/x1"), GroupExtents.listForStage(admin, g, 8, 0))
      assertEquals(Seq(s"$g/x1"), GroupExtents.list(admin, g))
    } finally admin.deleteNamespaces(GroupExtents.extentName(g, 1), false)
  }
}

object ClusterSplitTest {
  val PoolMiB = 64
  val Rows = 38000
  val Partitions = 12
}
