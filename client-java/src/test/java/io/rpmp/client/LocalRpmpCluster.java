// Test fixture: a whole RPMP cluster as real processes on 127.0.0.1 — one etcd
// (/usr/bin/etcd or $ETCD), two rpmp-proxy and three rpmp-server (from system property
// rpmp.bin.dir), on random free ports, pools under /dev/shm. Readiness is polled (log
// lines, `rpmpctl nodes` showing every server LIVE), never slept for. Proxy timeouts are
// short (as in tests/cluster/cluster_harness.cc) so failover takes seconds.
package io.rpmp.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/** etcd + 2 rpmp-proxy + N rpmp-server processes for one test class. */
final class LocalRpmpCluster implements AutoCloseable {
  /** One child process with its log file. */
  static final class Child {
    final String name;
    final Process process;
    final Path log;
    final int port;

    Child(String name, Process process, Path log, int port) {
      this.name = name;
      this.process = process;
      this.log = log;
      this.port = port;
    }

    String log() {
      try {
        return Files.exists(log) ? Files.readString(log) : "";
      } catch (IOException e) {
        return "(log unreadable: " + e + ")";
      }
    }

    String address() {
      return "127.0.0.1:" + port;
    }
  }

  private final Path dir;
  private final Path binDir;
  private final List<Child> children = new ArrayList<>();
  final List<Child> servers = new ArrayList<>();
  final List<Child> proxies = new ArrayList<>();
  private final List<Path> pools = new ArrayList<>();

  private LocalRpmpCluster(Path dir, Path binDir) {
    this.dir = dir;
    this.binDir = binDir;
  }

  static Path etcdBinary() {
    return Path.of(System.getenv().getOrDefault("ETCD", "/usr/bin/etcd"));
  }

  static Path binDir() {
    return Path.of(System.getProperty("rpmp.bin.dir", "../build/bin"));
  }

  /** True when etcd, rpmp-proxy, rpmp-server and rpmpctl are all there. */
  static boolean available() {
    Path bin = binDir();
    return Files.isExecutable(etcdBinary())
        && Stream.of("rpmp-server", "rpmp-proxy", "rpmpctl")
            .allMatch(b -> Files.isExecutable(bin.resolve(b)));
  }

  static LocalRpmpCluster start(int nservers) throws IOException, InterruptedException {
    LocalRpmpCluster c = new LocalRpmpCluster(Files.createTempDirectory("rpmp-java-cluster-"),
        binDir());
    try {
      c.startAll(nservers);
      return c;
    } catch (IOException | InterruptedException | RuntimeException e) {
      String logs = c.logs();
      c.close();
      throw new IOException("local cluster did not start: " + e + "\n" + logs, e);
    }
  }

  /** "host:port,host:port" of the proxies. */
  String proxyList() {
    StringBuilder sb = new StringBuilder();
    for (Child p : proxies) {
      sb.append(sb.length() == 0 ? "" : ",").append(p.address());
    }
    return sb.toString();
  }

  private void startAll(int nservers) throws IOException, InterruptedException {
    int etcdPort = RpmpServerProcess.freePort();
    int peerPort = RpmpServerProcess.freePort();
    String clientUrl = "http://127.0.0.1:" + etcdPort;
    String peerUrl = "http://127.0.0.1:" + peerPort;
    Child etcd = spawn("etcd", etcdPort, etcdBinary().toString(), "--name", "t",
        "--data-dir", dir.resolve("etcd-data").toString(),
        "--listen-client-urls", clientUrl, "--advertise-client-urls", clientUrl,
        "--listen-peer-urls", peerUrl, "--initial-advertise-peer-urls", peerUrl,
        "--initial-cluster", "t=" + peerUrl);
    awaitLog(etcd, "ready to serve client requests", 30);
    for (int i = 0; i < 2; i++) {
      int port = RpmpServerProcess.freePort();
      proxies.add(spawn("proxy" + i, port, bin("rpmp-proxy"), "--listen", "127.0.0.1:" + port,
          "--etcd", clientUrl, "--heartbeat-timeout", "1500ms", "--suspect-after", "700ms",
          "--heartbeat-interval", "200ms", "--ttl-check", "300ms", "--session-ttl", "2",
          "--op-timeout", "1s"));
    }
    for (Child p : proxies) {
      awaitLog(p, "listening on", 30);
    }
    for (int i = 0; i < nservers; i++) {
      int port = RpmpServerProcess.freePort();
      Path pool = Path.of("/dev/shm", "rpmp-java-cluster-" + ProcessHandle.current().pid() + "-"
          + port + ".pool");
      Files.deleteIfExists(pool);
      pools.add(pool);
      servers.add(spawn("server" + i, port, bin("rpmp-server"), "--listen", "127.0.0.1:" + port,
          "--pool", pool + ":256m", "--segment-size", "4m", "--proxy", proxyList(),
          "--replication-timeout", "6s"));
    }
    for (Child s : servers) {
      awaitLog(s, "rpmp-server ready", 60);
    }
    await("all " + nservers + " servers LIVE", 30, () -> liveNodes() >= nservers);
  }

  /** LIVE nodes as `rpmpctl nodes` lists them (0 when it fails). */
  int liveNodes() {
    try {
      Process p = new ProcessBuilder(bin("rpmpctl"), "--proxy", proxyList(), "nodes")
          .redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        return 0;
      }
      return (int) out.lines().filter(l -> l.contains(" LIVE ")).count();
    } catch (IOException e) {
      return 0;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 0;
    }
  }

  private String bin(String name) {
    return binDir.resolve(name).toString();
  }

  private Child spawn(String name, int port, String... argv) throws IOException {
    Path log = dir.resolve(name + ".log");
    ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true)
        .redirectOutput(log.toFile());
    pb.environment().put("PMEM_IS_PMEM_FORCE", "0");
    Child c = new Child(name, pb.start(), log, port);
    children.add(c);
    return c;
  }

  private static void awaitLog(Child c, String line, int seconds)
      throws IOException, InterruptedException {
    await(c.name + " to log '" + line + "'", seconds, () -> {
      if (!c.process.isAlive()) {
        throw new IllegalStateException(c.name + " exited with " + c.process.exitValue());
      }
      return c.log().contains(line);
    });
  }

  /** Polls cond every 50 ms until true; IOException after `seconds`. */
  static void await(String what, int seconds, BooleanSupplier cond)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IOException("timed out after " + seconds + " s waiting for " + what);
      }
      Thread.sleep(50);
    }
  }

  /** Every child's log, for failure messages. */
  String logs() {
    StringBuilder sb = new StringBuilder();
    for (Child c : children) {
      String log = c.log();
      sb.append("--- ").append(c.name).append('\n')
          .append(log.length() > 4000 ? log.substring(log.length() - 4000) : log);
    }
    return sb.toString();
  }

  @Override
  public void close() {
    // Servers first (they heartbeat to the proxies), etcd last.
    List<Child> order = new ArrayList<>(children);
    java.util.Collections.reverse(order);
    for (Child c : order) {
      c.process.destroy();
    }
    for (Child c : order) {
      try {
        if (!c.process.waitFor(10, TimeUnit.SECONDS)) {
          c.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    for (Path p : pools) {
      try {
        Files.deleteIfExists(p);
      } catch (IOException ignored) {
        // best effort
      }
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // best effort
    }
  }
}
