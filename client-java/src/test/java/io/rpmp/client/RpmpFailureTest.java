// Failure behaviour of RpmpClient against real rpmp-server processes: a full pool gives
// RpmpNoSpaceException while reads keep working; a killed server gives
// RpmpUnavailableException or RpmpTimeoutException within the timeout, never a hang.
package io.rpmp.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RpmpFailureTest {
  @Test
  void fullPoolGivesNoSpaceAndReadsStillWork() throws Exception {
    try (RpmpServerProcess server = RpmpServerProcess.start("32M", "4M");
        RpmpClient client =
            RpmpClient.connect(
                server.address(), RpmpClientOptions.defaults().timeout(Duration.ofSeconds(10)))) {
      byte[] value = RpmpClientTest.randomBytes(1 << 20, 5);
      int stored = 0;
      RpmpNoSpaceException full = null;
      for (int i = 0; i < 200 && full == null; i++) {
        try {
          client.put("full", "k" + i, value);
          stored++;
        } catch (RpmpNoSpaceException e) {
          full = e;
        }
      }
      if (full == null) {
        fail("200 MiB fit into a 32 MiB pool");
      }
      assertTrue(stored > 0, "not even one value fit");
      for (int i = 0; i < stored; i++) {
        assertArrayEquals(value, client.getBytes("full", "k" + i));
      }
    }
  }

  @Test
  void killedServerFailsWithinTimeout() throws Exception {
    Duration timeout = Duration.ofSeconds(3);
    try (RpmpServerProcess server = RpmpServerProcess.start("64M", "4M");
        RpmpClient client =
            RpmpClient.connect(server.address(), RpmpClientOptions.defaults().timeout(timeout))) {
      client.put("kill", "k", new byte[] {1, 2, 3});
      server.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      Duration bound = timeout.multipliedBy(2).plusSeconds(5);
      assertTimeoutPreemptively(
          bound,
          () -> {
            RpmpException e =
                assertThrows(RpmpException.class, () -> client.getBytes("kill", "k"));
            assertTrue(
                e instanceof RpmpUnavailableException || e instanceof RpmpTimeoutException,
                "unexpected " + e);
          });
      assertTimeoutPreemptively(
          bound,
          () -> {
            ExecutionException e =
                assertThrows(
                    ExecutionException.class,
                    () -> client.appendAsync("kill", "k", ByteBuffer.wrap(new byte[] {4}), 1).get());
            assertTrue(
                e.getCause() instanceof RpmpUnavailableException
                    || e.getCause() instanceof RpmpTimeoutException,
                "unexpected " + e.getCause());
          });
    }
  }

  @Test
  void unreachableServerGivesUnavailableOrTimeout() throws Exception {
    int port = RpmpServerProcess.freePort();
    assertTimeoutPreemptively(
        Duration.ofSeconds(15),
        () -> {
          RpmpException e =
              assertThrows(
                  RpmpException.class,
                  () ->
                      RpmpClient.connect(
                          "127.0.0.1:" + port,
                          RpmpClientOptions.defaults().timeout(Duration.ofSeconds(2))));
          assertTrue(
              e instanceof RpmpUnavailableException || e instanceof RpmpTimeoutException,
              "unexpected " + e);
        });
  }
}
