// JNI side of io.rpmp.client.RpmpClient: every native method of that class. Each
// method takes the client handle (a NativeClient*), converts arguments, calls librpmp
// and maps the Status through jni_util's table. Only RpmpClient.java calls these.
#include <chrono>
#include <utility>

#include "jni_util.h"
#include "rpmp/cluster.h"

using rpmp_jni::ThrowIfError;
using rpmp_jni::ToString;

namespace {

struct NativeClient {
  std::unique_ptr<rpmp::Client> client;
};

rpmp::Client* C(jlong handle) { return reinterpret_cast<NativeClient*>(handle)->client.get(); }
rpmp::Buffer* B(jlong handle) { return reinterpret_cast<rpmp::Buffer*>(handle); }

// ns/key/index: where getMeta listed the record (null ns for a hand-made ref), so the
// C++ client can refetch the metadata when compaction moved the record.
rpmp::RecordRef Record(JNIEnv* env, jlong tag, jlong length, jint crc, jint pool, jlong rma_addr,
                       jlong rma_key, jlong node_id, jbyteArray ns, jbyteArray key, jint index) {
  rpmp::RecordRef r;
  if (ns != nullptr && key != nullptr) {
    r.origin = std::make_shared<const rpmp::RecordOrigin>(
        rpmp::RecordOrigin{rpmp_jni::ToString(env, ns), rpmp_jni::ToString(env, key)});
    r.index = static_cast<uint32_t>(index);
  }
  r.tag = static_cast<uint64_t>(tag);
  r.length = static_cast<uint64_t>(length);
  r.crc = static_cast<uint32_t>(crc);
  r.pool = static_cast<uint32_t>(pool);
  r.rma_addr = static_cast<uint64_t>(rma_addr);
  r.rma_key = static_cast<uint64_t>(rma_key);
  r.node_id = static_cast<uint64_t>(node_id);
  return r;
}

rpmp::GlobalAddress Address(jlong node, jint pool, jlong offset) {
  rpmp::GlobalAddress a;
  a.node_id = static_cast<uint64_t>(node);
  a.pool = static_cast<uint32_t>(pool);
  a.offset = static_cast<uint64_t>(offset);
  return a;
}

// Address of [offset, offset+len) inside a direct ByteBuffer; throws and returns null
// when the buffer is not direct.
char* DirectRange(JNIEnv* env, jobject byte_buffer, jlong offset) {
  void* base = env->GetDirectBufferAddress(byte_buffer);
  if (base == nullptr) {
    ThrowIfError(env, rpmp::Status::InvalidArgument("not a direct ByteBuffer"));
    return nullptr;
  }
  return static_cast<char*>(base) + offset;
}

// Waits for a zero-copy async call; used by the blocking zero-copy forms.
rpmp::Status Await(std::future<rpmp::Status> f) { return f.get(); }

// The write a Java WriteKind code names (WriteKind.code: 1 put, 2 append).
rpmp::WriteKind Kind(jint code) {
  return code == static_cast<jint>(rpmp::WriteKind::kPut) ? rpmp::WriteKind::kPut
                                                          : rpmp::WriteKind::kAppend;
}

}  // namespace

extern "C" {

JNIEXPORT jlong JNICALL Java_io_rpmp_client_RpmpClient_nativeConnect(
    JNIEnv* env, jclass, jbyteArray server, jbyteArray provider, jlong timeout_ms, jbyteArray name,
    jlong buffer_cache_bytes, jint max_inflight, jbyteArray secret) {
  RPMP_JNI_TRY
  rpmp::ClientOptions options;
  options.secret = ToString(env, secret);  // empty: librpmp reads $RPMP_SECRET_FILE
  options.provider = ToString(env, provider);
  options.timeout = std::chrono::milliseconds(timeout_ms);
  options.name = ToString(env, name);
  options.buffer_cache_bytes = static_cast<size_t>(buffer_cache_bytes);
  options.max_inflight = static_cast<uint32_t>(max_inflight);
  auto client = rpmp::Client::Connect(ToString(env, server), options);
  if (ThrowIfError(env, client.status())) return 0;
  auto* native = new NativeClient{std::move(client.value())};
  return reinterpret_cast<jlong>(native);
  RPMP_JNI_CATCH(env, 0)
}

// Cluster mode: proxies is "HOST:PORT[,HOST:PORT]" (empty = RPMP_PROXIES).
JNIEXPORT jlong JNICALL Java_io_rpmp_client_RpmpClient_nativeConnectCluster(
    JNIEnv* env, jclass, jbyteArray proxies, jbyteArray provider, jlong timeout_ms, jbyteArray name,
    jlong buffer_cache_bytes, jint max_inflight, jlong retry_for_ms, jlong proxy_timeout_ms,
    jint replicas, jint min_replicas, jlong ttl_seconds, jbyteArray secret) {
  RPMP_JNI_TRY
  rpmp::ClusterOptions options;
  options.client.secret = ToString(env, secret);  // empty: librpmp reads $RPMP_SECRET_FILE
  options.client.provider = ToString(env, provider);
  options.client.timeout = std::chrono::milliseconds(timeout_ms);
  options.client.name = ToString(env, name);
  options.client.buffer_cache_bytes = static_cast<size_t>(buffer_cache_bytes);
  options.client.max_inflight = static_cast<uint32_t>(max_inflight);
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
  auto* native = new NativeClient{std::move(client.value())};
  return reinterpret_cast<jlong>(native);
  RPMP_JNI_CATCH(env, 0)
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeClose(JNIEnv* env, jclass,
                                                                   jlong h) {
  RPMP_JNI_TRY
  delete reinterpret_cast<NativeClient*>(h);
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT jlong JNICALL Java_io_rpmp_client_RpmpClient_nativeNodeId(JNIEnv* env, jclass,
                                                                    jlong h) {
  RPMP_JNI_TRY
  return static_cast<jlong>(C(h)->NodeId());
  RPMP_JNI_CATCH(env, 0)
}

namespace {
// A new Buffer's handle for Java (freed by RpmpBuffer.nativeFree), or 0 with the error thrown.
jlong BufferHandle(JNIEnv* env, rpmp::StatusOr<rpmp::Buffer> buf) {
  if (ThrowIfError(env, buf.status())) return 0;
  return reinterpret_cast<jlong>(new rpmp::Buffer(std::move(buf).value()));
}
}  // namespace

JNIEXPORT jlong JNICALL Java_io_rpmp_client_RpmpClient_nativeAllocBuffer(JNIEnv* env, jclass,
                                                                         jlong h, jlong size) {
  RPMP_JNI_TRY
  auto buf = C(h)->AllocBuffer(static_cast<size_t>(size));
  return BufferHandle(env, std::move(buf));
  RPMP_JNI_CATCH(env, 0)
}

JNIEXPORT jlong JNICALL Java_io_rpmp_client_RpmpClient_nativeAllocBufferForWrite(
    JNIEnv* env, jclass, jlong h, jbyteArray ns, jlong size) {
  RPMP_JNI_TRY
  auto buf = C(h)->AllocBufferForWrite(ToString(env, ns), static_cast<size_t>(size));
  return BufferHandle(env, std::move(buf));
  RPMP_JNI_CATCH(env, 0)
}

JNIEXPORT jlong JNICALL Java_io_rpmp_client_RpmpClient_nativeAllocBufferForRead(
    JNIEnv* env, jclass, jlong h, jlong node_id, jlong size) {
  RPMP_JNI_TRY
  rpmp::RecordRef r;
  r.node_id = static_cast<uint64_t>(node_id);
  auto buf = C(h)->AllocBufferForRead(r, static_cast<size_t>(size));
  return BufferHandle(env, std::move(buf));
  RPMP_JNI_CATCH(env, 0)
}

// --- put / append ------------------------------------------------------------------

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeWriteBuffer(
    JNIEnv* env, jclass, jlong h, jint kind, jbyteArray ns, jbyteArray key, jlong buf,
    jlong size, jlong tag) {
  RPMP_JNI_TRY
  B(buf)->set_size(static_cast<size_t>(size));
  std::string n = ToString(env, ns), k = ToString(env, key);
  auto t = static_cast<uint64_t>(tag);
  ThrowIfError(env, Await(Kind(kind) == rpmp::WriteKind::kAppend
                              ? C(h)->AppendFuture(n, k, *B(buf), t)
                              : C(h)->PutFuture(n, k, *B(buf), t)));
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeWriteDirect(
    JNIEnv* env, jclass, jlong h, jint kind, jbyteArray ns, jbyteArray key,
    jobject byte_buffer, jlong offset, jlong len, jlong tag) {
  RPMP_JNI_TRY
  char* data = DirectRange(env, byte_buffer, offset);
  if (data == nullptr) return;
  std::string n = ToString(env, ns), k = ToString(env, key);
  auto t = static_cast<uint64_t>(tag);
  auto l = static_cast<size_t>(len);
  ThrowIfError(env, Kind(kind) == rpmp::WriteKind::kAppend ? C(h)->Append(n, k, data, l, t)
                                                           : C(h)->Put(n, k, data, l, t));
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeWriteBufferAsync(
    JNIEnv* env, jclass, jlong h, jint kind, jbyteArray ns, jbyteArray key, jlong buf,
    jlong size, jlong tag, jobject result) {
  RPMP_JNI_TRY
  B(buf)->set_size(static_cast<size_t>(size));
  std::string n = ToString(env, ns), k = ToString(env, key);
  auto done = rpmp_jni::CompleteJava(env, result);
  if (Kind(kind) == rpmp::WriteKind::kAppend) {
    C(h)->AppendAsync(n, k, *B(buf), static_cast<uint64_t>(tag), std::move(done));
  } else {
    C(h)->PutAsync(n, k, *B(buf), static_cast<uint64_t>(tag), std::move(done));
  }
  RPMP_JNI_CATCH(env, )
}

// --- get / meta / records ----------------------------------------------------------

JNIEXPORT jlong JNICALL Java_io_rpmp_client_RpmpClient_nativeGet(JNIEnv* env, jclass, jlong h,
                                                                 jbyteArray ns, jbyteArray key,
                                                                 jlong buf) {
  RPMP_JNI_TRY
  if (ThrowIfError(env, C(h)->Get(ToString(env, ns), ToString(env, key), B(buf)))) return -1;
  return static_cast<jlong>(B(buf)->size());
  RPMP_JNI_CATCH(env, -1)
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeGetAsync(
    JNIEnv* env, jclass, jlong h, jbyteArray ns, jbyteArray key, jlong buf, jobject result) {
  RPMP_JNI_TRY
  C(h)->GetAsync(ToString(env, ns), ToString(env, key), B(buf),
                 rpmp_jni::CompleteJava(env, result));
  RPMP_JNI_CATCH(env, )
}

namespace {
// io.rpmp.client.ObjectMeta for a GetMeta result; nullptr with an exception pending.
jobject MetaToJava(JNIEnv* env, const rpmp::StatusOr<rpmp::ObjectMeta>& meta) {
  if (ThrowIfError(env, meta.status())) return nullptr;
  const auto& refs = rpmp_jni::Refs();
  jobjectArray records = env->NewObjectArray(static_cast<jsize>(meta->records.size()),
                                             refs.record_ref, nullptr);
  if (records == nullptr) return nullptr;
  // The object's name, once for all its refs (RecordRef keeps the arrays private).
  jbyteArray ns = nullptr, key = nullptr;
  if (!meta->records.empty() && meta->records[0].origin != nullptr) {
    const rpmp::RecordOrigin& o = *meta->records[0].origin;
    ns = env->NewByteArray(static_cast<jsize>(o.ns.size()));
    key = env->NewByteArray(static_cast<jsize>(o.key.size()));
    if (ns == nullptr || key == nullptr) return nullptr;
    env->SetByteArrayRegion(ns, 0, static_cast<jsize>(o.ns.size()), reinterpret_cast<const jbyte*>(o.ns.data()));
    env->SetByteArrayRegion(key, 0, static_cast<jsize>(o.key.size()), reinterpret_cast<const jbyte*>(o.key.data()));
  }
  for (size_t i = 0; i < meta->records.size(); ++i) {
    const auto& r = meta->records[i];
    jobject rec = env->NewObject(refs.record_ref, refs.record_ref_ctor,
                                 static_cast<jlong>(r.tag), static_cast<jlong>(r.length),
                                 static_cast<jint>(r.crc), static_cast<jint>(r.pool),
                                 static_cast<jlong>(r.rma_addr), static_cast<jlong>(r.rma_key),
                                 static_cast<jlong>(r.node_id), r.origin ? ns : nullptr,
                                 r.origin ? key : nullptr, static_cast<jint>(r.index));
    if (rec == nullptr) return nullptr;
    env->SetObjectArrayElement(records, static_cast<jsize>(i), rec);
    env->DeleteLocalRef(rec);
  }
  return env->NewObject(refs.object_meta, refs.object_meta_ctor,
                        static_cast<jlong>(meta->total_length), records);
}
}  // namespace

JNIEXPORT jobject JNICALL Java_io_rpmp_client_RpmpClient_nativeGetMeta(JNIEnv* env, jclass,
                                                                       jlong h, jbyteArray ns,
                                                                       jbyteArray key) {
  RPMP_JNI_TRY
  return MetaToJava(env, C(h)->GetMeta(ToString(env, ns), ToString(env, key)));
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeReadRecord(
    JNIEnv* env, jclass, jlong h, jlong tag, jlong length, jint crc, jint pool, jlong rma_addr,
    jlong rma_key, jlong node_id, jbyteArray ns, jbyteArray key, jint index, jlong buf,
    jlong dst_offset) {
  RPMP_JNI_TRY
  ThrowIfError(env, C(h)->ReadRecord(Record(env, tag, length, crc, pool, rma_addr, rma_key, node_id, ns, key, index),
                                     B(buf), static_cast<size_t>(dst_offset)));
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeReadRecordAsync(
    JNIEnv* env, jclass, jlong h, jlong tag, jlong length, jint crc, jint pool, jlong rma_addr,
    jlong rma_key, jlong node_id, jbyteArray ns, jbyteArray key, jint index, jlong buf,
    jlong dst_offset, jobject result) {
  RPMP_JNI_TRY
  C(h)->ReadRecordAsync(Record(env, tag, length, crc, pool, rma_addr, rma_key, node_id, ns, key, index),
                        B(buf), static_cast<size_t>(dst_offset), rpmp_jni::CompleteJava(env, result));
  RPMP_JNI_CATCH(env, )
}

// --- keys and namespaces -----------------------------------------------------------

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeDelete(JNIEnv* env, jclass, jlong h,
                                                                   jbyteArray ns,
                                                                   jbyteArray key) {
  RPMP_JNI_TRY
  ThrowIfError(env, C(h)->Delete(ToString(env, ns), ToString(env, key)));
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT jobjectArray JNICALL Java_io_rpmp_client_RpmpClient_nativeList(
    JNIEnv* env, jclass, jlong h, jbyteArray ns, jbyteArray start_after, jlong max) {
  RPMP_JNI_TRY
  auto keys = C(h)->List(ToString(env, ns), ToString(env, start_after), static_cast<size_t>(max));
  if (ThrowIfError(env, keys.status())) return nullptr;
  const auto& refs = rpmp_jni::Refs();
  jobjectArray out =
      env->NewObjectArray(static_cast<jsize>(keys->size()), refs.key_info, nullptr);
  if (out == nullptr) return nullptr;
  for (size_t i = 0; i < keys->size(); ++i) {
    const auto& k = (*keys)[i];
    jbyteArray name = rpmp_jni::ToByteArray(env, k.key);
    if (name == nullptr) return nullptr;
    jobject info = env->NewObject(refs.key_info, refs.key_info_ctor, name,
                                  static_cast<jlong>(k.total_length), static_cast<jint>(k.records));
    if (info == nullptr) return nullptr;
    env->SetObjectArrayElement(out, static_cast<jsize>(i), info);
    env->DeleteLocalRef(info);
    env->DeleteLocalRef(name);
  }
  return out;
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeDeleteNamespace(JNIEnv* env, jclass,
                                                                            jlong h,
                                                                            jbyteArray ns) {
  RPMP_JNI_TRY
  ThrowIfError(env, C(h)->DeleteNamespace(ToString(env, ns)));
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT jobject JNICALL Java_io_rpmp_client_RpmpClient_nativeStat(JNIEnv* env, jclass,
                                                                    jlong h) {
  RPMP_JNI_TRY
  auto stats = C(h)->Stat();
  if (ThrowIfError(env, stats.status())) return nullptr;
  const auto& refs = rpmp_jni::Refs();
  jobjectArray pools =
      env->NewObjectArray(static_cast<jsize>(stats->pools.size()), refs.pool_info, nullptr);
  if (pools == nullptr) return nullptr;
  for (size_t i = 0; i < stats->pools.size(); ++i) {
    const auto& p = stats->pools[i];
    jbyteArray path = rpmp_jni::ToByteArray(env, p.path);
    jbyteArray medium = rpmp_jni::ToByteArray(env, p.medium);
    if (path == nullptr || medium == nullptr) return nullptr;
    jobject info = env->NewObject(refs.pool_info, refs.pool_info_ctor, path, medium,
                                  static_cast<jlong>(p.capacity), static_cast<jlong>(p.used),
                                  static_cast<jlong>(p.free));
    if (info == nullptr) return nullptr;
    env->SetObjectArrayElement(pools, static_cast<jsize>(i), info);
    env->DeleteLocalRef(info);
    env->DeleteLocalRef(path);
    env->DeleteLocalRef(medium);
  }
  return env->NewObject(refs.server_stats, refs.server_stats_ctor,
                        static_cast<jlong>(stats->node_id), static_cast<jlong>(stats->namespaces),
                        static_cast<jlong>(stats->keys), static_cast<jlong>(stats->records),
                        static_cast<jlong>(stats->live_bytes), pools);
  RPMP_JNI_CATCH(env, nullptr)
}

// --- raw memory ---------------------------------------------------------------------

JNIEXPORT jobject JNICALL Java_io_rpmp_client_RpmpClient_nativeAlloc(JNIEnv* env, jclass, jlong h,
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

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeFree(JNIEnv* env, jclass, jlong h,
                                                                 jlong node, jint pool,
                                                                 jlong offset) {
  RPMP_JNI_TRY
  ThrowIfError(env, C(h)->Free(Address(node, pool, offset)));
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeRawWrite(
    JNIEnv* env, jclass, jlong h, jlong node, jint pool, jlong offset, jobject byte_buffer,
    jlong buffer_offset, jlong len) {
  RPMP_JNI_TRY
  char* data = DirectRange(env, byte_buffer, buffer_offset);
  if (data == nullptr) return;
  ThrowIfError(env, C(h)->Write(Address(node, pool, offset), data, static_cast<size_t>(len)));
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeRawRead(
    JNIEnv* env, jclass, jlong h, jlong node, jint pool, jlong offset, jobject byte_buffer,
    jlong buffer_offset, jlong len) {
  RPMP_JNI_TRY
  char* data = DirectRange(env, byte_buffer, buffer_offset);
  if (data == nullptr) return;
  ThrowIfError(env, C(h)->Read(Address(node, pool, offset), data, static_cast<size_t>(len)));
  RPMP_JNI_CATCH(env, )
}

}  // extern "C"

// --- cluster namespace admin (rpmp/cluster.h) -----------------------------------------

namespace {

rpmp::ClusterControl* Cluster(JNIEnv* env, jlong h) {
  rpmp::ClusterControl* c = rpmp::AsCluster(C(h));
  if (c == nullptr) {
    ThrowIfError(env, rpmp::Status::FailedPrecondition(
                          "not a cluster client (use RpmpClient.connectCluster)"));
  }
  return c;
}

// {replicas, minReplicas, ttlSeconds, primary, degraded(0/1), replica node ids...}
jlongArray InfoArray(JNIEnv* env, const rpmp::NamespaceInfo& info) {
  std::vector<jlong> v = {static_cast<jlong>(info.options.replicas),
                          static_cast<jlong>(info.options.min_replicas),
                          static_cast<jlong>(info.options.ttl_seconds),
                          static_cast<jlong>(info.primary), info.degraded ? 1 : 0};
  for (uint64_t id : info.replicas) v.push_back(static_cast<jlong>(id));
  jlongArray out = env->NewLongArray(static_cast<jsize>(v.size()));
  if (out == nullptr) return nullptr;
  env->SetLongArrayRegion(out, 0, static_cast<jsize>(v.size()), v.data());
  return out;
}

}  // namespace

extern "C" {

JNIEXPORT jboolean JNICALL Java_io_rpmp_client_RpmpClient_nativeIsCluster(JNIEnv* env, jclass,
                                                                          jlong h) {
  RPMP_JNI_TRY
  return rpmp::AsCluster(C(h)) != nullptr ? JNI_TRUE : JNI_FALSE;
  RPMP_JNI_CATCH(env, JNI_FALSE)
}

// {server connections opened, staged copies, staged bytes, failover retries, sessions
// opened, sessions re-established, session refusals}
JNIEXPORT jlongArray JNICALL Java_io_rpmp_client_RpmpClient_nativeClusterCounters(JNIEnv* env,
                                                                                jclass, jlong h) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return nullptr;
  rpmp::ClusterCounters k = c->Counters();
  jlong v[] = {static_cast<jlong>(k.server_connections), static_cast<jlong>(k.staged_copies),
               static_cast<jlong>(k.staged_bytes), static_cast<jlong>(k.failover_retries),
               static_cast<jlong>(k.sessions_opened), static_cast<jlong>(k.sessions_reestablished),
               static_cast<jlong>(k.session_refusals)};
  jlongArray out = env->NewLongArray(7);
  if (out == nullptr) return nullptr;
  env->SetLongArrayRegion(out, 0, 7, v);
  return out;
  RPMP_JNI_CATCH(env, nullptr)
}

// {node id, capacity, free} of each LIVE node, flattened.
JNIEXPORT jlongArray JNICALL Java_io_rpmp_client_RpmpClient_nativeLiveNodeSpace(JNIEnv* env,
                                                                              jclass, jlong h) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return nullptr;
  auto nodes = c->LiveNodeSpace();
  if (ThrowIfError(env, nodes.status())) return nullptr;
  std::vector<jlong> v;
  for (const rpmp::NodeSpace& n : *nodes) {
    v.push_back(static_cast<jlong>(n.node_id));
    v.push_back(static_cast<jlong>(n.capacity));
    v.push_back(static_cast<jlong>(n.free));
  }
  jlongArray out = env->NewLongArray(static_cast<jsize>(v.size()));
  if (out == nullptr) return nullptr;
  env->SetLongArrayRegion(out, 0, static_cast<jsize>(v.size()), v.data());
  return out;
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT jlongArray JNICALL Java_io_rpmp_client_RpmpClient_nativeCreateNamespace(
    JNIEnv* env, jclass, jlong h, jbyteArray name, jint replicas, jint min_replicas,
    jlong ttl_seconds) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return nullptr;
  rpmp::NamespaceOptions o;
  o.replicas = static_cast<uint32_t>(replicas);
  o.min_replicas = static_cast<uint32_t>(min_replicas);
  o.ttl_seconds = static_cast<uint64_t>(ttl_seconds);
  auto info = c->CreateNamespace(ToString(env, name), o);
  if (ThrowIfError(env, info.status())) return nullptr;
  return InfoArray(env, *info);
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT jlongArray JNICALL Java_io_rpmp_client_RpmpClient_nativeDescribeNamespace(
    JNIEnv* env, jclass, jlong h, jbyteArray name) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return nullptr;
  auto info = c->DescribeNamespace(ToString(env, name));
  if (ThrowIfError(env, info.status())) return nullptr;
  return InfoArray(env, *info);
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT jobjectArray JNICALL Java_io_rpmp_client_RpmpClient_nativeDeleteNamespaces(
    JNIEnv* env, jclass, jlong h, jbyteArray name, jboolean recursive) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return nullptr;
  auto names = c->DeleteNamespaces(ToString(env, name), recursive == JNI_TRUE);
  if (ThrowIfError(env, names.status())) return nullptr;
  jclass byte_array = env->FindClass("[B");
  if (byte_array == nullptr) return nullptr;
  jobjectArray out = env->NewObjectArray(static_cast<jsize>(names->size()), byte_array, nullptr);
  env->DeleteLocalRef(byte_array);
  if (out == nullptr) return nullptr;
  for (size_t i = 0; i < names->size(); ++i) {
    jbyteArray n = rpmp_jni::ToByteArray(env, (*names)[i]);
    if (n == nullptr) return nullptr;
    env->SetObjectArrayElement(out, static_cast<jsize>(i), n);
    env->DeleteLocalRef(n);
  }
  return out;
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT jobject JNICALL Java_io_rpmp_client_RpmpClient_nativeGetMetaOfTags(
    JNIEnv* env, jclass, jlong h, jbyteArray ns, jbyteArray key, jlongArray tags) {
  RPMP_JNI_TRY
  std::vector<uint64_t> t(static_cast<size_t>(env->GetArrayLength(tags)));
  if (!t.empty())
    env->GetLongArrayRegion(tags, 0, static_cast<jsize>(t.size()), reinterpret_cast<jlong*>(t.data()));
  return MetaToJava(env, C(h)->GetMetaOfTags(ToString(env, ns), ToString(env, key), t));
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT jobject JNICALL Java_io_rpmp_client_RpmpClient_nativeGetMetaOnNode(
    JNIEnv* env, jclass, jlong h, jbyteArray ns, jbyteArray key, jlong node_id) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return nullptr;
  return MetaToJava(env, c->GetMetaOnNode(ToString(env, ns), ToString(env, key),
                                          static_cast<uint64_t>(node_id)));
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpClient_nativeTouchNamespace(JNIEnv* env, jclass,
                                                                           jlong h,
                                                                           jbyteArray name) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return;
  ThrowIfError(env, c->TouchNamespace(ToString(env, name)));
  RPMP_JNI_CATCH(env, )
}

}  // extern "C"

