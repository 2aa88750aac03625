// The ShuffleDataIO (spark.shuffle.sort.io.plugin.class=io.rpmp.spark.RpmpShuffleDataIO)
// that lets Spark run dynamic allocation without an external shuffle service: its driver
// components report supportsReliableStorage() = true, because the map outputs of RPMP
// shuffles live in RPMP, not on executors, so Spark may release idle executors and keep
// their map outputs registered. Application and shuffle cleanup go to the RPMP shuffle
// manager (which deletes the namespaces) and to Spark's local-disk components, which keep
// serving the shuffles spark.rpmp.fallback=sort hands to Spark's sort shuffle (their
// outputs ARE on executors: Spark recomputes them if it released their executors; see
// docs/spark-plugin.md). Instantiated by Spark (SparkContext on the driver, SparkEnv on
// executors) through the public subclass io.rpmp.spark.RpmpShuffleDataIO.
package org.apache.spark.shuffle.rpmp

import java.util.{Map => JMap}

import scala.util.control.NonFatal

import org.apache.spark.{SparkConf, SparkEnv}
import org.apache.spark.internal.Logging
import org.apache.spark.shuffle.api.{ShuffleDataIO, ShuffleDriverComponents, ShuffleExecutorComponents}
import org.apache.spark.shuffle.sort.io.LocalDiskShuffleDataIO

class RpmpShuffleDataIOBase(conf: SparkConf) extends ShuffleDataIO {
  private val localDisk = new LocalDiskShuffleDataIO(conf)

  /** Executors: Spark's local-disk writers, used only by shuffles that fell back to sort. */
  override def executor(): ShuffleExecutorComponents = localDisk.executor()

  override def driver(): ShuffleDriverComponents =
    new RpmpShuffleDriverComponents(localDisk.driver())
}

/** Driver components: reliable storage, cleanup through the RPMP manager and local disk. */
private[spark] class RpmpShuffleDriverComponents(localDisk: ShuffleDriverComponents)
  extends ShuffleDriverComponents with Logging {

  override def initializeApplication(): JMap[String, String] = localDisk.initializeApplication()

  private def rpmpManager: Option[RpmpShuffleManager] =
    Option(SparkEnv.get).map(_.shuffleManager).collect { case m: RpmpShuffleManager => m }

  /** Deletes what RPMP holds of this application (also done by the manager's stop()). */
  override def cleanupApplication(): Unit = {
    try rpmpManager.foreach(_.cleanupApplication()) catch {
      case NonFatal(e) => logWarning(s"RPMP application cleanup failed (ttl will do it): $e")
    }
    localDisk.cleanupApplication()
  }

  override def registerShuffle(shuffleId: Int): Unit = localDisk.registerShuffle(shuffleId)

  /** A shuffle Spark no longer needs (ContextCleaner): its RPMP namespace and local files. */
  override def removeShuffle(shuffleId: Int, blocking: Boolean): Unit = {
    try rpmpManager.foreach(_.unregisterShuffle(shuffleId)) catch {
      case NonFatal(e) => logWarning(s"RPMP cleanup of shuffle $shuffleId failed: $e")
    }
    localDisk.removeShuffle(shuffleId, blocking)
  }

  /** Map outputs in RPMP do not die with executors: Spark may release them. */
  override def supportsReliableStorage(): Boolean = true
}
