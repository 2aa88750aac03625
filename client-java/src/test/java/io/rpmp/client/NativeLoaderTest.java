// Unit tests of NativeLoader's platform naming and its error message (no server needed).
package io.rpmp.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}
