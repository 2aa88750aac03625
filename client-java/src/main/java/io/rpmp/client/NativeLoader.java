// Loads librpmp_jni.so once per JVM: from the file named by system property
// rpmp.jni.library when set, else from the jar resource /native/<platform>/, extracted
// to a temporary file that is unlinked right after loading (the mapping stays valid), so
// a killed JVM leaves nothing in the temporary directory. librpmp_jni_preload.so (see preload.cc: keeps the JVM's signal
// handlers) is loaded just before it. Called by RpmpClient before any native method.
package io.rpmp.client;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/** Finds, extracts and loads the JNI library that binds librpmp. */
public final class NativeLoader {
  /** The only platform the jar carries a native library for. */
  public static final String SUPPORTED_PLATFORM = "linux-x86_64";

  static final String LIBRARY_FILE = "librpmp_jni.so";
  static final String PRELOAD_FILE = "librpmp_jni_preload.so";
  private static boolean loaded;

  private NativeLoader() {}

  /** Loads the library if not done yet; throws UnsatisfiedLinkError when it cannot. */
  public static synchronized void load() {
    if (loaded) {
      return;
    }
    String explicit = System.getProperty("rpmp.jni.library");
    if (explicit != null && !explicit.isEmpty()) {
      Path lib = Path.of(explicit).toAbsolutePath();
      Path preload = lib.resolveSibling(PRELOAD_FILE);
      if (Files.exists(preload)) {
        System.load(preload.toString());
      }
      System.load(lib.toString());
      loaded = true;
      return;
    }
    String platform = currentPlatform();
    String resource = resourceFor(platform);
    String preloadResource = "/native/" + platform + "/" + PRELOAD_FILE;
    try (InputStream preload = NativeLoader.class.getResourceAsStream(preloadResource)) {
      if (preload != null) {
        loadAndUnlink(extract(preload, "librpmp_jni_preload-"));
      }
    } catch (IOException e) {
      UnsatisfiedLinkError err =
          new UnsatisfiedLinkError("librpmp_jni: cannot extract " + preloadResource + ": " + e);
      err.initCause(e);
      throw err;
    }
    try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new UnsatisfiedLinkError(
            "librpmp_jni: no native library for platform '" + platform + "' (resource "
                + resource + " is missing); this jar was built for '" + SUPPORTED_PLATFORM
                + "'");
      }
      loadAndUnlink(extract(in, "librpmp_jni-"));
      loaded = true;
    } catch (IOException e) {
      UnsatisfiedLinkError err =
          new UnsatisfiedLinkError("librpmp_jni: cannot extract " + resource + ": " + e);
      err.initCause(e);
      throw err;
    }
  }

  private static Path extract(InputStream in, String prefix) throws IOException {
    Path tmp = Files.createTempFile(prefix, ".so");
    try {
      Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      Files.deleteIfExists(tmp);
      throw e;
    }
    return tmp.toAbsolutePath();
  }

  /** Loads an extracted library, then unlinks its file whether loading worked or not. */
  private static void loadAndUnlink(Path lib) throws IOException {
    try {
      System.load(lib.toString());
    } finally {
      Files.deleteIfExists(lib);
    }
  }

  /** "os-arch" of this JVM in the jar's naming, e.g. linux-x86_64, mac-aarch64. */
  public static String currentPlatform() {
    return platformOf(System.getProperty("os.name"), System.getProperty("os.arch"));
  }

  static String platformOf(String osName, String osArch) {
    String os = osName.toLowerCase(Locale.ROOT);
    if (os.startsWith("linux")) {
      os = "linux";
    } else if (os.startsWith("mac") || os.startsWith("darwin")) {
      os = "mac";
    } else if (os.startsWith("windows")) {
      os = "windows";
    } else {
      os = os.replaceAll("[^a-z0-9]", "");
    }
    String arch = osArch.toLowerCase(Locale.ROOT);
    if (arch.equals("amd64") || arch.equals("x86_64")) {
      arch = "x86_64";
    } else if (arch.equals("arm64") || arch.equals("aarch64")) {
      arch = "aarch64";
    }
    return os + "-" + arch;
  }

  static String resourceFor(String platform) {
    return "/native/" + platform + "/" + LIBRARY_FILE;
  }
}
