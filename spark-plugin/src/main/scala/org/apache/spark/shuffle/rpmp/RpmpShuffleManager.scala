// The RPMP shuffle manager (spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager,
// which is this class under a public name). Driver: registers shuffles as RPMP namespaces
// spark/<appId>-<runId>/<shuffleId> (runId: the application attempt id, else random per
// SparkContext) and deletes them at unregisterShuffle/stop; in cluster mode
// (spark.rpmp.proxies) it creates each namespace with spark.rpmp.replicas copies and
// spark.rpmp.ttl, and stop() deletes spark/<appId>-<runId> recursively. Executors: hand
// out a writer (bypass, sort-based or per-partition buffers: spark.rpmp.writer.path) and
// RpmpShuffleReader over a per-JVM RpmpClientCache. When RPMP cannot be
// reached at registerShuffle, or has not the room ShuffleRoom asks for (cluster full),
// spark.rpmp.fallback=sort hands that shuffle to Spark's SortShuffleManager (with a WARN),
// =fail fails it. Refuses settings it cannot honour
// (spark.shuffle.useOldFetchProtocol, push-based shuffle). The driver touches its live
// shuffles' namespaces every ttl/3 so a job longer than spark.rpmp.ttl keeps them. In
// cluster mode the driver asks the proxies for the application's credential at its first
// shuffle and ships it in the handles; executors connect with it (AppCredential).
// Instantiated by Spark (SparkEnv).
package org.apache.spark.shuffle.rpmp

import java.util.concurrent.ConcurrentHashMap

import java.time.Duration

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import io.rpmp.client.{NodeIds, RpmpClient, RpmpException}

import org.apache.spark.{ShuffleDependency, SparkConf, SparkContext, TaskContext}
import org.apache.spark.internal.Logging
import org.apache.spark.shuffle._
import org.apache.spark.shuffle.sort.SortShuffleManager

class RpmpShuffleManager(conf: SparkConf, isDriver: Boolean)
  extends BlockingShuffleManager with Logging {

  def this(conf: SparkConf) = this(conf, false)

  RpmpShuffleManager.checkSparkVersion(org.apache.spark.SPARK_VERSION)
  RpmpConf.checkSparkSettings(conf)
  private val rpmpConf = RpmpConf(conf)
  // The client name the servers log and count sessions by (rpmp_server_sessions_per_client_max):
  // one per JVM, e.g. spark-executor-3.
  private val clients = new RpmpClientCache(rpmpConf,
    if (isDriver) "spark-driver" else "spark-executor-" + conf.get("spark.executor.id", "unknown"))
  private lazy val sortManager = new SortShuffleManager(conf)
  // Driver only: shuffle id -> namespace of shuffles stored in RPMP, deleted at unregister/stop.
  private val registered = new ConcurrentHashMap[Int, RpmpShuffleCoordinates]()
  // Driver, cluster mode: (appId, runId) whose spark/<appId>-<runId> subtree stop() deletes.
  private val clusterApps = ConcurrentHashMap.newKeySet[(String, String)]()
  // Driver, cluster mode: the application's credential, made at the first shuffle.
  private var appCredential: AppCredential = _

  private def obtainCredential(): Option[CredentialRef] = synchronized {
    if (appCredential == null) {
      appCredential = new AppCredential(RpmpShuffleCoordinates.credentialPrefix(appId, runId), appId,
        () => clients.get(RpmpClientCache.clusterEndpoint(rpmpConf.proxies)).admin())
    }
    appCredential.obtain()
  }

  /**
   * Driver, cluster mode: the client for `endpoint`, with the application's credential once
   * there is one (the renewed one after a renewal), so that its namespace calls act as the
   * application's tenant (docs/security.md "Tenants"): the namespaces it creates belong to
   * the credential, and it may touch and delete those executors create (group extents).
   */
  private def driverClient(endpoint: String): RpmpClient = {
    synchronized { Option(appCredential) }.flatMap(_.current).foreach(r => clients.useCredential(r.get))
    clients.get(endpoint)
  }
  // Last replica count spark.rpmp.replicas was capped to (WARN only when it changes).
  @volatile private var lastCap = 0

  /** The application id (the same for every attempt of a YARN application). */
  protected def applicationId: String =
    SparkContext.getActive.map(_.applicationId).getOrElse(conf.get("spark.app.id", "unknown-app"))

  /** Unique per SparkContext: the application attempt id when Spark has one, else random. */
  protected def mintRunId(): String =
    SparkContext.getActive.flatMap(_.applicationAttemptId)
      .orElse(conf.getOption("spark.app.attempt.id"))
      .filter(_.nonEmpty)
      .getOrElse(RpmpShuffleManager.randomRunId())

  // Driver: fixed at the first registerShuffle of this SparkContext.
  private lazy val appId: String = applicationId
  private lazy val runId: String = mintRunId()

  override def registerShuffle[K, V, C](
      shuffleId: Int,
      dependency: ShuffleDependency[K, V, C]): ShuffleHandle = {
    RpmpMetrics.register(() => clients.liveBuffers, () => clients.clusterCounters)
    val base = RpmpShuffleCoordinates(
      appId = appId,
      runId = runId,
      shuffleId = shuffleId,
      numMaps = dependency.rdd.getNumPartitions,
      numPartitions = dependency.partitioner.numPartitions,
      servers =
        if (rpmpConf.servers.nonEmpty || rpmpConf.clusterMode) rpmpConf.servers
        else Seq("unset:1"),
      proxies = rpmpConf.proxies)
    var coords = base
    var credential: Option[CredentialRef] = None
    try {
      if (rpmpConf.servers.isEmpty && !rpmpConf.clusterMode) {
        throw new IllegalArgumentException(
          s"neither ${RpmpConf.ProxiesKey} nor ${RpmpConf.ServerKey} is set")
      }
      val placement = if (coords.clusterMode) {
        val client = clients.get(coords.serverFor(0))
        // A node map that cannot be read skips the check: createNamespace then decides
        // reachability exactly as without it.
        val nodes = try Some(client.liveNodeSpace().asScala.toSeq) catch {
          case e: RpmpException =>
            logWarning(s"Cannot read the RPMP node map for shuffle $shuffleId's room check: $e")
            None
        }
        nodes.foreach(ShuffleRoom.checkNodes(shuffleId, _, rpmpConf.replicas, rpmpConf.minFreeBytes))
        coords = base.copy(groups = RpmpShuffleManager.placementGroups(
          rpmpConf.placementGroups, base.numPartitions, nodes.map(_.size)))
        clusterApps.add((coords.appId, coords.runId))
        credential = obtainCredential()
        val owner = driverClient(coords.serverFor(0))
        val described = try coords.namespaces.map(ns => createNamespace(owner, ns)) catch {
          case e: RpmpNoRoomException =>
            // Refused by a quota part way: the groups created so far go (best effort).
            try owner.deleteNamespaces(coords.namespace, coords.groups > 1) catch { case NonFatal(_) => }
            throw e
        }
        if (coords.groups == 1) described.head
        else described.zipWithIndex.take(8).map { case (d, g) => s"g$g$d" }
          .mkString(s" as ${coords.groups} placement groups: ", "; ",
            if (coords.groups > 8) "; ..." else "")
      } else {
        // Reachability and room.
        coords.servers.foreach { s =>
          ShuffleRoom.checkServer(shuffleId, clients.get(s).stat(), rpmpConf.minFreeBytes, s)
        }
        ""
      }
      registered.put(shuffleId, coords)
      if (coords.clusterMode) ttlKeeper.start()
      logInfo(s"Shuffle $shuffleId stored in RPMP namespace ${coords.namespace}$placement " +
        s"(${coords.numMaps} maps, ${coords.numPartitions} partitions, map writer " +
        s"${RpmpShuffleManager.writerPath(rpmpConf.writerPath, dependency).toString.toLowerCase}" +
        ")")
      new RpmpShuffleHandle(shuffleId, coords, dependency, credential)
    } catch {
      // Wrong or missing credentials are a configuration error, never a reason to fall back.
      case e: RpmpAuthException => throw e
      case e: RpmpNoRoomException if rpmpConf.fallback == FallbackPolicy.Sort =>
        logWarning(s"${e.getMessage}; ${RpmpConf.FallbackKey}=sort: using Spark's sort " +
          "shuffle for it")
        sortManager.registerShuffle(shuffleId, dependency)
      case e: RpmpNoRoomException =>
        throw new RpmpNoRoomException(s"${e.getMessage}; ${RpmpConf.FallbackKey}=fail")
      case NonFatal(e) if rpmpConf.fallback == FallbackPolicy.Sort =>
        logWarning(s"RPMP unreachable for shuffle $shuffleId ($e); " +
          s"${RpmpConf.FallbackKey}=sort: using Spark's sort shuffle for it")
        sortManager.registerShuffle(shuffleId, dependency)
      case NonFatal(e) =>
        throw new IllegalStateException(
          s"RPMP unreachable for shuffle $shuffleId and ${RpmpConf.FallbackKey}=fail", e)
    }
  }

  override def getWriter[K, V](
      handle: ShuffleHandle,
      mapId: Long,
      context: TaskContext,
      metrics: ShuffleWriteMetricsReporter): ShuffleWriter[K, V] = handle match {
    case h: RpmpShuffleHandle[K @unchecked, V @unchecked, _] =>
      RpmpMetrics.register(() => clients.liveBuffers, () => clients.clusterCounters)
      h.credential.foreach(c => clients.useCredential(c.get))
      val task = new MapTask(h, mapId, context, metrics, clients, rpmpConf)
      RpmpShuffleManager.writerPath(rpmpConf.writerPath, h.dependency) match {
        case WriterPath.Bypass => new RpmpBypassShuffleWriter(task)
        case WriterPath.Sort => new RpmpSortShuffleWriter(task)
        case _ => new RpmpShuffleWriter(task)
      }
    case other =>
      sortManager.getWriter(other, mapId, context, metrics)
  }

  override def getReader[K, C](
      handle: ShuffleHandle,
      startMapIndex: Int,
      endMapIndex: Int,
      startPartition: Int,
      endPartition: Int,
      context: TaskContext,
      metrics: ShuffleReadMetricsReporter): ShuffleReader[K, C] = handle match {
    case h: RpmpShuffleHandle[K @unchecked, _, C @unchecked] =>
      RpmpMetrics.register(() => clients.liveBuffers, () => clients.clusterCounters)
      h.credential.foreach(c => clients.useCredential(c.get))
      new RpmpShuffleReader(h, startMapIndex, endMapIndex, startPartition, endPartition,
        context, metrics, clients, rpmpConf)
    case other =>
      sortManager.getReader(other, startMapIndex, endMapIndex, startPartition, endPartition,
        context, metrics)
  }

  override def unregisterShuffle(shuffleId: Int): Boolean = {
    val coords = registered.remove(shuffleId)
    if (coords != null) {
      deleteNamespace(coords)
      GroupExtents.forget(coords.namespace)
    }
    sortManager.unregisterShuffle(shuffleId)
    true
  }

  /**
   * Cluster mode: creates `ns` with spark.rpmp.replicas copies (capped at the live node count,
   * with a WARN, when fewer nodes are live) and spark.rpmp.ttl. Returns a description for logs.
   */
  private def createNamespace(client: RpmpClient, ns: String): String = {
    val ttl = Duration.ofSeconds(rpmpConf.ttlSeconds)
    var replicas = rpmpConf.replicas
    while (true) {
      try {
        val info = client.createNamespace(ns, replicas, 0, ttl)
        if (replicas < rpmpConf.replicas && lastCap != replicas) {
          lastCap = replicas
          logWarning(s"Only $replicas RPMP node(s) live: ${RpmpConf.ReplicasKey}=" +
            s"${rpmpConf.replicas} capped to $replicas for $ns (and later shuffles while so)")
        }
        return s" (replicas ${info.replicas()} on nodes ${NodeIds.hex(info.replicaNodes())}, ttl $ttl)"
      } catch {
        // FAILED_PRECONDITION: fewer live nodes than replicas.
        case e: RpmpException if e.code() == RpmpException.FAILED_PRECONDITION && replicas > 1 =>
          replicas -= 1
        // RESOURCE_EXHAUSTED: a quota of the namespace's prefix (docs/cluster.md "Quotas")
        // refuses it; the message names prefix, quota and use. Handled as a full cluster.
        case e: io.rpmp.client.RpmpNoSpaceException =>
          throw new RpmpNoRoomException(s"RPMP refused namespace $ns: ${e.getMessage}")
        case e: RpmpException if e.code() == RpmpException.ALREADY_EXISTS =>
          logWarning(s"RPMP namespace $ns already exists with other options; using it: $e")
          return " (pre-existing)"
      }
    }
    throw new IllegalStateException("unreachable")
  }

  private def deleteNamespace(coords: RpmpShuffleCoordinates): Unit = {
    if (coords.clusterMode) {
      try {
        // Groups (<namespace>/g<i>) and extents (<group>/x<k>): the whole subtree goes.
        driverClient(coords.serverFor(0)).deleteNamespaces(coords.namespace, true)
        logInfo(s"Deleted RPMP namespace ${coords.namespace}")
      } catch {
        case _: io.rpmp.client.RpmpNotFoundException => // already gone
        case NonFatal(e) =>
          logWarning(s"Could not delete RPMP namespace ${coords.namespace} (its ttl will): $e")
      }
      return
    }
    coords.servers.foreach { server =>
      try {
        clients.get(server).deleteNamespace(coords.namespace)
        logInfo(s"Deleted RPMP namespace ${coords.namespace} on $server")
      } catch {
        case _: io.rpmp.client.RpmpNotFoundException => // nothing was written
        case NonFatal(e) =>
          logWarning(s"Could not delete RPMP namespace ${coords.namespace} on $server: $e")
      }
    }
  }

  /** RpmpBuffers of this JVM's RPMP clients not yet closed (tests assert 0 when idle). */
  def liveBuffers: Int = clients.liveBuffers

  override def shuffleBlockResolver: ShuffleBlockResolver = sortManager.shuffleBlockResolver

  /** Driver, cluster mode: keeps the namespaces of registered shuffles from expiring. */
  private lazy val ttlKeeper = new NamespaceKeeper(rpmpConf.ttlSeconds, () =>
    registered.values().forEach { c =>
      c.namespaces.foreach { group =>
        // The group and its extents (GroupExtents), up to the first that is not there.
        try GroupExtents.touch(driverClient(c.serverFor(0)), group) catch {
          case _: io.rpmp.client.RpmpNotFoundException => // nothing written yet or deleted
          case NonFatal(e) => logWarning(s"Could not touch RPMP namespace $group: $e")
        }
      }
    })

  /** Driver: deletes every namespace this SparkContext stored (stop() does it too). */
  def cleanupApplication(): Unit = cleanupOnStop()

  override def stop(): Unit = {
    ttlKeeper.stop()
    synchronized { Option(appCredential) }.foreach(_.stop())
    cleanupOnStop()
    registered.clear()
    clients.closeAll()
    sortManager.stop()
  }

  /** Deletes what this SparkContext stored (a test subclass skips it to play a crashed driver). */
  protected def cleanupOnStop(): Unit = {
    // Driver: every shuffle of spark/<appId>-<runId>/ not yet unregistered goes now; in cluster
    // mode the whole subtree (also namespaces a straggling write recreated).
    if (rpmpConf.clusterMode) {
      clusterApps.forEach { case (app, run) =>
        val prefix = RpmpShuffleCoordinates.appPrefix(app, run)
        try {
          val deleted = driverClient(RpmpClientCache.clusterEndpoint(rpmpConf.proxies))
            .deleteNamespaces(prefix, true)
          logInfo(s"Deleted RPMP namespaces under $prefix: ${deleted.size()}")
        } catch {
          case _: io.rpmp.client.RpmpNotFoundException => // every shuffle already unregistered
          case NonFatal(e) =>
            logWarning(s"Could not delete RPMP namespaces under $prefix (their ttl will): $e")
        }
      }
      clusterApps.clear()
    } else {
      registered.values().forEach(c => deleteNamespace(c))
    }
  }
}

private[spark] object RpmpShuffleManager {
  private val random = new java.security.SecureRandom()

  /**
   * How many placement groups a new cluster-mode shuffle gets: spark.rpmp.placementGroups
   * when set (> 0), else twice the live node count (so every node is some group's primary
   * even when the proxies' hashing places two groups alike), never more than the shuffle's
   * partitions; 1 when the node map could not be read.
   */
  def placementGroups(configured: Int, numPartitions: Int, liveNodes: Option[Int]): Int = {
    val wanted = if (configured > 0) configured else liveNodes.map(_ * 2).getOrElse(1)
    math.max(1, math.min(wanted, numPartitions))
  }

  /** 12 hex digits: a run id for a SparkContext without an application attempt id. */
  def randomRunId(): String = f"${random.nextLong() & 0xffffffffffffL}%012x"

  /**
   * The writer a map task of `dep` uses under spark.rpmp.writer.path `asked`: auto takes the
   * bypass path for at most spark.shuffle.sort.bypassMergeThreshold partitions without
   * map-side combine (as Spark's own shuffle does), else the sort-based one where the
   * serializer relocates records, else per-partition buffers. A path that cannot take
   * `dep` (bypass or sort with map-side combine, sort with a serializer that cannot
   * relocate) falls back the same way.
   */
  def writerPath(asked: WriterPath.Value, dep: ShuffleDependency[_, _, _]): WriterPath.Value =
    asked match {
      case WriterPath.Auto if RpmpBypassShuffleWriter.canUse(dep) => WriterPath.Bypass
      case WriterPath.Bypass if !dep.mapSideCombine => WriterPath.Bypass
      case WriterPath.Buffers => WriterPath.Buffers
      case _ => if (RpmpSortShuffleWriter.canUse(dep)) WriterPath.Sort else WriterPath.Buffers
    }

  /**
   * Refuses to start on a Spark line this jar was not built for, with a message naming the
   * right jar (instead of a NoSuchMethodError deep inside a task).
   */
  def checkSparkVersion(running: String): Unit = {
    if (!SparkCompat.runsOn(running)) {
      val right = if (running.startsWith("3.5.")) "rpmp-spark-3.5.jar" else "rpmp-spark.jar (Spark 4.x)"
      throw new IllegalStateException(
        s"${SparkCompat.JarName} is built for Spark ${SparkCompat.SparkLine}.x but this is Spark " +
          s"$running: put $right on spark.driver.extraClassPath and spark.executor.extraClassPath")
    }
  }
}
