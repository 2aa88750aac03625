// A YARN-like second application attempt: two SparkContexts with the same application
// id (as YARN gives every attempt of one application), the first "crashing" (leaving its
// shuffle data in RPMP, as a killed driver would), the second reusing the shuffle id and
// task attempt ids of the first. The second must read only its own data.
package org.apache.spark.shuffle.rpmp

import java.time.Duration

import io.rpmp.client.{RpmpClient, RpmpClientOptions}
import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import org.apache.spark.{SparkConf, SparkContext}

/** RpmpShuffleManager with a fixed application id whose stop() leaves its data behind. */
class CrashingSameAppIdShuffleManager(conf: SparkConf, isDriver: Boolean)
  extends RpmpShuffleManager(conf, isDriver) {
  override protected def applicationId: String = conf.get("spark.rpmp.test.appId")
  override protected def cleanupOnStop(): Unit = () // like a killed driver
}

@TestInstance(Lifecycle.PER_CLASS)
class AppAttemptIsolationTest {
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

  /** Runs a reduceByKey of `n` records in one attempt; returns (result, shuffle namespace). */
  private def attempt(attemptId: Option[String], n: Int): (Map[Int, Int], String) = {
    val conf = new SparkConf()
      .setMaster("local[2]")
      .setAppName("rpmp-yarn-like")
      .set("spark.ui.enabled", "false")
      .set("spark.shuffle.manager", classOf[CrashingSameAppIdShuffleManager].getName)
      .set("spark.rpmp.test.appId", "application_1700000000000_0001")
      .set(RpmpConf.ServerKey, server.address)
    attemptId.foreach(a => conf.set("spark.app.attempt.id", a))
    val sc = new SparkContext(conf)
    try {
      val rdd = sc.parallelize(0 until n, 4).map(i => (i % 10, 1)).reduceByKey(_ + _, 2)
      (rdd.collect().toMap, TestShuffles.namespaceOf(rdd))
    } finally sc.stop()
  }

  @Test
  def secondAttemptReadsOnlyItsOwnData(): Unit = {
    val (first, ns1) = attempt(Some("1"), 1000)
    assertEquals((0 until 10).map(_ -> 100).toMap, first)
    assertFalse(client.list(ns1).isEmpty, s"attempt 1 left nothing in $ns1")
    // Same appId, same shuffle id 0, same task attempt ids 0.. as attempt 1.
    val (second, ns2) = attempt(Some("2"), 500)
    assertEquals((0 until 10).map(_ -> 50).toMap, second)
    assertNotEquals(ns1, ns2)
    assertTrue(ns1.startsWith("spark/application_1700000000000_0001-1/"), ns1)
    assertTrue(ns2.startsWith("spark/application_1700000000000_0001-2/"), ns2)
    // No attempt id (e.g. standalone, Kubernetes): a random run id per SparkContext.
    val (third, ns3) = attempt(None, 300)
    assertEquals((0 until 10).map(_ -> 30).toMap, third)
    assertFalse(Set(ns1, ns2).contains(ns3))
  }
}
