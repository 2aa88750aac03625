// librpmp_jni_preload.so: loaded by NativeLoader just before librpmp_jni.so, with no
// dependencies of its own. libfabric pulls in libinfinipath, whose load-time constructor
// replaces the process's SIGSEGV/SIGBUS handlers with a backtrace printer unless
// IPATH_NO_BACKTRACE is set; in a JVM that kills the process at the first implicit null
// check. Setting the variable here, before that constructor runs, keeps the JVM's handlers.
#include <cstdlib>

__attribute__((constructor)) static void KeepJvmSignalHandlers() {
  setenv("IPATH_NO_BACKTRACE", "1", /*overwrite=*/0);
}
