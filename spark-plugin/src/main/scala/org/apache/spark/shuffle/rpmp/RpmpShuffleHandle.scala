// The handle registerShuffle returns and Spark ships to every task: the dependency (as
// for any shuffle) plus plain serializable coordinates of the shuffle in RPMP. No
// clients or other live objects travel in it. Created by RpmpShuffleManager only.
package org.apache.spark.shuffle.rpmp

import org.apache.spark.ShuffleDependency
import org.apache.spark.shuffle.BaseShuffleHandle

/**
 * Where a shuffle lives in RPMP. Partition p of the shuffle is the object (namespace, p.toString);
 * each map attempt appends records tagged with its attempt id. Server-direct: on server
 * servers(p % servers.size). Cluster mode (`proxies` non-empty, resolved on the driver so
 * executors need no RPMP_PROXIES): through the proxies, which place the whole namespace.
 */
private[spark] case class RpmpShuffleCoordinates(
    appId: String,
    shuffleId: Int,
    numMaps: Int,
    numPartitions: Int,
    servers: Seq[String],
    proxies: Seq[String] = Nil) {
  require(servers.nonEmpty || proxies.nonEmpty, "no RPMP server")

  def clusterMode: Boolean = proxies.nonEmpty

  def namespace: String = RpmpShuffleCoordinates.namespace(appId, shuffleId)

  def partitionKey(partitionId: Int): String = partitionId.toString

  /** The RpmpClientCache endpoint holding partition `partitionId`. */
  def serverFor(partitionId: Int): String =
    if (clusterMode) RpmpClientCache.clusterEndpoint(proxies)
    else servers(partitionId % servers.size)

  /**
   * Host and port of the MapStatus location: an address that does not die with an executor
   * (the first server, or in cluster mode the first proxy).
   */
  def locationHostPort: (String, Int) =
    if (clusterMode) RpmpConf.checkHostPort(proxies.head, RpmpConf.ProxiesKey)
    else RpmpConf.checkHostPort(servers.head)
}

private[spark] object RpmpShuffleCoordinates {
  def appPrefix(appId: String): String = s"spark/$appId"

  def namespace(appId: String, shuffleId: Int): String = s"${appPrefix(appId)}/$shuffleId"
}

private[spark] class RpmpShuffleHandle[K, V, C](
    shuffleId: Int,
    val coordinates: RpmpShuffleCoordinates,
    dependency: ShuffleDependency[K, V, C])
  extends BaseShuffleHandle[K, V, C](shuffleId, dependency)
