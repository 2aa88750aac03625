// Spark 4.2's order-independent row checksums through the RPMP writer: a shuffle whose
// dependency asks for them (as Spark SQL's do with
// spark.sql.shuffle.orderIndependentChecksum.enabled) reports a non-zero checksum in every
// MapStatus, and a map stage that produces other data when rerun (after its RPMP data was
// lost) is detected by Spark as a checksum mismatch.
package org.apache.spark.shuffle.rpmp

import java.time.Duration

import scala.reflect.ClassTag

import io.rpmp.client.{RpmpClient, RpmpClientOptions}
import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark._
import org.apache.spark.rdd.RDD
import org.apache.spark.shuffle.ShuffleWriteProcessor
import org.apache.spark.shuffle.checksum.RowBasedChecksum

/** A row checksum over (key, value)'s hash, like Spark SQL's over UnsafeRow bytes. */
class HashRowChecksum extends RowBasedChecksum {
  override protected def calculateRowChecksum(key: Any, value: Any): Long =
    scala.util.hashing.MurmurHash3.productHash((key, value)).toLong * 0x9E3779B97F4A7C15L
}

/** A shuffled RDD whose dependency asks for row checksums (no aggregation, no ordering). */
class ChecksummedShuffledRDD[K: ClassTag, V: ClassTag](prev: RDD[(K, V)], part: Partitioner)
  extends RDD[(K, V)](prev.context, Nil) {

  @transient lazy val dep = new ShuffleDependency[K, V, V](prev, part,
    SparkEnv.get.serializer, None, None, false, new ShuffleWriteProcessor,
    Array.fill[RowBasedChecksum](part.numPartitions)(new HashRowChecksum), false, false)

  override def getDependencies: Seq[Dependency[_]] = List(dep)

  override protected def getPartitions: Array[Partition] =
    Array.tabulate[Partition](part.numPartitions)(i => new Partition { override def index = i })

  override def compute(split: Partition, context: TaskContext): Iterator[(K, V)] =
    SparkEnv.get.shuffleManager.getReader[K, V](
      dependencies.head.asInstanceOf[ShuffleDependency[K, V, V]].shuffleHandle, split.index,
      split.index + 1, context, context.taskMetrics().createTempShuffleReadMetrics())
      .read().map(kv => (kv._1, kv._2))
}

@TestInstance(Lifecycle.PER_CLASS)
class RowChecksumTest {
  private var server: TestRpmpServer = _
  private var client: RpmpClient = _

  @BeforeAll
  def start(): Unit = {
    server = TestRpmpServer.start()
    client = RpmpClient.connect(server.address,
      RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)))
  }

  @AfterAll
  def stop(): Unit = {
    if (client != null) client.close()
    if (server != null) server.close()
  }

  @Test
  def checksumIsReportedAndANonDeterministicRerunIsDetected(): Unit = {
    val sc = new SparkContext(new SparkConf()
      .setMaster("local[2]")
      .setAppName("rpmp-checksum-test")
      .set("spark.ui.enabled", "false")
      .set("spark.shuffle.manager", "io.rpmp.spark.PmofShuffleManager")
      .set(RpmpConf.ServerKey, server.address)
      .set(RpmpConf.ReadRetriesKey, "1")
      .set(RpmpConf.ReadRetryWaitKey, "10ms"))
    try {
      // Non-deterministic: a rerun (stage attempt > 0) produces other values.
      val input = sc.parallelize(0 until 2000, 4)
        .map(i => (i % 50, i + 100000 * TaskContext.get().stageAttemptNumber()))
      val rdd = new ChecksummedShuffledRDD(input, new HashPartitioner(3))
      assertEquals(2000L, rdd.count())
      val shuffleId = rdd.dep.shuffleId
      val tracker = SparkEnv.get.mapOutputTracker.asInstanceOf[MapOutputTrackerMaster]
      val status = tracker.shuffleStatuses(shuffleId)
      val checksums = status.mapStatuses.map(_.checksumValue)
      assertEquals(4, checksums.length)
      assertTrue(checksums.forall(_ != 0L), s"checksums not reported: ${checksums.toSeq}")
      assertTrue(status.checksumMismatchIndices.isEmpty)

      // Lose partition 0 in RPMP: FetchFailed, the map stage reruns with other data.
      client.delete(rdd.dep.shuffleHandle.asInstanceOf[RpmpShuffleHandle[_, _, _]]
        .coordinates.namespaceOf(0), "0")
      try rdd.count() catch {
        case e: SparkException => // Spark may abort the job on the mismatch: also a detection
          assertTrue(e.getMessage.toLowerCase.contains("checksum") ||
            e.getMessage.contains("indeterminate"), e.getMessage)
      }
      assertFalse(status.checksumMismatchIndices.isEmpty,
        "Spark did not detect the non-deterministic rerun")
    } finally sc.stop()
  }
}
