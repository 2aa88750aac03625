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
  RPMP_JNI_TRY
  char* data = DirectRange(env, byte_buffer, buffer_offset);
  if (data == nullptr) return;
  ThrowIfError(env, C(h)->Write(Address(node, pool, offset), data, static_cast<size_t>(len)));
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpRawMemory_nativeRead(
    JNIEnv* env, jclass, jlong h, jlong node, jint pool, jlong offset, jobject byte_buffer,
    jlong buffer_offset, jlong len) {
  RPMP_JNI_TRY
  char* data = DirectRange(env, byte_buffer, buffer_offset);
  if (data == nullptr) return;
  ThrowIfError(env, C(h)->Read(Address(node, pool, offset), data, static_cast<size_t>(len)));
  RPMP_JNI_CATCH(env, )
}

}  // extern "C"
