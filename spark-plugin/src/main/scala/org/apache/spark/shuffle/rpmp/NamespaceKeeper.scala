// Driver side, cluster mode: a daemon thread that runs `touchAll` (which resets the ttl
// clock of every live shuffle's namespace) every ttl/3, so a job that runs longer than
// spark.rpmp.ttl keeps its shuffles while a crashed driver's still expire. Owned by
// RpmpShuffleManager: start() at the first cluster-mode registerShuffle (idempotent),
// stop() at the manager's stop(). Thread-safe.
package org.apache.spark.shuffle.rpmp

import java.util.concurrent.{Executors, ScheduledExecutorService, TimeUnit}

import scala.util.control.NonFatal

import org.apache.spark.internal.Logging

private[spark] class NamespaceKeeper(ttlSeconds: Long, touchAll: () => Unit) extends Logging {
  private var executor: ScheduledExecutorService = _
  private var stopped = false

  /** Period between touches: a third of the ttl (at least 1 s); 0 when ttl is 0 (never). */
  def periodMs: Long = if (ttlSeconds <= 0) 0 else math.max(1000L, ttlSeconds * 1000 / 3)

  def start(): Unit = synchronized {
    if (executor != null || stopped || periodMs == 0) return
    executor = Executors.newSingleThreadScheduledExecutor { r =>
      val t = new Thread(r, "rpmp-namespace-keeper")
      t.setDaemon(true)
      t
    }
    executor.scheduleWithFixedDelay(() =>
      try touchAll() catch { case NonFatal(e) => logWarning(s"Touching namespaces failed: $e") },
      periodMs, periodMs, TimeUnit.MILLISECONDS)
  }

  def stop(): Unit = synchronized {
    stopped = true
    if (executor != null) {
      executor.shutdownNow()
      executor.awaitTermination(10, TimeUnit.SECONDS)
      executor = null
    }
  }
}
