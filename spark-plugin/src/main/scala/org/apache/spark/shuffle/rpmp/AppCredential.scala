// The application's per-application RPMP credential (docs/spark-plugin.md "Credentials",
// docs/security.md "Tenants"). Driver side, cluster mode: at the first shuffle it asks the
// proxies (RpmpAdmin.issueCredential, with the driver's own client and certificate) for a
// credential for the application's namespace subtree spark/<appId>-<runId>/ (every shuffle,
// placement group and extent of this SparkContext lies under it), and renews it on a daemon
// thread when a third of its lifetime is left. The credential travels to executors inside
// each RpmpShuffleHandle (CredentialRef, serialized with the handle at every stage
// submission, so later stages carry the renewed token); executors connect with it instead
// of the cluster secret (RpmpClientCache.useCredential). Proxies that issue none
// (FAILED_PRECONDITION: started without --token-secret-file) leave today's behaviour, the
// cluster secret everywhere, with one INFO line. The token never reaches a log or SparkConf.
// Owned by RpmpShuffleManager: obtain() from registerShuffle, stop() at its stop(). Thread-safe.
package org.apache.spark.shuffle.rpmp

import java.time.{Duration, Instant}
import java.util.concurrent.{Executors, ScheduledExecutorService, TimeUnit}

import scala.util.control.NonFatal

import io.rpmp.client.{RpmpAdmin, RpmpCredential, RpmpException}

import org.apache.spark.internal.Logging

/** The current credential of an application, shared by its shuffle handles. */
private[spark] final class CredentialRef(@volatile private var current: RpmpCredential)
  extends Serializable {
  def get: RpmpCredential = current
  private[rpmp] def set(c: RpmpCredential): Unit = current = c
  override def toString: String = s"CredentialRef($current)"  // RpmpCredential redacts its token
}

private[spark] class AppCredential(
    prefix: String,
    app: String,
    admin: () => RpmpAdmin,
    ttl: Duration = Duration.ZERO) extends Logging {
  private var ref: Option[CredentialRef] = None
  private var settled = false  // issued, or the proxies issue none: never asked again
  private var renewer: ScheduledExecutorService = _
  private var stopped = false

  /** The application's credential; None when the proxies issue none (or not yet). */
  def obtain(): Option[CredentialRef] = synchronized {
    if (!settled && !stopped) {
      try {
        val c = admin().issueCredential(prefix, app, ttl)
        ref = Some(new CredentialRef(c))
        settled = true
        logInfo(s"RPMP credential for $prefix issued, expires ${c.expiry()}: executors use it " +
          "instead of the cluster secret")
        scheduleRenewal(c)
      } catch {
        case e: RpmpException if e.code() == RpmpException.FAILED_PRECONDITION =>
          settled = true
          logInfo(s"RPMP proxies issue no per-application credentials (${e.getMessage}): " +
            "executors use the cluster secret")
        case e: RpmpException =>
          logWarning(s"Could not get an RPMP credential for $prefix (asked again at the next " +
            s"shuffle; executors use the cluster secret meanwhile): $e")
      }
    }
    ref
  }

  /** The credential obtained so far, without asking the proxies. */
  def current: Option[CredentialRef] = synchronized { ref }

  /** Renews when a third of the lifetime is left; after a failure, again a minute later. */
  private def scheduleRenewal(c: RpmpCredential): Unit = {
    if (renewer == null) {
      renewer = Executors.newSingleThreadScheduledExecutor { r =>
        val t = new Thread(r, "rpmp-credential-renewer")
        t.setDaemon(true)
        t
      }
    }
    val left = c.expiry().toEpochMilli - Instant.now().toEpochMilli
    renewer.schedule(new Runnable { def run(): Unit = renew() }, math.max(500L, left * 2 / 3),
      TimeUnit.MILLISECONDS)
  }

  private def renew(): Unit = synchronized {
    if (stopped) return
    val r = ref.get
    try {
      val c = admin().renewCredential(r.get, ttl)
      r.set(c)
      logInfo(s"RPMP credential for $prefix renewed, expires ${c.expiry()}")
      scheduleRenewal(c)
    } catch {
      case NonFatal(e) =>
        logWarning(s"Renewing the RPMP credential for $prefix failed (tried again in 1 min): $e")
        renewer.schedule(new Runnable { def run(): Unit = renew() }, 60, TimeUnit.SECONDS)
    }
  }

  def stop(): Unit = {
    val r = synchronized {
      stopped = true
      val x = renewer
      renewer = null
      x
    }
    if (r != null) {
      r.shutdownNow()
      r.awaitTermination(10, TimeUnit.SECONDS)
    }
  }
}
