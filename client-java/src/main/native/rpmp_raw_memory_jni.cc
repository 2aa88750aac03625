// JNI side of io.rpmp.client.RpmpRawMemory: alloc, free, write and read of raw pool
// memory by GlobalAddress. Only RpmpRawMemory.java calls these.
#include "client_handle.h"

using rpmp_jni::C;
using rpmp_jni::DirectRange;
using rpmp_jni::ThrowIfError;

namespace {
rpmp::GlobalAddress Address(jlong node, jint pool, jlong offset) {
  rpmp::GlobalAddress a;
  a.node_id = static_cast<uint64_t>(node);
  a.pool = static_cast<uint32_t>(pool);
  a.offset = static_cast<uint64_t>(offset);
  return a;
}

// Write or Read (`io`) between pool memory and a direct ByteBuffer's bytes; throws its error.
template <typename Io>
void Transfer(JNIEnv* env, jlong node, jint pool, jlong offset, jobject byte_buffer,
              jlong buffer_offset, jlong len, Io io) {
  RPMP_JNI_TRY
  char* data = DirectRange(env, byte_buffer, buffer_offset);
  if (data != nullptr) ThrowIfError(env, io(Address(node, pool, offset), data, static_cast<size_t>(len)));
  RPMP_JNI_CATCH(env, )
}

}  // namespace

extern "C" {

JNIEXPORT jobject JNICALL Java_io_rpmp_client_RpmpRawMemory_nativeAlloc(JNIEnv* env, jclass, jlong h,
                                                                     jlong size) {
  RPMP_JNI_TRY
  auto addr = C(h)->Alloc(static_cast<uint64_t>(size));
  if (ThrowIfError(env, addr.status())) return nullptr;
  const auto& refs = rpmp_jni::Refs();
  return env->NewObject(refs.global_address, refs.global_address_ctor,
                        static_cast<jlong>(addr->node_id), static_cast<jint>(addr->pool),
                        static_cast<jlong>(addr->offset));
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpRawMemory_nativeFree(JNIEnv* env, jclass, jlong h,
                                                                 jlong node, jint pool,
                                                                 jlong offset) {
  RPMP_JNI_TRY
  ThrowIfError(env, C(h)->Free(Address(node, pool, offset)));
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpRawMemory_nativeWrite(
    JNIEnv* env, jclass, jlong h, jlong node, jint pool, jlong offset, jobject byte_buffer,
    jlong buffer_offset, jlong len) {
  Transfer(env, node, pool, offset, byte_buffer, buffer_offset, len,
           [h](const rpmp::GlobalAddress& a, char* d, size_t n) { return C(h)->Write(a, d, n); });
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpRawMemory_nativeRead(
    JNIEnv* env, jclass, jlong h, jlong node, jint pool, jlong offset, jobject byte_buffer,
    jlong buffer_offset, jlong len) {
  Transfer(env, node, pool, offset, byte_buffer, buffer_offset, len,
           [h](const rpmp::GlobalAddress& a, char* d, size_t n) { return C(h)->Read(a, d, n); });
}

}  // extern "C"
