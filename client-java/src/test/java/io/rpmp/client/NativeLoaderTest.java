// Unit tests of NativeLoader's platform naming, its error message, and that the libraries
// it extracts are unlinked once loaded (no server needed).
package io.rpmp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class NativeLoaderTest {
  @Test
  void namesPlatformsLikeTheJarLayout() {
    assertEquals("linux-x86_64", NativeLoader.platformOf("Linux", "amd64"));
    assertEquals("linux-aarch64", NativeLoader.platformOf("Linux", "aarch64"));
    assertEquals("mac-aarch64", NativeLoader.platformOf("Mac OS X", "arm64"));
    assertEquals("windows-x86_64", NativeLoader.platformOf("Windows 11", "x86_64"));
  }

  @Test
  void resourcePathContainsPlatform() {
    assertEquals(
        "/native/linux-x86_64/librpmp_jni.so", NativeLoader.resourceFor("linux-x86_64"));
    assertTrue(NativeLoader.SUPPORTED_PLATFORM.equals("linux-x86_64"));
  }

  @Test
  void jarCarriesLibraryForThisPlatform() {
    assertTrue(
        NativeLoader.class.getResource(NativeLoader.resourceFor(NativeLoader.currentPlatform()))
            != null,
        "native library missing from classpath; was -Drpmp.native.dir set to <build>/lib?");
  }

  @Test
  void extractedLibrariesAreUnlinkedOnceLoaded() throws Exception {
    NativeLoader.load();
    // Mapped from a temporary file that no longer exists: a killed JVM leaves nothing behind.
    List<String> mapped =
        Files.readAllLines(Path.of("/proc/self/maps")).stream()
            .filter(l -> l.contains("librpmp_jni"))
            .collect(Collectors.toList());
    assertTrue(!mapped.isEmpty(), "librpmp_jni not mapped after load()");
    for (String line : mapped) {
      assertTrue(line.endsWith("(deleted)"), "extracted library still on disk: " + line);
    }
  }
}
