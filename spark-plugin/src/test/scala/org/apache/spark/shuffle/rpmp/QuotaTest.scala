// Real Spark jobs (local[2]) against a real RPMP cluster (TestRpmpCluster) with quotas on
// the "spark" prefix, set and removed with rpmpctl (docs/cluster.md "Quotas"): a new
// shuffle refused by a namespace quota falls back to Spark's sort shuffle with
// spark.rpmp.fallback=sort and fails at once naming the quota with =fail; a shuffle whose
// writes pass a byte quota fails its job with a message naming the quota, within a
// deadline (never a hang). Fails when etcd or rpmp-proxy is missing.
package org.apache.spark.shuffle.rpmp

import java.io.File
import java.util.concurrent.TimeUnit

import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark.{ShuffleDependency, SparkConf, SparkContext, SparkException}
import org.apache.spark.rdd.RDD

@TestInstance(Lifecycle.PER_CLASS)
class QuotaTest {
  private var cluster: TestRpmpCluster = _

  @BeforeAll
  def startCluster(): Unit = {
    assertTrue(TestRpmpCluster.available,
      s"needs ${TestRpmpCluster.etcd} and rpmp-proxy/rpmpctl in ${TestRpmpCluster.binDir}")
    cluster = TestRpmpCluster.start(3, poolSize = "256m")
  }

  @AfterAll
  def stopCluster(): Unit = if (cluster != null) cluster.close()

  /** Runs rpmpctl with the cluster's proxies; returns (exit status, output). */
  private def rpmpctl(args: String*): (Int, String) = {
    val cmd = Seq(new File(TestRpmpCluster.binDir, "rpmpctl").getPath, "--proxy", cluster.proxyList) ++ args
    val p = new ProcessBuilder(cmd: _*).redirectErrorStream(true).start()
    val out = new String(p.getInputStream.readAllBytes())
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), s"rpmpctl ${args.mkString(" ")} hangs")
    (p.exitValue(), out)
  }

  private def withQuota[T](args: String*)(body: => T): T = {
    val (rc, out) = rpmpctl(Seq("quota", "set", "spark") ++ args: _*)
    assertEquals(0, rc, out)
    try body finally assertEquals(0, rpmpctl("quota", "rm", "spark")._1)
  }

  private def sparkConf(fallback: String): SparkConf = new SparkConf()
    .setMaster("local[2]")
    .setAppName("rpmp-quota-test")
    .set("spark.ui.enabled", "false")
    .set("spark.shuffle.manager", "io.rpmp.spark.PmofShuffleManager")
    .set(RpmpConf.ProxiesKey, cluster.proxyList)
    .set(RpmpConf.FallbackKey, fallback)
    .set(RpmpConf.TimeoutKey, "10s")
    .set(RpmpConf.RetryForKey, "5s")

  private def data(sc: SparkContext): RDD[(Int, String)] =
    sc.parallelize(0 until 20000, 4).map(i => (i % 997, "v" * (i % 50) + i))

  private def expectedCounts: Map[Int, Int] =
    (0 until 20000).groupBy(_ % 997).map { case (k, v) => k -> v.size }

  @Test
  def aShuffleRefusedByANamespaceQuotaFallsBackToSortShuffle(): Unit = withQuota("--namespaces", "1") {
    val sc = new SparkContext(sparkConf("sort"))
    try {
      // One shuffle is several placement groups (namespaces): the second is refused.
      val rdd = data(sc).mapValues(_ => 1).reduceByKey(_ + _, 3)
      val handle = rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleHandle
      assertFalse(handle.isInstanceOf[RpmpShuffleHandle[_, _, _]], s"stored in RPMP: $handle")
      assertEquals(expectedCounts, rdd.collect().toMap)
    } finally sc.stop()
    // The groups created before the refusal were deleted.
    val (rc, out) = rpmpctl("quota", "ls")
    assertEquals(0, rc, out)
    assertTrue(out.contains("0 / 1"), out)
  }

  @Test
  def failPolicyNamesTheQuota(): Unit = withQuota("--namespaces", "1") {
    val sc = new SparkContext(sparkConf("fail"))
    try {
      val thrown = assertThrows(classOf[Throwable],
        () => data(sc).mapValues(_ => 1).reduceByKey(_ + _, 3).count())
      val e = Iterator.iterate(thrown)(_.getCause).takeWhile(_ != null)
        .collectFirst { case r: RpmpNoRoomException => r }
        .getOrElse(throw new AssertionError("not RpmpNoRoomException", thrown))
      val m = e.getMessage
      assertTrue(m.contains("quota exceeded: prefix \"spark\"") && m.contains("its quota is 1") &&
        m.contains("fallback=fail"), m)
    } finally sc.stop()
  }

  @Test
  def writesPastAByteQuotaFailTheJobNamingTheQuota(): Unit = withQuota("--bytes", "1m") {
    val sc = new SparkContext(sparkConf("fail"))
    try {
      val start = System.nanoTime()
      // About 40 MB of shuffle data, incompressible (Spark compresses shuffle blocks),
      // against a 1 MiB quota.
      val rdd = sc.parallelize(0 until 64, 4)
        .flatMap(i => Iterator.tabulate(400)(j =>
          (i * 1000 + j, new scala.util.Random(i * 1000 + j).alphanumeric.take(2000).mkString)))
        .groupByKey(8)
      assertTrue(rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleHandle
        .isInstanceOf[RpmpShuffleHandle[_, _, _]])
      val e = assertThrows(classOf[SparkException], () => rdd.count())
      val seconds = (System.nanoTime() - start) / 1e9
      assertTrue(e.getMessage.contains("quota exceeded: prefix \"spark\"") &&
        e.getMessage.contains("of its 1.0 MiB byte quota"), e.getMessage)
      assertTrue(seconds < 120, s"took $seconds s")
    } finally sc.stop()
  }
}
