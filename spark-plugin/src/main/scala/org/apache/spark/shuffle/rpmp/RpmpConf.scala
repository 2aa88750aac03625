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

/** Which map-side writer a shuffle uses (spark.rpmp.writer.path). */
private[spark] object WriterPath extends Enumeration {
  /**
   * Auto: bypass with at most spark.shuffle.sort.bypassMergeThreshold partitions and no
   * map-side combine; else sort-based when the serializer relocates records and there is no
   * map-side combine; else buffers.
   */
  val Auto, Bypass, Sort, Buffers = Value

  def parse(s: String): Value = s.trim.toLowerCase(Locale.ROOT) match {
    case "auto" => Auto
    case "bypass" => Bypass
    case "sort" => Sort
    case "buffers" => Buffers
    case other => throw new IllegalArgumentException(
      s"${RpmpConf.WriterPathKey}: '$other' is not auto|bypass|sort|buffers")
  }
}

/**
 * The RPMP cluster secret (spark.rpmp.auth.secret / secretFile); never printed (a case
 * class field would be, in toString). Empty: librpmp falls back to env RPMP_SECRET_FILE.
 */
private[spark] final class RpmpSecret(private val bytes: Array[Byte]) extends Serializable {
  def isEmpty: Boolean = bytes.isEmpty
  def value: Array[Byte] = bytes.clone()
  override def toString: String = if (isEmpty) "RpmpSecret(none)" else "RpmpSecret(<redacted>)"
  override def equals(o: Any): Boolean = o match {
    case s: RpmpSecret => java.util.Arrays.equals(bytes, s.bytes)
    case _ => false
  }
  override def hashCode: Int = java.util.Arrays.hashCode(bytes)
}

private[spark] object RpmpSecret {
  val None = new RpmpSecret(Array.emptyByteArray)
}

/**
 * RPMP refused this application's credentials (PERMISSION_DENIED at HELLO): a
 * configuration error naming the settings to fix, never a reason to fall back.
 */
private[spark] class RpmpAuthException(cause: Throwable)
  extends IllegalStateException(
    s"RPMP refused this application's credentials (${cause.getMessage}): set " +
      s"${RpmpConf.AuthSecretKey} (or ${RpmpConf.AuthSecretFileKey}, a file readable on the " +
      "driver and every executor) to the RPMP cluster secret (the servers' auth_secret_file; " +
      "without either, env RPMP_SECRET_FILE is used)", cause)

/**
 * Parsed spark.rpmp.* settings. Exactly one mode: `proxies` non-empty = cluster mode (through
 * rpmp-proxy; `servers` empty), else server-direct over `servers` (possibly empty = unset).
 */
private[spark] case class RpmpConf(
    servers: Seq[String],
    provider: String,
    timeoutMs: Long,
    pushBufferSize: Int,
    maxBytesInFlight: Long,
    maxPushesInFlight: Int,
    fallback: FallbackPolicy.Value,
    proxies: Seq[String] = Nil,
    replicas: Int = 2,
    ttlSeconds: Long = 24 * 3600,
    retryForMs: Long = 30000,
    readRetries: Int = 3,
    readRetryWaitMs: Long = 500,
    writerPath: WriterPath.Value = WriterPath.Auto,
    sortRunBytes: Long = Long.MaxValue,
    bypassChunkBytes: Int = 192 << 10,
    authSecret: RpmpSecret = RpmpSecret.None,
    minFreeBytes: Long = 16L << 20,
    placementGroups: Int = 0,
    connections: Int = 0) {

  def clusterMode: Boolean = proxies.nonEmpty

  /** Longest a single client call may take: the call timeout, plus failover retries. */
  def callTimeoutMs: Long = if (clusterMode) timeoutMs + retryForMs else timeoutMs
}

private[spark] object RpmpConf {
  val ServerKey = "spark.rpmp.server"
  val ProxiesKey = "spark.rpmp.proxies"
  val ProviderKey = "spark.rpmp.provider"
  val TimeoutKey = "spark.rpmp.timeout"
  val PushBufferSizeKey = "spark.rpmp.pushBufferSize"
  val MaxBytesInFlightKey = "spark.rpmp.reader.maxBytesInFlight"
  val MaxPushesInFlightKey = "spark.rpmp.writer.maxPushesInFlight"
  val FallbackKey = "spark.rpmp.fallback"
  val ReplicasKey = "spark.rpmp.replicas"
  val TtlKey = "spark.rpmp.ttl"
  val RetryForKey = "spark.rpmp.retryFor"
  val ReadRetriesKey = "spark.rpmp.reader.retries"
  val ReadRetryWaitKey = "spark.rpmp.reader.retryWait"
  val WriterPathKey = "spark.rpmp.writer.path"
  val SortRunSizeKey = "spark.rpmp.writer.sortRunSize"
  val BypassChunkSizeKey = "spark.rpmp.writer.bypassChunkSize"
  val MinFreeSpaceKey = "spark.rpmp.minFreeSpace"
  val PlacementGroupsKey = "spark.rpmp.placementGroups"
  val ConnectionsKey = "spark.rpmp.client.connections"
  // Security (docs/security.md). The secret's key contains "secret", so Spark's default
  // spark.redaction.regex hides its value in the UI and event logs.
  val AuthSecretKey = "spark.rpmp.auth.secret"
  val AuthSecretFileKey = "spark.rpmp.auth.secretFile"
  /** Environment variable naming the proxies when neither key is set (as for rpmpctl). */
  val ProxiesEnv = "RPMP_PROXIES"

  def apply(conf: SparkConf): RpmpConf = apply(conf, sys.env)

  /**
   * Mode: spark.rpmp.proxies (cluster) or spark.rpmp.server (server-direct); both set is an
   * error; neither set: env RPMP_PROXIES (cluster), else unset.
   */
  def apply(conf: SparkConf, env: Map[String, String]): RpmpConf = {
    def split(s: String) = s.split(",").map(_.trim).filter(_.nonEmpty).toSeq
    if (conf.contains(ProxiesKey) && conf.contains(ServerKey)) {
      throw new IllegalArgumentException(
        s"set either $ProxiesKey (cluster mode) or $ServerKey (server-direct), not both")
    }
    val proxies =
      if (conf.contains(ProxiesKey)) split(conf.get(ProxiesKey))
      else if (conf.contains(ServerKey)) Nil
      else split(env.getOrElse(ProxiesEnv, ""))
    if (conf.contains(ProxiesKey) && proxies.isEmpty) {
      throw new IllegalArgumentException(s"$ProxiesKey is empty")
    }
    proxies.foreach(p => checkHostPort(p, ProxiesKey))
    val servers = split(conf.get(ServerKey, ""))
    servers.foreach(checkHostPort(_))
    val replicas = conf.getInt(ReplicasKey, 2)
    require(replicas >= 1, s"$ReplicasKey must be >= 1, got $replicas")
    val ttlSeconds = conf.getTimeAsSeconds(TtlKey, "24h")
    require(ttlSeconds >= 0, s"$TtlKey must be >= 0 (0 = never expire)")
    val retryForMs = conf.getTimeAsMs(RetryForKey, "30s")
    require(retryForMs >= 0, s"$RetryForKey must be >= 0")
    val pushBufferSize = conf.getSizeAsBytes(PushBufferSizeKey, "1m")
    require(pushBufferSize > 0 && pushBufferSize <= (1L << 30),
      s"$PushBufferSizeKey must be in (0, 1g], got $pushBufferSize")
    val maxInFlight = conf.getSizeAsBytes(MaxBytesInFlightKey, "48m")
    require(maxInFlight > 0, s"$MaxBytesInFlightKey must be positive")
    val maxPushes = conf.getInt(MaxPushesInFlightKey, 8)
    require(maxPushes > 0, s"$MaxPushesInFlightKey must be positive")
    val readRetries = conf.getInt(ReadRetriesKey, 3)
    require(readRetries >= 0, s"$ReadRetriesKey must be >= 0")
    val readRetryWaitMs = conf.getTimeAsMs(ReadRetryWaitKey, "500ms")
    require(readRetryWaitMs >= 0, s"$ReadRetryWaitKey must be >= 0")
    val sortRun = conf.getSizeAsBytes(SortRunSizeKey, Long.MaxValue.toString)
    require(sortRun > 0, s"$SortRunSizeKey must be positive")
    val bypassChunk = conf.getSizeAsBytes(BypassChunkSizeKey, "192k")
    require(bypassChunk >= 4096 && bypassChunk <= (256L << 20),
      s"$BypassChunkSizeKey must be in [4k, 256m], got $bypassChunk")
    val minFree = conf.getSizeAsBytes(MinFreeSpaceKey, "16m")
    require(minFree >= 0, s"$MinFreeSpaceKey must be >= 0")
    val groups = conf.getInt(PlacementGroupsKey, 0)
    require(groups >= 0 && groups <= 4096, s"$PlacementGroupsKey must be in [0, 4096] (0 = auto), got $groups")
    val connections = conf.getInt(ConnectionsKey, 0)
    require(connections >= 0 && connections <= 64,
      s"$ConnectionsKey must be in [0, 64] (0 = one per data shard, at most 4), got $connections")
    val authSecret = readSecret(conf)
    RpmpConf(
      servers = servers,
      provider = conf.get(ProviderKey, "auto"),
      timeoutMs = conf.getTimeAsMs(TimeoutKey, "30s"),
      pushBufferSize = pushBufferSize.toInt,
      maxBytesInFlight = maxInFlight,
      maxPushesInFlight = maxPushes,
      fallback = FallbackPolicy.parse(conf.get(FallbackKey, "sort")),
      proxies = proxies,
      replicas = replicas,
      ttlSeconds = ttlSeconds,
      retryForMs = retryForMs,
      readRetries = readRetries,
      readRetryWaitMs = readRetryWaitMs,
      writerPath = WriterPath.parse(conf.get(WriterPathKey, "auto")),
      sortRunBytes = sortRun,
      bypassChunkBytes = bypassChunk.toInt,
      authSecret = authSecret,
      minFreeBytes = minFree,
      placementGroups = groups,
      connections = connections)
  }

  /**
   * spark.rpmp.auth.secret, or the contents of spark.rpmp.auth.secretFile (read where the
   * conf is parsed: the driver and each executor; trailing whitespace dropped, as librpmp
   * does); neither: none (librpmp then reads the file named by env RPMP_SECRET_FILE).
   */
  def readSecret(conf: SparkConf): RpmpSecret = {
    if (conf.contains(AuthSecretKey) && conf.contains(AuthSecretFileKey)) {
      throw new IllegalArgumentException(s"set either $AuthSecretKey or $AuthSecretFileKey, not both")
    }
    val text =
      if (conf.contains(AuthSecretKey)) conf.get(AuthSecretKey)
      else if (conf.contains(AuthSecretFileKey)) {
        val path = conf.get(AuthSecretFileKey)
        try new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(path)),
          java.nio.charset.StandardCharsets.UTF_8)
        catch {
          case e: java.io.IOException =>
            throw new IllegalArgumentException(s"$AuthSecretFileKey: cannot read '$path': $e")
        }
      } else ""
    val trimmed = text.replaceAll("\\s+$", "")
    if (text.nonEmpty && trimmed.length < 16) {
      throw new IllegalArgumentException(
        s"${if (conf.contains(AuthSecretKey)) AuthSecretKey else AuthSecretFileKey}: the RPMP " +
          "cluster secret must be at least 16 bytes")
    }
    if (trimmed.isEmpty) RpmpSecret.None
    else new RpmpSecret(trimmed.getBytes(java.nio.charset.StandardCharsets.UTF_8))
  }

  /**
   * Refuses Spark settings the plugin cannot honour, with what to do instead:
   *  - spark.shuffle.useOldFetchProtocol=true makes every map attempt's id its partition index,
   *    so a retried or speculative attempt would share its chunks' tag with the first one;
   *  - spark.shuffle.push.enabled=true would have Spark push a local data file RPMP never writes.
   */
  def checkSparkSettings(conf: SparkConf): Unit = {
    if (conf.getBoolean("spark.shuffle.useOldFetchProtocol", false)) {
      throw new IllegalArgumentException("spark.shuffle.useOldFetchProtocol=true is not " +
        "supported by the RPMP shuffle manager: it makes map ids partition indexes, so " +
        "attempts of one map could not be told apart. Unset it (it is only for Spark 2.x " +
        "external shuffle services), or use Spark's own shuffle.")
    }
    if (conf.getBoolean("spark.shuffle.push.enabled", false)) {
      throw new IllegalArgumentException("spark.shuffle.push.enabled=true (push-based " +
        "shuffle) is not supported by the RPMP shuffle manager: RPMP already stores every map " +
        "output remotely and writes no local data file to push. Set it to false.")
    }
  }

  /** Splits "host:port"; IllegalArgumentException (naming `key`) when it is not one. */
  def checkHostPort(s: String, key: String = ServerKey): (String, Int) = {
    val i = s.lastIndexOf(':')
    val port = if (i > 0) scala.util.Try(s.substring(i + 1).toInt).toOption else None
    port match {
      case Some(p) if p > 0 && p < 65536 => (s.substring(0, i), p)
      case _ => throw new IllegalArgumentException(s"$key: '$s' is not HOST:PORT")
    }
  }
}
