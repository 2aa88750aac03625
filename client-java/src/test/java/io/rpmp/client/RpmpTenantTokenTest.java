// A tenant token through the Java client (docs/security.md "Tenants"): against a real
// rpmp-server with a cluster secret, RpmpClientOptions.token reaches librpmp over JNI;
// the client works under the token's prefix and is refused elsewhere. The token is
// minted by `rpmpctl token mint` (the cluster secret in a private file).
package io.rpmp.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RpmpTenantTokenTest {
  static String mint(Path secret, String prefix) throws Exception {
    String bin = System.getProperty("rpmp.bin.dir", "../build/bin");
    ProcessBuilder pb =
        new ProcessBuilder(
            new File(bin, "rpmpctl").getPath(), "token", "mint", "--prefix", prefix, "--app", "java");
    pb.environment().put("RPMP_SECRET_FILE", secret.toString());
    pb.redirectError(ProcessBuilder.Redirect.INHERIT);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertEquals(0, p.waitFor());
    return out;
  }

  @Test
  void tokenActsOnItsPrefixOnly() throws Exception {
    Path dir = Files.createTempDirectory("rpmp-java-tenant");
    Path secret = dir.resolve("secret");
    Files.writeString(secret, "java-tenant-test-secret-0123456\n");
    Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
    try (RpmpServerProcess server =
        RpmpServerProcess.start("256M", "16M", "--auth-secret-file", secret.toString())) {
      RpmpClientOptions o =
          RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)).token(mint(secret, "app-a/"));
      try (RpmpClient c = RpmpClient.connect(server.address(), o)) {
        byte[] v = "a's".getBytes(StandardCharsets.UTF_8);
        c.put("app-a/ns", "k", v);
        assertArrayEquals(v, c.getBytes("app-a/ns", "k"));
        RpmpException e = assertThrows(RpmpException.class, () -> c.put("app-b/ns", "k", v));
        assertTrue(
            e.getMessage().contains("namespace \"app-b/ns\" is outside this credential's prefix \"app-a/\""),
            e.getMessage());
      }
      // A token from another cluster's secret is refused at connect.
      Path other = dir.resolve("other");
      Files.writeString(other, "another-clusters-secret-0123456\n");
      Files.setPosixFilePermissions(other, PosixFilePermissions.fromString("rw-------"));
      RpmpClientOptions foreign = RpmpClientOptions.defaults().token(mint(other, "app-a/"));
      assertThrows(RpmpException.class, () -> RpmpClient.connect(server.address(), foreign).close());
    } finally {
      Files.deleteIfExists(dir.resolve("other"));
      Files.deleteIfExists(secret);
      Files.deleteIfExists(dir);
    }
  }
}
