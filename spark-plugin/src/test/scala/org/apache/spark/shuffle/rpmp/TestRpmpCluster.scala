// Test fixture for the plugin's cluster-mode tests: etcd (/usr/bin/etcd or $ETCD) + 2
// rpmp-proxy + N rpmp-server (binaries from system property rpmp.bin.dir) as processes on
// random free 127.0.0.1 ports, readiness polled (log lines, `rpmpctl nodes` all LIVE).
// `secured`: a fresh cluster secret (mode 0600) that the servers require
// (--auth-secret-file) and the proxies issue per-application credentials from
// (--token-secret-file); tests get it only through secretFile.
// Same as client-java's LocalRpmpCluster (test classes are not shared between modules).
package org.apache.spark.shuffle.rpmp

import java.io.{File, IOException}
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

import scala.collection.mutable.ArrayBuffer

class TestRpmpCluster private (dir: Path, bin: File, secured: Boolean) extends AutoCloseable {
  private case class Child(name: String, process: Process, log: Path) {
    def output: String = if (Files.exists(log)) Files.readString(log) else ""
  }
  private val children = ArrayBuffer.empty[Child]
  private val pools = ArrayBuffer.empty[Path]
  val proxies = ArrayBuffer.empty[String]
  /** host:port of each rpmp-server's data plane. */
  val servers = ArrayBuffer.empty[String]

  def proxyList: String = proxies.mkString(",")

  /** The cluster secret's file (secured clusters only). */
  val secretFile: Option[Path] = if (secured) Some(dir.resolve("secret")) else None

  private def spawn(name: String, argv: String*): Child = {
    val log = dir.resolve(s"$name.log")
    val pb = new ProcessBuilder(argv: _*).redirectErrorStream(true).redirectOutput(log.toFile)
    pb.environment().put("PMEM_IS_PMEM_FORCE", "0")
    val c = Child(name, pb.start(), log)
    children += c
    c
  }

  private def await(what: String, seconds: Int)(cond: => Boolean): Unit = {
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds)
    while (!cond) {
      if (System.nanoTime() > deadline) {
        throw new IOException(s"timed out after $seconds s waiting for $what\n$logs")
      }
      Thread.sleep(50)
    }
  }

  private def awaitLog(c: Child, line: String, seconds: Int): Unit = await(s"${c.name}: $line", seconds) {
    if (!c.process.isAlive) throw new IOException(s"${c.name} exited\n${c.output}")
    c.output.contains(line)
  }

  def liveNodes: Int = {
    val p = new ProcessBuilder(new File(bin, "rpmpctl").getPath, "--proxy", proxyList, "nodes")
      .redirectErrorStream(true).start()
    val out = new String(p.getInputStream.readAllBytes())
    if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) { p.destroyForcibly(); 0 }
    else out.linesIterator.count(_.contains(" LIVE "))
  }

  private def start(nservers: Int, poolSize: String): Unit = {
    secretFile.foreach { f =>
      val random = new Array[Byte](32)
      new java.security.SecureRandom().nextBytes(random)
      Files.writeString(f, random.map(b => f"${b & 0xff}%02x").mkString + "\n")
      Files.setPosixFilePermissions(f, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"))
    }
    val proxySecret = secretFile.toSeq.flatMap(f => Seq("--token-secret-file", f.toString))
    val serverSecret = secretFile.toSeq.flatMap(f => Seq("--auth-secret-file", f.toString))
    val port = () => TestRpmpServer.freePort()
    val (etcdPort, peerPort) = (port(), port())
    val clientUrl = s"http://127.0.0.1:$etcdPort"
    val peerUrl = s"http://127.0.0.1:$peerPort"
    val etcd = spawn("etcd", TestRpmpCluster.etcd.getPath, "--name", "t",
      "--data-dir", dir.resolve("etcd-data").toString,
      "--listen-client-urls", clientUrl, "--advertise-client-urls", clientUrl,
      "--listen-peer-urls", peerUrl, "--initial-advertise-peer-urls", peerUrl,
      "--initial-cluster", s"t=$peerUrl")
    awaitLog(etcd, "ready to serve client requests", 30)
    val ps = (0 until 2).map { i =>
      val p = port()
      proxies += s"127.0.0.1:$p"
      spawn(s"proxy$i", (Seq(new File(bin, "rpmp-proxy").getPath, "--listen", s"127.0.0.1:$p",
        "--etcd", clientUrl, "--heartbeat-timeout", "1500ms", "--suspect-after", "700ms",
        "--heartbeat-interval", "200ms", "--ttl-check", "300ms", "--session-ttl", "2",
        "--op-timeout", "1s") ++ proxySecret): _*)
    }
    ps.foreach(awaitLog(_, "listening on", 30))
    val ss = (0 until nservers).map { i =>
      val p = port()
      val pool = Path.of("/dev/shm",
        s"rpmp-spark-cluster-test-${ProcessHandle.current().pid()}-$p.pool")
      Files.deleteIfExists(pool)
      pools += pool
      servers += s"127.0.0.1:$p"
      spawn(s"server$i", Seq(new File(bin, "rpmp-server").getPath, "--listen", s"127.0.0.1:$p",
        "--pool", s"$pool:$poolSize", "--segment-size", "8m", "--proxy", proxyList,
        "--replication-timeout", "6s") ++ serverSecret: _*)
    }
    ss.foreach(awaitLog(_, "rpmp-server ready", 60))
    await(s"$nservers LIVE nodes", 30)(liveNodes >= nservers)
  }

  def logs: String = children.map { c =>
    val o = c.output
    s"--- ${c.name}\n${if (o.length > 4000) o.substring(o.length - 4000) else o}"
  }.mkString("\n")

  override def close(): Unit = {
    children.reverse.foreach(_.process.destroy())
    children.reverse.foreach { c =>
      if (!c.process.waitFor(10, TimeUnit.SECONDS)) c.process.destroyForcibly().waitFor()
    }
    pools.foreach(p => Files.deleteIfExists(p))
    Files.walk(dir).sorted(java.util.Comparator.reverseOrder()).forEach(p => p.toFile.delete())
  }
}

object TestRpmpCluster {
  def etcd: File = new File(sys.env.getOrElse("ETCD", "/usr/bin/etcd"))
  def binDir: File = new File(System.getProperty("rpmp.bin.dir", "../build/bin"))

  def available: Boolean = etcd.canExecute &&
    Seq("rpmp-server", "rpmp-proxy", "rpmpctl").forall(b => new File(binDir, b).canExecute)

  def start(nservers: Int = 3, poolSize: String = "512m", secured: Boolean = false): TestRpmpCluster = {
    val c = new TestRpmpCluster(Files.createTempDirectory("rpmp-spark-cluster-"), binDir, secured)
    try { c.start(nservers, poolSize); c } catch { case e: Throwable => c.close(); throw e }
  }
}
