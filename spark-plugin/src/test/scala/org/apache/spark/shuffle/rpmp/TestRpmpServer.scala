// Test fixture for the plugin's tests: a real rpmp-server process (binary from system
// property rpmp.bin.dir) on a free port with a pool under /dev/shm; close() kills it
// and removes the pool.
package org.apache.spark.shuffle.rpmp

import java.io.{File, IOException}
import java.net.{InetSocketAddress, ServerSocket, Socket}
import java.nio.file.{Files, Path}
import java.util.concurrent.TimeUnit

class TestRpmpServer private (val port: Int, pool: Path, process: Process, log: Path)
  extends AutoCloseable {

  def address: String = s"127.0.0.1:$port"

  override def close(): Unit = {
    process.destroy()
    if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly()
    Files.deleteIfExists(pool)
    Files.deleteIfExists(log)
  }
}

object TestRpmpServer {
  def freePort(): Int = {
    val s = new ServerSocket(0)
    try s.getLocalPort finally s.close()
  }

  def start(poolSize: String = "1G", segmentSize: String = "8M"): TestRpmpServer = {
    val bin = new File(System.getProperty("rpmp.bin.dir", "../build/bin"), "rpmp-server")
    require(bin.canExecute, s"rpmp-server not found at ${bin.getAbsolutePath} " +
      "(pass -Drpmp.bin.dir=<build>/bin)")
    val port = freePort()
    val pool = Path.of("/dev/shm", s"rpmp-spark-test-${ProcessHandle.current().pid()}-$port.pool")
    Files.deleteIfExists(pool)
    val log = Files.createTempFile("rpmp-server-", ".log")
    val process = new ProcessBuilder(bin.getPath, "--listen", s"127.0.0.1:$port",
      "--pool", s"$pool:$poolSize", "--segment-size", segmentSize)
      .redirectErrorStream(true).redirectOutput(log.toFile).start()
    val server = new TestRpmpServer(port, pool, process, log)
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30)
    while (true) {
      if (!process.isAlive) throw new IOException("rpmp-server exited: " + Files.readString(log))
      val s = new Socket()
      try {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200)
        return server
      } catch {
        case _: IOException if System.nanoTime() < deadline => Thread.sleep(100)
      } finally s.close()
    }
    server
  }
}
