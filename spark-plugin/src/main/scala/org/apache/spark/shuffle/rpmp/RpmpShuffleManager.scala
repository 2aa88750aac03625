// The RPMP shuffle manager (spark.shuffle.manager=io.rpmp.spark.PmofShuffleManager,
// which is this class under a public name). Driver: registers shuffles as RPMP namespaces
// spark/<appId>/<shuffleId> and deletes them at unregisterShuffle/stop. Executors: hand
// out RpmpShuffleWriter/Reader over a per-JVM RpmpClientCache. When RPMP cannot be
// reached at registerShuffle, spark.rpmp.fallback=sort hands that shuffle to Spark's
// SortShuffleManager (with a WARN), =fail fails it. Instantiated by Spark (SparkEnv).
package org.apache.spark.shuffle.rpmp

import java.util.concurrent.ConcurrentHashMap

import scala.util.control.NonFatal

import org.apache.spark.{ShuffleDependency, SparkConf, SparkContext, TaskContext}
import org.apache.spark.internal.Logging
import org.apache.spark.shuffle._
import org.apache.spark.shuffle.sort.SortShuffleManager

class RpmpShuffleManager(conf: SparkConf, isDriver: Boolean)
  extends ShuffleManager with Logging {

  def this(conf: SparkConf) = this(conf, false)

  private val rpmpConf = RpmpConf(conf)
  private val clients = new RpmpClientCache(rpmpConf, if (isDriver) "spark-driver" else "spark")
  private lazy val sortManager = new SortShuffleManager(conf)
  // Driver only: shuffle id -> namespace of shuffles stored in RPMP, deleted at unregister/stop.
  private val registered = new ConcurrentHashMap[Int, RpmpShuffleCoordinates]()

  private def appId: String =
    SparkContext.getActive.map(_.applicationId).getOrElse(conf.get("spark.app.id", "unknown-app"))

  override def registerShuffle[K, V, C](
      shuffleId: Int,
      dependency: ShuffleDependency[K, V, C]): ShuffleHandle = {
    val coords = RpmpShuffleCoordinates(
      appId = appId,
      shuffleId = shuffleId,
      numMaps = dependency.rdd.getNumPartitions,
      numPartitions = dependency.partitioner.numPartitions,
      servers = if (rpmpConf.servers.nonEmpty) rpmpConf.servers else Seq("unset:1"))
    try {
      if (rpmpConf.servers.isEmpty) {
        throw new IllegalArgumentException(s"${RpmpConf.ServerKey} is not set")
      }
      // Reachability check (and a clean slate should a previous run of this app id remain).
      coords.servers.foreach(s => clients.get(s).stat())
      registered.put(shuffleId, coords)
      logInfo(s"Shuffle $shuffleId stored in RPMP namespace ${coords.namespace} " +
        s"(${coords.numMaps} maps, ${coords.numPartitions} partitions)")
      new RpmpShuffleHandle(shuffleId, coords, dependency)
    } catch {
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
      new RpmpShuffleWriter(h, mapId, context, metrics, clients, rpmpConf)
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
      new RpmpShuffleReader(h, startMapIndex, endMapIndex, startPartition, endPartition,
        context, metrics, clients, rpmpConf)
    case other =>
      sortManager.getReader(other, startMapIndex, endMapIndex, startPartition, endPartition,
        context, metrics)
  }

  override def unregisterShuffle(shuffleId: Int): Boolean = {
    val coords = registered.remove(shuffleId)
    if (coords != null) deleteNamespace(coords)
    sortManager.unregisterShuffle(shuffleId)
    true
  }

  private def deleteNamespace(coords: RpmpShuffleCoordinates): Unit = {
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

  override def shuffleBlockResolver: ShuffleBlockResolver = sortManager.shuffleBlockResolver

  override def stop(): Unit = {
    // Driver: every shuffle of spark/<appId>/ not yet unregistered goes now.
    registered.values().forEach(c => deleteNamespace(c))
    registered.clear()
    clients.closeAll()
    sortManager.stop()
  }
}
