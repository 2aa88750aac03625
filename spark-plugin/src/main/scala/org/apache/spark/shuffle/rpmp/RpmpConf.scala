// The plugin's configuration keys (spark.rpmp.*), their defaults and parsing. Read by
// RpmpShuffleManager on the driver and on every executor; documented in
// docs/spark-plugin.md (keep both in step).
package org.apache.spark.shuffle.rpmp

import java.util.Locale

import org.apache.spark.SparkConf

/** What to do when RPMP cannot be reached at registerShuffle. */
private[spark] object FallbackPolicy extends Enumeration {
  val Sort, Fail = Value

  def parse(s: String): Value = s.trim.toLowerCase(Locale.ROOT) match {
    case "sort" => Sort
    case "fail" => Fail
    case other =>
      throw new IllegalArgumentException(s"${RpmpConf.FallbackKey}: '$other' is not sort|fail")
  }
}

/** Parsed spark.rpmp.* settings. */
private[spark] case class RpmpConf(
    servers: Seq[String],
    provider: String,
    timeoutMs: Long,
    pushBufferSize: Int,
    maxBytesInFlight: Long,
    maxPushesInFlight: Int,
    fallback: FallbackPolicy.Value)

private[spark] object RpmpConf {
  val ServerKey = "spark.rpmp.server"
  val ProxiesKey = "spark.rpmp.proxies"
  val ProviderKey = "spark.rpmp.provider"
  val TimeoutKey = "spark.rpmp.timeout"
  val PushBufferSizeKey = "spark.rpmp.pushBufferSize"
  val MaxBytesInFlightKey = "spark.rpmp.reader.maxBytesInFlight"
  val MaxPushesInFlightKey = "spark.rpmp.writer.maxPushesInFlight"
  val FallbackKey = "spark.rpmp.fallback"

  def apply(conf: SparkConf): RpmpConf = {
    if (conf.contains(ProxiesKey)) {
      throw new IllegalArgumentException(
        s"$ProxiesKey is not supported yet (no rpmp-proxy); use $ServerKey=HOST:PORT[,HOST:PORT]")
    }
    val servers = conf.get(ServerKey, "").split(",").map(_.trim).filter(_.nonEmpty).toSeq
    servers.foreach(checkHostPort)
    val pushBufferSize = conf.getSizeAsBytes(PushBufferSizeKey, "1m")
    require(pushBufferSize > 0 && pushBufferSize <= (1L << 30),
      s"$PushBufferSizeKey must be in (0, 1g], got $pushBufferSize")
    val maxInFlight = conf.getSizeAsBytes(MaxBytesInFlightKey, "48m")
    require(maxInFlight > 0, s"$MaxBytesInFlightKey must be positive")
    val maxPushes = conf.getInt(MaxPushesInFlightKey, 8)
    require(maxPushes > 0, s"$MaxPushesInFlightKey must be positive")
    RpmpConf(
      servers = servers,
      provider = conf.get(ProviderKey, "tcp;ofi_rxm"),
      timeoutMs = conf.getTimeAsMs(TimeoutKey, "30s"),
      pushBufferSize = pushBufferSize.toInt,
      maxBytesInFlight = maxInFlight,
      maxPushesInFlight = maxPushes,
      fallback = FallbackPolicy.parse(conf.get(FallbackKey, "sort")))
  }

  /** Splits "host:port"; IllegalArgumentException when it is not one. */
  def checkHostPort(s: String): (String, Int) = {
    val i = s.lastIndexOf(':')
    val port = if (i > 0) s.substring(i + 1).toIntOption else None
    port match {
      case Some(p) if p > 0 && p < 65536 => (s.substring(0, i), p)
      case _ => throw new IllegalArgumentException(s"$ServerKey: '$s' is not HOST:PORT")
    }
  }
}
