// One RpmpClient per RPMP endpoint per JVM (driver or executor), shared by all tasks of
// that JVM and owned by its RpmpShuffleManager, which closes them at stop(). An endpoint
// is a server "host:port" (server-direct) or "cluster:" + the proxy list (cluster mode,
// RpmpClient.connectCluster). A client that saw its server go away is dropped so the
// next task reconnects. Cluster clients connect with the application's credential once a
// shuffle handle brought one (useCredential; docs/spark-plugin.md "Credentials"), else
// with the cluster secret.
package org.apache.spark.shuffle.rpmp

import java.time.Duration
import java.util.concurrent.ConcurrentHashMap

import io.rpmp.client.{ClusterCounters, RpmpClient, RpmpClientOptions, RpmpCredential, RpmpException, RpmpUnavailableException}

import org.apache.spark.internal.Logging

private[spark] class RpmpClientCache(conf: RpmpConf, clientName: String) extends Logging {
  private val clients = new ConcurrentHashMap[String, RpmpClient]()
  // Dropped clients may still be in use by running tasks: closed only at closeAll().
  private val retired = new java.util.concurrent.ConcurrentLinkedQueue[RpmpClient]()
  // The application's credential for cluster clients (null: the cluster secret).
  @volatile private var credential: RpmpCredential = _

  /**
   * Cluster clients connect with `c` from now on (a handle brought it; a renewed one
   * replaces it): clients made with another credential are retired (closed at closeAll,
   * running tasks may still use them).
   */
  def useCredential(c: RpmpCredential): Unit = {
    def same = credential != null && credential.token == c.token
    if (!same) synchronized {
      if (!same) {
        credential = c
        clients.entrySet().removeIf { e =>
          val cluster = e.getKey.startsWith(RpmpClientCache.ClusterPrefix)
          if (cluster) retired.add(e.getValue)
          cluster
        }
        logInfo(s"RPMP cluster clients use the application's credential for ${c.prefix} " +
          s"(expires ${c.expiry})")
      }
    }
  }

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
          val cred = credential
          val base = RpmpClientOptions.defaults()
          val options = (if (cred != null && server.startsWith(RpmpClientCache.ClusterPrefix)) {
              base.token(cred.token)
            } else {
              base.secret(conf.authSecret.value)
            })
            .provider(conf.provider)
            .timeout(Duration.ofMillis(conf.timeoutMs))
            .name(clientName)
            .connections(conf.connections)
            .retryFor(Duration.ofMillis(conf.retryForMs))
            // Namespaces recreated by a straggling write after their deletion still expire.
            .namespaceDefaults(conf.replicas, 0, Duration.ofSeconds(conf.ttlSeconds))
          val client =
            try {
              if (server.startsWith(RpmpClientCache.ClusterPrefix)) {
                val proxies = server.substring(RpmpClientCache.ClusterPrefix.length)
                val c = RpmpClient.connectCluster(proxies, options)
                logInfo(s"Connected to RPMP cluster through proxies $proxies")
                c
              } else {
                val c = RpmpClient.connect(server, options)
                logInfo(s"Connected to RPMP server $server")
                c
              }
            } catch {
              case e: RpmpException if e.code == RpmpException.PERMISSION_DENIED =>
                throw new RpmpAuthException(e)
            }
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

  /** RpmpBuffers not yet closed over every client of this cache (leak checks). */
  def liveBuffers: Int = {
    var n = 0
    clients.values().forEach(c => n += c.liveBufferCount())
    retired.forEach(c => n += c.liveBufferCount())
    n
  }

  /**
   * librpmp's cluster client counters summed over this cache's cluster clients (open
   * ones; a dropped client counts until closeAll). Zeros in server-direct mode.
   */
  def clusterCounters: ClusterCounters = {
    var sum = ClusterCounters.ZERO
    def add(c: RpmpClient): Unit = try {
      if (!c.isClosed && c.isCluster) sum = sum.plus(c.clusterCounters())
    } catch {
      case _: RpmpException | _: IllegalStateException => // closed meanwhile: not counted
    }
    clients.values().forEach(c => add(c))
    retired.forEach(c => add(c))
    sum
  }

  /**
   * Closes every client. Tasks still running (killed ones in local mode share this JVM) may
   * hold registered buffers and write into them: closing a client frees their native memory,
   * so this first waits up to `waitMs` for the buffers to be released, and leaves a client
   * that still has some open (a WARN; its memory goes with the JVM) rather than free memory
   * a task may still touch.
   */
  def closeAll(waitMs: Long = 10000): Unit = synchronized {
    val deadline = System.nanoTime() + waitMs * 1000000L
    while (liveBuffers > 0 && System.nanoTime() < deadline) Thread.sleep(20)  // poll
    def close(c: RpmpClient): Unit = {
      val live = c.liveBufferCount()
      if (live == 0) c.close()
      else logWarning(s"Leaving RPMP client ${c.server()} open at stop: $live buffer(s) still " +
        "in use by running tasks")
    }
    clients.values().forEach(c => close(c))
    clients.clear()
    retired.forEach(c => close(c))
    retired.clear()
  }
}

private[spark] object RpmpClientCache {
  val ClusterPrefix = "cluster:"

  /** The endpoint of the cluster client for these proxies. */
  def clusterEndpoint(proxies: Seq[String]): String = ClusterPrefix + proxies.mkString(",")
}
