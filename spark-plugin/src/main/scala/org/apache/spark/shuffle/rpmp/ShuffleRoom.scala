// The room check a new shuffle passes before the driver stores it in RPMP
// (RpmpShuffleManager.registerShuffle): each copy of the shuffle needs
// spark.rpmp.minFreeSpace bytes free in a pool of its own, as the servers report them
// (cluster mode: the pools of the live nodes; server-direct: each listed server). A shuffle
// that fails it is "cluster full": spark.rpmp.fallback=sort hands it to Spark's sort
// shuffle, =fail fails it with the message built here. Driver only; stateless.
package org.apache.spark.shuffle.rpmp

import scala.jdk.CollectionConverters._

import io.rpmp.client.ServerStats

/** RPMP is reachable but has not the room a new shuffle needs (message names both). */
private[spark] class RpmpNoRoomException(message: String) extends IllegalStateException(message)

private[spark] object ShuffleRoom {
  /**
   * Throws RpmpNoRoomException unless `copies` pools of `stats` (capped at the pools there
   * are) each have `minFree` bytes free. `where` names the servers for the message.
   */
  def check(shuffleId: Int, stats: ServerStats, copies: Int, minFree: Long, where: String): Unit = {
    val free = stats.pools().asScala.map(_.free()).sorted(Ordering[Long].reverse).toSeq
    shortage(free, copies, minFree).foreach { why =>
      throw new RpmpNoRoomException(s"RPMP has no room for shuffle $shuffleId on $where: $why")
    }
  }

  /** None when enough pools have room, else what is needed and what is free. */
  def shortage(freeDescending: Seq[Long], copies: Int, minFree: Long): Option[String] = {
    val wanted = math.min(copies, freeDescending.size)
    if (wanted == 0 || freeDescending(wanted - 1) >= minFree) return None
    val shown = freeDescending.take(8).map(bytes).mkString(", ")
    val more = if (freeDescending.size > 8) s", ... (${freeDescending.size} pools)" else ""
    Some(s"it needs ${bytes(minFree)} free in each of $wanted pool(s) " +
      s"(${RpmpConf.MinFreeSpaceKey} for each of ${RpmpConf.ReplicasKey} copies); the pools " +
      s"have $shown$more free (${bytes(freeDescending.sum)} in all)")
  }

  private def bytes(n: Long): String =
    if (n >= (1L << 20)) f"${n.toDouble / (1L << 20)}%.1f MiB (${n} bytes)" else s"$n bytes"
}
