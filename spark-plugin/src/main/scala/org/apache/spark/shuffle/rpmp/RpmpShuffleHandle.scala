// The handle registerShuffle returns and Spark ships to every task: the dependency (as
// for any shuffle) plus plain serializable coordinates of the shuffle in RPMP and, in
// cluster mode, the application's credential (AppCredential: executors connect with it
// instead of the cluster secret; its toString redacts the token). No clients or other
// live objects travel in it. Created by RpmpShuffleManager only.
package org.apache.spark.shuffle.rpmp

import org.apache.spark.ShuffleDependency
import org.apache.spark.shuffle.BaseShuffleHandle

/**
 * Where a shuffle lives in RPMP: namespace spark/<appId>-<runId>/<shuffleId>, where runId is
 * unique per SparkContext (the application attempt id, else a random id the driver minted), so
 * a second application attempt with the same appId never sees the first one's chunks.
 * Partition p of the shuffle is the object (namespace, p.toString); each map attempt appends
 * chunks tagged with its attempt id. Server-direct: on server servers(p % servers.size).
 * Cluster mode (`proxies` non-empty, resolved on the driver so executors need no
 * RPMP_PROXIES): through the proxies. With `groups` > 1 the shuffle is spread over the
 * cluster as placement groups: partition p lives in namespace <namespace>/g<groupOf(p)>,
 * each group a namespace of its own that the proxies place (and replicate, fence, repair)
 * independently, so a shuffle can use every node (docs/spark-plugin.md "Placement groups").
 */
private[spark] case class RpmpShuffleCoordinates(
    appId: String,
    runId: String,
    shuffleId: Int,
    numMaps: Int,
    numPartitions: Int,
    servers: Seq[String],
    proxies: Seq[String] = Nil,
    groups: Int = 1) {
  require(servers.nonEmpty || proxies.nonEmpty, "no RPMP server")
  require(runId.nonEmpty, "empty runId")
  require(groups >= 1, s"groups must be >= 1, got $groups")

  def clusterMode: Boolean = proxies.nonEmpty

  /** The shuffle's namespace: its only one, or with groups > 1 the parent of its groups. */
  def namespace: String = RpmpShuffleCoordinates.namespace(appId, runId, shuffleId)

  /** The namespace holding partition `partitionId`. */
  def namespaceOf(partitionId: Int): String =
    if (groups <= 1) namespace else groupNamespace(groupOf(partitionId))

  /**
   * Partitions go to groups in runs of `groupRun` consecutive ids, round robin. A map task
   * pushes its partitions in id order: within a run its appends go to one primary over one
   * connection, where a new group per partition (p % groups) made every next append another
   * server's, and cost about 2x the CPU per small append on both ends
   * (bench/append_spread.sh, docs/benchmarks.md "Spreading"). A run is at most 32 ids and
   * short enough that each group gets at least 8 runs: the groups' shares of partitions
   * differ by at most one run (an eighth of a share), and map tasks writing in step move
   * on to the next primary every run instead of all writing to one.
   */
  def groupOf(partitionId: Int): Int = (partitionId / groupRun) % groups

  /**
   * Every partition id, those of group 0 first, then group 1's, ... (ids ascending within a
   * group). A writer pushing many partitions at once goes in this order, so each primary's
   * appends come in one burst on one connection, which each end then serves in fewer
   * wake-ups than appends alternating between primaries (docs/benchmarks.md "Spreading").
   */
  @transient lazy val partitionsByGroup: Array[Int] =
    if (groups <= 1) Array.range(0, numPartitions)
    else Array.range(0, numPartitions).sortBy(groupOf) // a stable sort: ids stay ascending

  private def groupRun: Int = math.max(1, math.min(32, numPartitions / (groups * 8)))

  /** Every namespace of the shuffle (one per placement group). */
  def namespaces: Seq[String] =
    if (groups <= 1) Seq(namespace) else (0 until groups).map(groupNamespace)

  private def groupNamespace(group: Int): String = s"$namespace/g$group"

  def partitionKey(partitionId: Int): String = partitionId.toString

  /** The RpmpClientCache endpoint holding partition `partitionId`. */
  def serverFor(partitionId: Int): String =
    if (clusterMode) RpmpClientCache.clusterEndpoint(proxies)
    else servers(partitionId % servers.size)
}

private[spark] object RpmpShuffleCoordinates {
  /** The namespace subtree of one SparkContext (run) of application appId. */
  def appPrefix(appId: String, runId: String): String = s"spark/$appId-$runId"

  /** The prefix of the application's credential: every namespace under appPrefix. */
  def credentialPrefix(appId: String, runId: String): String = appPrefix(appId, runId) + "/"

  def namespace(appId: String, runId: String, shuffleId: Int): String =
    s"${appPrefix(appId, runId)}/$shuffleId"
}

private[spark] class RpmpShuffleHandle[K, V, C](
    shuffleId: Int,
    val coordinates: RpmpShuffleCoordinates,
    dependency: ShuffleDependency[K, V, C],
    val credential: Option[CredentialRef] = None)
  extends BaseShuffleHandle[K, V, C](shuffleId, dependency)
