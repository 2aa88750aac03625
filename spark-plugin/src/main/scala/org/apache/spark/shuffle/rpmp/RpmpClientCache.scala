// One RpmpClient per RPMP server per JVM (driver or executor), shared by all tasks of
// that JVM and owned by its RpmpShuffleManager, which closes them at stop(). A client
// that saw its server go away is dropped so the next task reconnects.
package org.apache.spark.shuffle.rpmp

import java.time.Duration
import java.util.concurrent.ConcurrentHashMap

import io.rpmp.client.{RpmpClient, RpmpClientOptions, RpmpUnavailableException}

import org.apache.spark.internal.Logging

private[spark] class RpmpClientCache(conf: RpmpConf, clientName: String) extends Logging {
  private val clients = new ConcurrentHashMap[String, RpmpClient]()
  // Dropped clients may still be in use by running tasks: closed only at closeAll().
  private val retired = new java.util.concurrent.ConcurrentLinkedQueue[RpmpClient]()

  /** The client for `server`, connecting when there is none (or it was closed). */
  def get(server: String): RpmpClient = {
    val existing = clients.get(server)
    if (existing != null && !existing.isClosed) {
      existing
    } else {
      synchronized {
        val again = clients.get(server)
        if (again != null && !again.isClosed) {
          again
        } else {
          val options = RpmpClientOptions
            .defaults()
            .provider(conf.provider)
            .timeout(Duration.ofMillis(conf.timeoutMs))
            .name(clientName)
          val client = RpmpClient.connect(server, options)
          logInfo(s"Connected to RPMP server $server")
          clients.put(server, client)
          client
        }
      }
    }
  }

  /** Drops (and closes) the client of `server` when `error` says the server is gone. */
  def invalidateOn(server: String, error: Throwable): Unit = error match {
    case _: RpmpUnavailableException =>
      val c = clients.remove(server)
      if (c != null) {
        logWarning(s"RPMP server $server unavailable; will reconnect on next use")
        retired.add(c)
      }
    case _ =>
  }

  def closeAll(): Unit = synchronized {
    clients.values().forEach(c => c.close())
    clients.clear()
    retired.forEach(c => c.close())
    retired.clear()
  }
}
