// AppendBench: the Java client's append path alone, as a Spark map task drives it: appendAsync
// of registered buffers (allocateBufferForWrite) into one cluster namespace with one copy,
// DEPTH appends in flight, each completion's buffer reused. Run with one build's client jar on
// the classpath against that build's cluster (RPMP_PROXIES, RPMP_SECRET_FILE, RPMP_TLS_DIR in
// the environment), e.g. by bench/cluster_append_ab.sh --java. Prints one line:
//   java_append size=S depth=D seconds=T ops=N ops_per_s=R jvm_cpu_us_per_op=C
// where jvm_cpu_us_per_op is the whole JVM's CPU (JNI and librpmp threads included) per
// append over the measured seconds, after one second of warm-up (JIT).
//   java -cp rpmp-client.jar bench/java/AppendBench.java SIZE DEPTH SECONDS
import io.rpmp.client.RpmpBuffer;
import io.rpmp.client.RpmpClient;
import io.rpmp.client.RpmpClientOptions;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

public class AppendBench {
  private record Push(RpmpBuffer buffer, CompletableFuture<Void> future) {}

  public static void main(String[] args) throws Exception {
    int size = Integer.parseInt(args[0]);
    int depth = Integer.parseInt(args[1]);
    double seconds = Double.parseDouble(args[2]);
    String proxies = System.getenv().getOrDefault("RPMP_PROXIES", "");
    String ns = "java-append-" + ProcessHandle.current().pid();
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    try (RpmpClient c =
        RpmpClient.connectCluster(
            proxies, RpmpClientOptions.defaults().namespaceDefaults(1, 0, Duration.ZERO))) {
      c.createNamespace(ns, 1, 0, Duration.ofHours(1));
      ArrayDeque<RpmpBuffer> free = new ArrayDeque<>();
      for (int i = 0; i < depth; i++) {
        RpmpBuffer b = c.allocateBufferForWrite(ns, size);
        for (int j = 0; j < size; j++) b.byteBuffer().put(j, (byte) (j * 31 + i));
        b.setSize(size);
        free.add(b);
      }
      ArrayDeque<Push> pending = new ArrayDeque<>();
      long warmEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
      long end = warmEnd + (long) (seconds * 1e9);
      long ops = 0, cpu0 = 0;
      boolean measuring = false;
      int key = 0;
      while (true) {
        long now = System.nanoTime();
        if (!measuring && now >= warmEnd) {
          while (!pending.isEmpty()) free.add(await(pending.poll()));
          measuring = true;
          cpu0 = os.getProcessCpuTime();
          ops = 0;
        }
        if (measuring && now >= end) break;
        if (free.isEmpty()) free.add(await(pending.poll()));
        RpmpBuffer b = free.poll();
        pending.add(new Push(b, c.appendAsync(ns, "p" + (key++ % 2000), b, 7)));
        ops++;
      }
      while (!pending.isEmpty()) free.add(await(pending.poll()));
      long cpu = os.getProcessCpuTime() - cpu0;
      System.out.printf(
          "java_append size=%d depth=%d seconds=%.1f ops=%d ops_per_s=%.0f jvm_cpu_us_per_op=%.1f%n",
          size, depth, seconds, ops, ops / seconds, cpu / 1000.0 / ops);
      for (RpmpBuffer b : free) b.close();
      c.deleteNamespace(ns);
    }
  }

  private static RpmpBuffer await(Push p) throws Exception {
    p.future().get(60, TimeUnit.SECONDS);
    return p.buffer();
  }
}
