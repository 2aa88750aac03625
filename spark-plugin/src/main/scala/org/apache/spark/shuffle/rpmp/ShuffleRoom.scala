// The room check a new shuffle passes before the driver stores it in RPMP
// (RpmpShuffleManager.registerShuffle): each copy of the shuffle needs
// spark.rpmp.minFreeSpace bytes free on a node (cluster mode: the live nodes' free space in
// the proxy's node map, one proxy call) or a pool (server-direct: each listed server's). A shuffle
// that fails it is "cluster full": spark.rpmp.fallback=sort hands it to Spark's sort
// shuffle, =fail fails it with the message built here. Driver only; stateless.
package org.apache.spark.shuffle.rpmp

import scala.jdk.CollectionConverters._

import io.rpmp.client.{NodeSpace, ServerStats}

/** RPMP is reachable but has not the room a new shuffle needs (message names both). */
private[spark] class RpmpNoRoomException(message: String) extends IllegalStateException(message)

private[spark] object ShuffleRoom {
  /** Cluster mode: `copies` live nodes (capped at those there are) need `minFree` each. */
  def checkNodes(shuffleId: Int, nodes: Seq[NodeSpace], copies: Int, minFree: Long): Unit =
    check(shuffleId, nodes.map(_.free()), copies, minFree, "the live nodes of the cluster",
      "node(s)")

  /** Server-direct: one pool of server `where` needs `minFree`. */
  def checkServer(shuffleId: Int, stats: ServerStats, minFree: Long, where: String): Unit =
    check(shuffleId, stats.pools().asScala.map(_.free()).toSeq, 1, minFree, where, "pool(s)")

  private def check(shuffleId: Int, free: Seq[Long], copies: Int, minFree: Long, where: String,
      unit: String): Unit =
    shortage(free.sorted(Ordering[Long].reverse), copies, minFree, unit).foreach { why =>
      throw new RpmpNoRoomException(s"RPMP has no room for shuffle $shuffleId on $where: $why")
    }

  /** None when enough pools have room, else what is needed and what is free. */
  def shortage(freeDescending: Seq[Long], copies: Int, minFree: Long,
      unit: String = "pool(s)"): Option[String] = {
    val wanted = math.min(copies, freeDescending.size)
    if (wanted == 0 || freeDescending(wanted - 1) >= minFree) return None
    val shown = freeDescending.take(8).map(bytes).mkString(", ")
    val more = if (freeDescending.size > 8) s", ... (${freeDescending.size} in all)" else ""
    Some(s"it needs ${bytes(minFree)} free on each of $wanted $unit " +
      s"(${RpmpConf.MinFreeSpaceKey} for each of ${RpmpConf.ReplicasKey} copies); they " +
      s"have $shown$more free (${bytes(freeDescending.sum)} in all)")
  }

  private def bytes(n: Long): String =
    if (n >= (1L << 20)) f"${n.toDouble / (1L << 20)}%.1f MiB (${n} bytes)" else s"$n bytes"
}
