// A shuffle larger than any one node, on a real RPMP cluster (TestRpmpCluster: etcd +
// 2 proxies + 3 rpmp-server with 96 MiB pools): about 160 MiB of incompressible shuffle
// data, one copy, goes through Spark (local[2]) as placement groups striped over the three
// nodes. Its 400 partitions go to the 6 groups in runs of 8 consecutive ones
// (RpmpShuffleCoordinates.groupOf). The job's per-partition counts and checksums equal
// those computed without Spark, and every node holds a share of the shuffle (each more
// than a third of what one node could hold alone). Fails when etcd or rpmp-proxy is missing.
package org.apache.spark.shuffle.rpmp

import java.time.Duration
import java.util.zip.CRC32

import scala.jdk.CollectionConverters._

import io.rpmp.client.{RpmpClient, RpmpClientOptions}
import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark.{HashPartitioner, SparkConf, SparkContext}

@TestInstance(Lifecycle.PER_CLASS)
class ClusterSpreadTest {
  private var cluster: TestRpmpCluster = _
  import ClusterSpreadTest._

  @BeforeAll
  def startCluster(): Unit = {
    assertTrue(TestRpmpCluster.available,
      s"needs ${TestRpmpCluster.etcd} and rpmp-proxy/rpmpctl in ${TestRpmpCluster.binDir}")
    cluster = TestRpmpCluster.start(3, poolSize = "96m")
  }

  @AfterAll
  def stopCluster(): Unit = if (cluster != null) cluster.close()

  /** (partition, rows, CRC-32 of the rows' CRC-32s summed): order-independent. */
  private def expected: Map[Int, (Long, Long)] = {
    val p = new HashPartitioner(Partitions)
    (0 until Rows).groupBy(i => p.getPartition(i)).map { case (part, rows) =>
      part -> (rows.size.toLong, rows.map(i => crc(row(i))).sum)
    }
  }

  @Test
  def aShuffleLargerThanOneNodeSpreadsOverEveryNode(): Unit = {
    val sc = new SparkContext(new SparkConf()
      .setMaster("local[2]")
      .setAppName("rpmp-cluster-spread-test")
      .set("spark.ui.enabled", "false")
      .set("spark.shuffle.manager", "io.rpmp.spark.PmofShuffleManager")
      .set(RpmpConf.ProxiesKey, cluster.proxyList)
      .set(RpmpConf.FallbackKey, "fail")
      .set(RpmpConf.ReplicasKey, "1")
      .set(RpmpConf.TimeoutKey, "20s"))
    val usedPerNode = try {
      val rdd = sc.parallelize(0 until Rows, 8).map(i => (i, row(i)))
        .partitionBy(new HashPartitioner(Partitions))
      val got = rdd.mapPartitionsWithIndex { (part, it) =>
        var n = 0L
        var sum = 0L
        it.foreach { case (_, b) => n += 1; sum += crc(b) }
        Iterator(part -> (n, sum))
      }.collect().toMap
      assertEquals(expected, got)
      val coords = TestShuffles.coordinatesOf(rdd)
      assertEquals(6, coords.groups, "auto: twice the 3 live nodes")
      assertEquals(Seq(0, 0, 0, 0, 0, 0, 0, 0, 1), (0 until 9).map(coords.groupOf), "runs of 8 partitions")
      // Each node's use, read while the shuffle is still registered.
      cluster.servers.map { s =>
        val c = RpmpClient.connect(s, RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)))
        try s -> c.stat().pools().asScala.map(_.used()).sum finally c.close()
      }.toMap
    } finally sc.stop()
    val shuffleBytes = Rows.toLong * RowBytes
    assertTrue(shuffleBytes > (96L << 20) * 3 / 2, "the shuffle is larger than one node's pool")
    usedPerNode.foreach { case (server, used) =>
      assertTrue(used > (96L << 20) / 3, s"$server holds only $used bytes of the shuffle: $usedPerNode")
    }
  }
}

/** What the job's closures use: no reference to the test instance (not serializable). */
object ClusterSpreadTest {
  val Rows = 40000
  val RowBytes = 4096
  val Partitions = 400

  def row(i: Int): Array[Byte] = {
    val b = new Array[Byte](RowBytes)
    new java.util.Random(i).nextBytes(b)
    b
  }

  def crc(b: Array[Byte]): Long = {
    val c = new CRC32()
    c.update(b)
    c.getValue
  }
}
