// What the JNI files of io.rpmp.client share about a client handle: the jlong each Java
// class passes (a NativeClient*, made by native_client_jni.cc, freed by its nativeClose)
// and the helpers that turn it and the other handles into librpmp objects. Used only by
// the .cc files of client-java's native code; see jni_util.h for the Status table.
#pragma once

#include <jni.h>

#include <memory>

#include "jni_util.h"
#include "rpmp/cluster.h"

namespace rpmp_jni {

struct NativeClient {
  std::unique_ptr<rpmp::Client> client;
};

// The librpmp client of a handle from NativeClient.java.
inline rpmp::Client* C(jlong handle) {
  return reinterpret_cast<NativeClient*>(handle)->client.get();
}

// The buffer of a handle from RpmpBuffer.java.
inline rpmp::Buffer* B(jlong handle) { return reinterpret_cast<rpmp::Buffer*>(handle); }

// Address of byte `offset` of a direct ByteBuffer; throws and returns null when the buffer
// is not direct.
inline char* DirectRange(JNIEnv* env, jobject byte_buffer, jlong offset) {
  void* base = env->GetDirectBufferAddress(byte_buffer);
  if (base == nullptr) {
    ThrowIfError(env, rpmp::Status::InvalidArgument("not a direct ByteBuffer"));
    return nullptr;
  }
  return static_cast<char*>(base) + offset;
}

// The cluster control of a cluster client; null with FAILED_PRECONDITION thrown otherwise.
inline rpmp::ClusterControl* Cluster(JNIEnv* env, jlong h) {
  rpmp::ClusterControl* c = rpmp::AsCluster(C(h));
  if (c == nullptr) {
    ThrowIfError(env, rpmp::Status::FailedPrecondition(
                          "not a cluster client (use RpmpClient.connectCluster)"));
  }
  return c;
}

// A Java long[] holding v; null with an OutOfMemoryError pending.
inline jlongArray ToLongArray(JNIEnv* env, const jlong* v, size_t n) {
  jlongArray out = env->NewLongArray(static_cast<jsize>(n));
  if (out == nullptr) return nullptr;
  env->SetLongArrayRegion(out, 0, static_cast<jsize>(n), v);
  return out;
}

}  // namespace rpmp_jni
