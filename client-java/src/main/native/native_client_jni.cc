// JNI side of io.rpmp.client.NativeClient: connecting (one server or a cluster through
// its proxies), closing, the node id, and the client's registered buffers. A handle is a
// rpmp_jni::NativeClient* (client_handle.h), freed by nativeClose. Only NativeClient.java
// calls these.
#include <chrono>
#include <utility>

#include "client_handle.h"

using rpmp_jni::B;
using rpmp_jni::C;
using rpmp_jni::ThrowIfError;
using rpmp_jni::ToString;

namespace {
// A new Buffer's handle for Java (freed by RpmpBuffer.nativeFree), or 0 with the error thrown.
jlong BufferHandle(JNIEnv* env, rpmp::StatusOr<rpmp::Buffer> buf) {
  if (ThrowIfError(env, buf.status())) return 0;
  return reinterpret_cast<jlong>(new rpmp::Buffer(std::move(buf).value()));
}

jlong NewHandle(std::unique_ptr<rpmp::Client> client) {
  return reinterpret_cast<jlong>(new rpmp_jni::NativeClient{std::move(client)});
}
}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_io_rpmp_client_NativeClient_nativeConnect(
    JNIEnv* env, jclass, jbyteArray server, jbyteArray provider, jlong timeout_ms, jbyteArray name,
    jlong buffer_cache_bytes, jint max_inflight, jint connections, jbyteArray secret, jbyteArray token) {
  RPMP_JNI_TRY
  rpmp::ClientOptions options;
  options.secret = ToString(env, secret);  // empty: librpmp reads $RPMP_SECRET_FILE
  options.tenant_token = ToString(env, token);  // empty: $RPMP_TOKEN_FILE or the secret
  options.provider = ToString(env, provider);
  options.timeout = std::chrono::milliseconds(timeout_ms);
  options.name = ToString(env, name);
  options.buffer_cache_bytes = static_cast<size_t>(buffer_cache_bytes);
  options.max_inflight = static_cast<uint32_t>(max_inflight);
  options.connections = static_cast<uint32_t>(connections);
  auto client = rpmp::Client::Connect(ToString(env, server), options);
  if (ThrowIfError(env, client.status())) return 0;
  return NewHandle(std::move(client.value()));
  RPMP_JNI_CATCH(env, 0)
}

// Cluster mode: proxies is "HOST:PORT[,HOST:PORT]" (empty = RPMP_PROXIES).
JNIEXPORT jlong JNICALL Java_io_rpmp_client_NativeClient_nativeConnectCluster(
    JNIEnv* env, jclass, jbyteArray proxies, jbyteArray provider, jlong timeout_ms, jbyteArray name,
    jlong buffer_cache_bytes, jint max_inflight, jint connections, jlong retry_for_ms, jlong proxy_timeout_ms,
    jint replicas, jint min_replicas, jlong ttl_seconds, jbyteArray secret, jbyteArray token) {
  RPMP_JNI_TRY
  rpmp::ClusterOptions options;
  options.client.secret = ToString(env, secret);  // empty: librpmp reads $RPMP_SECRET_FILE
  options.client.tenant_token = ToString(env, token);  // empty: $RPMP_TOKEN_FILE or the secret
  options.client.provider = ToString(env, provider);
  options.client.timeout = std::chrono::milliseconds(timeout_ms);
  options.client.name = ToString(env, name);
  options.client.buffer_cache_bytes = static_cast<size_t>(buffer_cache_bytes);
  options.client.max_inflight = static_cast<uint32_t>(max_inflight);
  options.client.connections = static_cast<uint32_t>(connections);
  options.retry_for = std::chrono::milliseconds(retry_for_ms);
  options.proxy_timeout = std::chrono::milliseconds(proxy_timeout_ms);
  options.namespace_defaults.replicas = static_cast<uint32_t>(replicas);
  options.namespace_defaults.min_replicas = static_cast<uint32_t>(min_replicas);
  options.namespace_defaults.ttl_seconds = static_cast<uint64_t>(ttl_seconds);
  auto list = rpmp::ProxyList(ToString(env, proxies));
  if (list.empty()) {
    ThrowIfError(env, rpmp::Status::InvalidArgument("no proxies given (and RPMP_PROXIES unset)"));
    return 0;
  }
  auto client = rpmp::Client::ConnectCluster(list, options);
  if (ThrowIfError(env, client.status())) return 0;
  return NewHandle(std::move(client.value()));
  RPMP_JNI_CATCH(env, 0)
}

JNIEXPORT void JNICALL Java_io_rpmp_client_NativeClient_nativeClose(JNIEnv* env, jclass,
                                                                   jlong h) {
  RPMP_JNI_TRY
  delete reinterpret_cast<rpmp_jni::NativeClient*>(h);
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT jlong JNICALL Java_io_rpmp_client_NativeClient_nativeNodeId(JNIEnv* env, jclass,
                                                                    jlong h) {
  RPMP_JNI_TRY
  return static_cast<jlong>(C(h)->NodeId());
  RPMP_JNI_CATCH(env, 0)
}

JNIEXPORT jlong JNICALL Java_io_rpmp_client_NativeClient_nativeAllocBuffer(JNIEnv* env, jclass,
                                                                         jlong h, jlong size) {
  RPMP_JNI_TRY
  auto buf = C(h)->AllocBuffer(static_cast<size_t>(size));
  return BufferHandle(env, std::move(buf));
  RPMP_JNI_CATCH(env, 0)
}

JNIEXPORT jlong JNICALL Java_io_rpmp_client_NativeClient_nativeAllocBufferForWrite(
    JNIEnv* env, jclass, jlong h, jbyteArray ns, jlong size) {
  RPMP_JNI_TRY
  auto buf = C(h)->AllocBufferForWrite(ToString(env, ns), static_cast<size_t>(size));
  return BufferHandle(env, std::move(buf));
  RPMP_JNI_CATCH(env, 0)
}

JNIEXPORT jlong JNICALL Java_io_rpmp_client_NativeClient_nativeAllocBufferForRead(
    JNIEnv* env, jclass, jlong h, jlong node_id, jlong size) {
  RPMP_JNI_TRY
  rpmp::RecordRef r;
  r.node_id = static_cast<uint64_t>(node_id);
  auto buf = C(h)->AllocBufferForRead(r, static_cast<size_t>(size));
  return BufferHandle(env, std::move(buf));
  RPMP_JNI_CATCH(env, 0)
}

}  // extern "C"
