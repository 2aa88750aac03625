// The handle registerShuffle returns and Spark ships to every task: the dependency (as
// for any shuffle) plus plain serializable coordinates of the shuffle in RPMP. No
// clients or other live objects travel in it. Created by RpmpShuffleManager only.
package org.apache.spark.shuffle.rpmp

import org.apache.spark.ShuffleDependency
import org.apache.spark.shuffle.BaseShuffleHandle

/**
 * Where a shuffle lives in RPMP. Partition p of the shuffle is the object (namespace, p.toString)
 * on server servers(p % servers.size); each map attempt appends records tagged with its attempt
 * id. (When rpmp-proxy lands, `servers` becomes the proxies and placement moves behind them.)
 */
private[spark] case class RpmpShuffleCoordinates(
    appId: String,
    shuffleId: Int,
    numMaps: Int,
    numPartitions: Int,
    servers: Seq[String]) {
  require(servers.nonEmpty, "no RPMP server")

  def namespace: String = RpmpShuffleCoordinates.namespace(appId, shuffleId)

  def partitionKey(partitionId: Int): String = partitionId.toString

  def serverFor(partitionId: Int): String = servers(partitionId % servers.size)
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
