// Split instead of fail (cluster mode; docs/cluster.md "Split instead of fail"): when a
// placement group's namespace cannot take an append for space, the group continues in an
// extent, namespace <group>/x<k> (k = 1, 2, ...), which the proxy places on the nodes with
// the most room. This unit names extents, creates them (idempotent: two executors that
// hit "no space" together both use the same x<k>), keeps each JVM's highest known extent
// per group (where its writers append next), and lists a group's extents for readers and
// the driver's ttl keeper (readers of one stage attempt share one listing per JVM:
// listForStage). Extents are created in order, x<k+1> only once x<k> exists, so
// a group's extents are x1..xn up to the first name the proxy does not know.
// Callers: ChunkAppender (no-space path), ValidatedRecordIterator (listing),
// RpmpShuffleManager (ttl keeper). Thread-safe.
package org.apache.spark.shuffle.rpmp

import java.io.IOException
import java.util.concurrent.ConcurrentHashMap

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import io.rpmp.client.{NodeIds, RpmpClient, RpmpNoSpaceException, RpmpNotFoundException}

import org.apache.spark.internal.Logging

private[spark] object GroupExtents extends Logging {
  /** Extents one chunk may move through before its append fails for space. */
  val MaxMovesPerChunk = 8
  /** The most extents of one group (a bound on listing; far above any real need). */
  val MaxExtents = 1000

  // group namespace -> highest extent this JVM knows (absent: the group itself, 0).
  private val current = new ConcurrentHashMap[String, Integer]()

  /** Extent k of `group` (k = 0: the group namespace itself). */
  def extentName(group: String, k: Int): String = if (k == 0) group else s"$group/x$k"

  /**
   * (group, k) of a namespace a writer appends to: `<group>/x<k>` with k >= 1 written without
   * leading zeros, else (ns, 0).
   */
  def parse(ns: String): (String, Int) = {
    val slash = ns.lastIndexOf('/')
    if (slash > 0) {
      val last = ns.substring(slash + 1)
      if (last.length >= 2 && last.length <= 5 && last.charAt(0) == 'x' && last.charAt(1) != '0' &&
          last.substring(1).forall(c => c >= '0' && c <= '9')) {
        return (ns.substring(0, slash), last.substring(1).toInt)
      }
    }
    (ns, 0)
  }

  /** Where this JVM's writers append `group`'s next chunks. */
  def writeNamespace(group: String): String = {
    val k = current.get(group)
    if (k == null) group else extentName(group, k)
  }

  /**
   * Whether `e` (an append's failure) says the namespace's nodes have no room: the store's
   * "no space" phrases (on the primary, or a required replica's, which the primary reports),
   * the list in common/no_space.h that servers compose with (docs/wire-protocol.md).
   * Other RESOURCE_EXHAUSTED answers (session limits, a busy peer) are not space.
   */
  def isNoSpace(e: Throwable): Boolean = e match {
    case n: RpmpNoSpaceException =>
      val m = Option(n.getMessage).getOrElse("")
      m.contains("no pool can hold") || m.contains("cannot hold an object") ||
        m.contains("no free range")
    case _ => false
  }

  // (group, reading stage, its attempt) -> the group's extents, listed by the first reduce
  // task of that stage attempt in this JVM (listForStage). Bounded: cleared when full.
  private val listedForStage = new ConcurrentHashMap[(String, Int, Int), Seq[String]]()
  private val MaxListedForStage = 4096

  /**
   * The extents of `group` for a reduce task of stage attempt (stage, attempt): listed once
   * per stage attempt in this JVM, then reused by its other tasks. Sound because every map
   * output such a task reads was complete, every chunk appended and every extent it used
   * created, before the stage attempt started (a map re-run comes with a new reduce stage
   * attempt, which lists again); a chunk missing all the same is caught by the reader's
   * completeness check, and its retry rounds list afresh (list). Saves one proxy call per
   * reduce task and group (about 1.3 ms each on the 2-core machine: 2,000 per agg job).
   */
  def listForStage(client: RpmpClient, group: String, stage: Int, attempt: Int): Seq[String] = {
    val key = (group, stage, attempt)
    val known = listedForStage.get(key)
    if (known != null) return known
    val fresh = list(client, group)
    if (listedForStage.size >= MaxListedForStage) listedForStage.clear()
    listedForStage.put(key, fresh)
    fresh
  }

  /** The extents x1..xn of `group` that exist (describeNamespace until the first unknown). */
  def list(client: RpmpClient, group: String): Seq[String] = {
    val out = mutable.ArrayBuffer.empty[String]
    var k = 1
    while (k <= MaxExtents && exists(client, extentName(group, k))) {
      out += extentName(group, k)
      k += 1
    }
    out.toSeq
  }

  private def exists(client: RpmpClient, ns: String): Boolean =
    try {
      client.describeNamespace(ns)
      true
    } catch {
      case _: RpmpNotFoundException => false
    }

  /**
   * An append to extent `failedK` of `group` was refused for space (`cause`): returns the
   * extent to append to next, the highest that exists above `failedK` (another task or
   * executor split the group already) or a new one, `failedK + 1`, created with the group's
   * options (copies, min copies, ttl). Before creating, checks that as many live nodes as
   * the group has copies report more than `needed` bytes free; when not, the cluster is
   * full: RpmpNoSpaceException naming the space needed and free. `what` names the shuffle
   * and partition for messages.
   */
  def moveOn(client: RpmpClient, group: String, failedK: Int, needed: Long, what: String,
      cause: Throwable): Int = synchronized {
    val known = Option(current.get(group)).map(_.intValue).getOrElse(0)
    if (known > failedK) return known
    var k = failedK
    while (k < MaxExtents && exists(client, extentName(group, k + 1))) k += 1
    if (k > failedK) {
      current.put(group, k)
      logInfo(s"RPMP $what: group $group continues in existing extent ${extentName(group, k)}")
      return k
    }
    if (k >= MaxExtents) throw new RpmpNoSpaceException(s"$what: group $group has $k extents")
    val options = client.describeNamespace(group)
    val replicas = options.replicas()
    val nodes = client.liveNodeSpace().asScala.toSeq
    val roomy = nodes.count(_.free() > needed)
    if (roomy < replicas) {
      val free = nodes.map(n => s"${NodeIds.hex(n.nodeId())} ${n.free()} of ${n.capacity()}")
      throw new RpmpNoSpaceException(s"no space in the RPMP cluster for $what: a chunk of " +
        s"$needed bytes needs $replicas node(s) with room, $roomy have it (free bytes per live " +
        s"node: ${free.mkString(", ")}); the last append said: ${cause.getMessage}")
    }
    val next = extentName(group, k + 1)
    val info = client.createNamespace(next, replicas, options.minReplicas(), options.ttl())
    current.put(group, k + 1)
    RpmpMetrics.splits.inc()
    logInfo(s"RPMP $what: split group $group into extent $next on nodes " +
      s"${info.replicaNodes().asScala.map(n => NodeIds.hex(n.longValue)).mkString(",")} " +
      s"(extent ${extentName(group, k)} refused $needed bytes: ${cause.getMessage})")
    k + 1
  }

  /**
   * Resets the ttl clock of `group` and of its extents x1, x2, ... up to the first that is
   * not there (the driver's ttl keeper); RpmpNotFoundException when the group is not there.
   */
  def touch(client: RpmpClient, group: String): Unit = {
    client.touchNamespace(group)
    var k = 1
    while (k <= MaxExtents && (try { client.touchNamespace(extentName(group, k)); true }
        catch { case _: RpmpNotFoundException => false })) k += 1
  }

  /** Forgets every group under `prefix` (the shuffle or application namespace). */
  def forget(prefix: String): Unit =
    current.keySet().removeIf(g => g == prefix || g.startsWith(prefix + "/"))

  /** An IOException for an append that found no extent with room after MaxMovesPerChunk. */
  def exhausted(what: String, cause: Throwable): IOException =
    new RpmpNoSpaceException(s"$what: no space after moving through $MaxMovesPerChunk " +
      s"extents; the last append said: ${cause.getMessage}")
}
