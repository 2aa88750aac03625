// JNI side of io.rpmp.client.RpmpBuffer: a handle is an rpmp::Buffer* (registered
// memory of a client's pool). Only RpmpBuffer.java calls these.
#include "jni_util.h"

namespace {
rpmp::Buffer* B(jlong handle) { return reinterpret_cast<rpmp::Buffer*>(handle); }
}  // namespace

extern "C" {

// A direct ByteBuffer over the whole capacity (no copy); null for an empty buffer.
JNIEXPORT jobject JNICALL Java_io_rpmp_client_RpmpBuffer_nativeView(JNIEnv* env, jclass,
                                                                    jlong b) {
  RPMP_JNI_TRY
  if (!B(b)->valid()) return nullptr;
  return env->NewDirectByteBuffer(B(b)->data(), static_cast<jlong>(B(b)->capacity()));
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT jlong JNICALL Java_io_rpmp_client_RpmpBuffer_nativeAddress(JNIEnv*, jclass, jlong b) {
  return reinterpret_cast<jlong>(B(b)->data());
}

JNIEXPORT jlong JNICALL Java_io_rpmp_client_RpmpBuffer_nativeCapacity(JNIEnv*, jclass, jlong b) {
  return static_cast<jlong>(B(b)->capacity());
}

JNIEXPORT jlong JNICALL Java_io_rpmp_client_RpmpBuffer_nativeSize(JNIEnv*, jclass, jlong b) {
  return static_cast<jlong>(B(b)->size());
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpBuffer_nativeSetSize(JNIEnv*, jclass, jlong b,
                                                                    jlong n) {
  B(b)->set_size(static_cast<size_t>(n));
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpBuffer_nativeFree(JNIEnv* env, jclass, jlong b) {
  RPMP_JNI_TRY
  delete B(b);
  RPMP_JNI_CATCH(env, )
}

}  // extern "C"
