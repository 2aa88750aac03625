// Per-application credentials (docs/spark-plugin.md "Credentials") against a real secured
// RPMP cluster (TestRpmpCluster(secured): the servers require the cluster secret or a
// credential, the proxies issue credentials). The Spark application is given no secret at
// all: a job works because the driver's plugin got a credential for
// spark/<appId>-<runId>/ and its clients connected with it; the credential never shows in
// the handle's toString or SparkConf; a client holding it cannot write, read or delete
// another application's namespaces; a client with neither secret nor credential is refused
// (the control). AppCredential renews a short-lived credential before it expires. Fails
// when etcd or rpmp-proxy is missing.
package org.apache.spark.shuffle.rpmp

import java.nio.charset.StandardCharsets.UTF_8
import java.time.Duration

import org.junit.jupiter.api.{AfterAll, BeforeAll, Test, TestInstance}
import org.junit.jupiter.api.Assertions._
import org.junit.jupiter.api.TestInstance.Lifecycle

import io.rpmp.client.{RpmpClient, RpmpClientOptions, RpmpCredential, RpmpException}

import org.apache.spark.{ShuffleDependency, SparkConf, SparkContext}

@TestInstance(Lifecycle.PER_CLASS)
class CredentialTest {
  private var cluster: TestRpmpCluster = _

  @BeforeAll
  def startCluster(): Unit = {
    assertTrue(TestRpmpCluster.available,
      s"needs ${TestRpmpCluster.etcd} and rpmp-proxy/rpmpctl in ${TestRpmpCluster.binDir}")
    cluster = TestRpmpCluster.start(3, poolSize = "256m", secured = true)
  }

  @AfterAll
  def stopCluster(): Unit = if (cluster != null) cluster.close()

  private def secret: Array[Byte] =
    java.nio.file.Files.readString(cluster.secretFile.get).trim.getBytes(UTF_8)

  private def connect(options: RpmpClientOptions): RpmpClient =
    RpmpClient.connectCluster(cluster.proxyList, options.timeout(Duration.ofSeconds(10))
      .retryFor(Duration.ofSeconds(3)))

  private def code(body: => Unit): Int =
    try { body; -1 } catch { case e: RpmpException => e.code() }

  @Test
  def aJobRunsWithOnlyTheApplicationsCredentialAndItOpensNothingElse(): Unit = {
    // Another application's namespace, written with the cluster secret.
    val admin = connect(RpmpClientOptions.defaults().secret(secret))
    val other = "spark/other-app-0/0"
    try {
      admin.createNamespace(other, 1, 0, Duration.ZERO)
      admin.put(other, "k", "theirs".getBytes(UTF_8))
      // The control: without secret or credential the servers refuse a write.
      val none = connect(RpmpClientOptions.defaults())
      try assertEquals(RpmpException.PERMISSION_DENIED, code(none.put(other, "x", Array[Byte](1))))
      finally none.close()

      val sc = new SparkContext(new SparkConf()
        .setMaster("local[2]")
        .setAppName("rpmp-credential-test")
        .set("spark.ui.enabled", "false")
        .set("spark.shuffle.manager", "io.rpmp.spark.PmofShuffleManager")
        .set(RpmpConf.ProxiesKey, cluster.proxyList)
        .set(RpmpConf.FallbackKey, "fail"))
      val cred = try {
        val rdd = sc.parallelize(0 until 20000, 4).map(i => (i % 101, 1)).reduceByKey(_ + _, 6)
        assertEquals((0 until 20000).groupBy(_ % 101).map { case (k, v) => k -> v.size },
          rdd.collect().toMap)
        val handle = rdd.dependencies.head.asInstanceOf[ShuffleDependency[_, _, _]].shuffleHandle
          .asInstanceOf[RpmpShuffleHandle[_, _, _]]
        val cred = handle.credential.getOrElse(throw new AssertionError("no credential in the handle")).get
        assertEquals(RpmpShuffleCoordinates.credentialPrefix(handle.coordinates.appId,
          handle.coordinates.runId), cred.prefix)
        assertTrue(handle.coordinates.namespaces.forall(_.startsWith(cred.prefix)))
        val mac = cred.token.substring(cred.token.lastIndexOf('.') + 1)
        assertFalse(handle.credential.toString.contains(mac), handle.credential.toString)
        assertFalse(sc.getConf.getAll.exists(_._2.contains(mac)), "the token is in SparkConf")
        cred
      } finally sc.stop()

      // The application's credential: its own prefix works, another application's does not.
      val mine = connect(RpmpClientOptions.defaults().token(cred.token))
      try {
        val own = cred.prefix + "check"
        mine.createNamespace(own, 1, 0, Duration.ZERO)
        mine.put(own, "k", "mine".getBytes(UTF_8))
        assertArrayEquals("mine".getBytes(UTF_8), mine.getBytes(own, "k"))
        assertEquals(RpmpException.PERMISSION_DENIED, code(mine.getBytes(other, "k")))
        assertEquals(RpmpException.PERMISSION_DENIED, code(mine.put(other, "k", Array[Byte](1))))
        assertEquals(RpmpException.PERMISSION_DENIED, code(mine.delete(other, "k")))
      } finally mine.close()
      assertArrayEquals("theirs".getBytes(UTF_8), admin.getBytes(other, "k"))
    } finally {
      try admin.admin().deleteNamespaces("spark", true) catch { case _: RpmpException => }
      admin.close()
    }
  }

  @Test
  def aShortLivedCredentialIsRenewedBeforeItExpires(): Unit = {
    val client = connect(RpmpClientOptions.defaults().secret(secret))
    val keeper = new AppCredential("spark/renew-test-1/", "renew-test", () => client.admin(),
      Duration.ofSeconds(3))
    try {
      val ref = keeper.obtain().getOrElse(throw new AssertionError("no credential issued"))
      val first: RpmpCredential = ref.get
      val deadline = System.nanoTime() + 10000000000L
      while (ref.get.token == first.token && System.nanoTime() < deadline) Thread.sleep(50)  // poll
      val renewed = ref.get
      assertNotEquals(first.token, renewed.token, "not renewed within 10 s")
      assertTrue(renewed.expiry.isAfter(first.expiry))
      assertTrue(java.time.Instant.now.isBefore(first.expiry), "renewed only after expiry")
      assertEquals(first.prefix, renewed.prefix)
    } finally {
      keeper.stop()
      client.close()
    }
  }
}
