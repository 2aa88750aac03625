// Real Spark jobs (local[2]) against a real RPMP cluster (TestRpmpCluster: etcd + 2 proxies
// + 3 rpmp-server with 48 MiB pools) whose pools are filled by raw allocations: a new
// shuffle falls back to Spark's sort shuffle with spark.rpmp.fallback=sort, fails at once
// with a message naming the space needed and free with =fail, and a shuffle that writes into
// the full cluster (room check off; it writes about 50 MB, 2 copies, where 2 nodes have some 15 MB each) fails its job with a message naming space, within a
// deadline (never a hang). Fails when etcd or rpmp-proxy is missing.
package org.apache.spark.shuffle.rpmp

import java.time.Duration

import scala.collection.mutable.ArrayBuffer
import scala.jdk.CollectionConverters._

import io.rpmp.client.{GlobalAddress, RpmpClient, RpmpClientOptions, RpmpException}
import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark.{ShuffleDependency, SparkConf, SparkContext, SparkException}
import org.apache.spark.rdd.RDD

@TestInstance(Lifecycle.PER_CLASS)
class ClusterFullTest {
  private var cluster: TestRpmpCluster = _
  private val fillers = ArrayBuffer.empty[RpmpClient]  // hold the raw allocations

  @BeforeAll
  def startAndFillCluster(): Unit = {
    assertTrue(TestRpmpCluster.available,
      s"needs ${TestRpmpCluster.etcd} and rpmp-proxy/rpmpctl in ${TestRpmpCluster.binDir}")
    cluster = TestRpmpCluster.start(3, poolSize = "48m")
    val options = RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10))
    for (server <- cluster.servers) {
      val c = RpmpClient.connect(server, options)
      fillers += c
      for (size <- Seq(1L << 20, 64L << 10, 4L << 10)) {
        var full = false
        while (!full) {
          try c.alloc(size) catch {
            case e: RpmpException if e.code() == RpmpException.RESOURCE_EXHAUSTED => full = true
          }
        }
      }
      val free = c.stat().pools().get(0).free()
      // PMDK's own metadata is not in the store's accounting: a full pool shows some MiB.
      assertTrue(free < (32L << 20), s"$server still has $free bytes free")
    }
    // The proxy's node map (what the room check reads) learns it from the next heartbeats.
    val cc = RpmpClient.connectCluster(cluster.proxyList, options)
    try {
      val deadline = System.nanoTime() + 20L * 1000000000L
      def full = cc.liveNodeSpace().asScala.count(_.free() < (32L << 20)) == 3
      while (!full && System.nanoTime() < deadline) Thread.sleep(50)  // poll
      assertTrue(full, cc.liveNodeSpace().toString)
    } finally cc.close()
  }

  @AfterAll
  def stopCluster(): Unit = {
    fillers.foreach(_.close())
    if (cluster != null) cluster.close()
  }

  private def sparkConf(fallback: String): SparkConf = new SparkConf()
    .setMaster("local[2]")
    .setAppName("rpmp-cluster-full-test")
    .set("spark.ui.enabled", "false")
    .set("spark.shuffle.manager", "io.rpmp.spark.PmofShuffleManager")
    .set(RpmpConf.ProxiesKey, cluster.proxyList)
    .set(RpmpConf.FallbackKey, fallback)
    .set(RpmpConf.TimeoutKey, "10s")
    .set(RpmpConf.RetryForKey, "5s")
    .set(RpmpConf.MinFreeSpaceKey, "32m")

  private def data(sc: SparkContext): RDD[(Int, String)] =
    sc.parallelize(0 until 20000, 4).map(i => (i % 997, "v" * (i % 50) + i))

  private def expectedCounts: Map[Int, Int] =
    (0 until 20000).groupBy(_ % 997).map { case (k, v) => k -> v.size }

  @Test
  def aNewShuffleFallsBackToSparksSortShuffleWhenTheClusterIsFull(): Unit = {
    val sc = new SparkContext(sparkConf("sort"))
    try {
      val rdd = data(sc).mapValues(_ => 1).reduceByKey(_ + _, 3)
      val handle = rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleHandle
      assertFalse(handle.isInstanceOf[RpmpShuffleHandle[_, _, _]], s"stored in RPMP: $handle")
      assertEquals(expectedCounts, rdd.collect().toMap)
    } finally sc.stop()
  }

  @Test
  def failPolicyNamesTheSpaceNeededAndFree(): Unit = {
    val sc = new SparkContext(sparkConf("fail"))
    try {
      // Spark registers the shuffle when the dependency's handle is first needed.
      val thrown = assertThrows(classOf[Throwable],
        () => data(sc).mapValues(_ => 1).reduceByKey(_ + _, 3).count())
      val e = Iterator.iterate(thrown)(_.getCause).takeWhile(_ != null)
        .collectFirst { case r: RpmpNoRoomException => r }
        .getOrElse(throw new AssertionError("not RpmpNoRoomException", thrown))
      val m = e.getMessage
      assertTrue(m.contains("needs 32.0 MiB") && m.contains("free") &&
        m.contains(RpmpConf.MinFreeSpaceKey) && m.contains("fallback=fail"), m)
    } finally sc.stop()
  }

  @Test
  def aShuffleWritingIntoTheFullClusterFailsItsJobNamingSpace(): Unit = {
    // The room check off: the shuffle is stored in RPMP and its map writes find no space.
    val sc = new SparkContext(sparkConf("fail").set(RpmpConf.MinFreeSpaceKey, "0"))
    try {
      val start = System.nanoTime()
      val rdd = sc.parallelize(0 until 64, 4)
        .flatMap(i => Iterator.tabulate(400)(j => (i * 1000 + j, "x" * 2000 + i + j)))
        .groupByKey(8)
      assertTrue(rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleHandle
        .isInstanceOf[RpmpShuffleHandle[_, _, _]])
      val e = assertThrows(classOf[SparkException], () => rdd.count())
      val seconds = (System.nanoTime() - start) / 1e9
      val m = e.getMessage.toLowerCase
      assertTrue(m.contains("no space") && m.contains("free"), e.getMessage)
      assertTrue(seconds < 120, s"took $seconds s")
    } finally sc.stop()
  }
}
