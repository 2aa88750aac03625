// Test fixture: runs a real rpmp-server (from system property rpmp.bin.dir) on a free
// port with a pool file under /dev/shm, and removes both when closed. Used by the
// client-java tests (and copied by nobody else: the Spark tests have their own).
package io.rpmp.client;

import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** A running rpmp-server process for one test class. */
final class RpmpServerProcess implements AutoCloseable {
  private static final AtomicInteger COUNTER = new AtomicInteger();

  final int port;
  final Path poolFile;
  private final Process process;
  private final Path logFile;

  private RpmpServerProcess(int port, Path poolFile, Process process, Path logFile) {
    this.port = port;
    this.poolFile = poolFile;
    this.process = process;
    this.logFile = logFile;
  }

  /** Starts a server with a pool of the given size (e.g. "1G") and waits for it. */
  static RpmpServerProcess start(String poolSize) throws IOException, InterruptedException {
    return start(poolSize, "64M");
  }

  /** Same, with the store's segment size (small pools need small segments). */
  static RpmpServerProcess start(String poolSize, String segmentSize)
      throws IOException, InterruptedException {
    return start(poolSize, segmentSize, new String[0]);
  }

  /** Same, with more rpmp-server flags (e.g. "--compaction-grace", "50ms"). */
  static RpmpServerProcess start(String poolSize, String segmentSize, String... extraFlags)
      throws IOException, InterruptedException {
    Path binary = serverBinary();
    int port = freePort();
    Path pool =
        Path.of("/dev/shm", "rpmp-java-test-" + ProcessHandle.current().pid() + "-"
            + COUNTER.incrementAndGet() + ".pool");
    Files.deleteIfExists(pool);
    Path log = Files.createTempFile("rpmp-server-", ".log");
    java.util.List<String> cmd =
        new java.util.ArrayList<>(
            java.util.List.of(
                binary.toString(),
                "--listen",
                "127.0.0.1:" + port,
                "--pool",
                pool + ":" + poolSize,
                "--segment-size",
                segmentSize));
    cmd.addAll(java.util.List.of(extraFlags));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    pb.environment().put("PMEM_IS_PMEM_FORCE", "0");
    Process p = pb.start();
    RpmpServerProcess server = new RpmpServerProcess(port, pool, p, log);
    server.awaitListening();
    return server;
  }

  String address() {
    return "127.0.0.1:" + port;
  }

  Process process() {
    return process;
  }

  /** What the server has logged so far. */
  String log() throws IOException {
    return Files.readString(logFile);
  }

  private void awaitListening() throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException(
            "rpmp-server exited with " + process.exitValue() + ": " + Files.readString(logFile));
      }
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", port), 200);
        return;
      } catch (IOException notYet) {
        Thread.sleep(100);
      }
    }
    close();
    throw new IOException("rpmp-server did not listen on " + port + ": " + Files.readString(logFile));
  }

  static Path serverBinary() {
    String dir = System.getProperty("rpmp.bin.dir", "../build/bin");
    File f = new File(dir, "rpmp-server");
    if (!f.canExecute()) {
      throw new IllegalStateException(
          "rpmp-server not found at " + f.getAbsolutePath()
              + " (build it, then pass -Drpmp.bin.dir=<build>/bin)");
    }
    return f.toPath();
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    }
  }

  @Override
  public void close() throws IOException {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Files.deleteIfExists(poolFile);
    Files.deleteIfExists(logFile);
  }
}
