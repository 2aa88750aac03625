// JNI side of io.rpmp.client.RpmpAdmin: cluster namespace administration and counters
// (rpmp/cluster.h; FAILED_PRECONDITION for a server-direct client) and the server's
// statistics. Only RpmpAdmin.java calls these.
#include <vector>

#include "client_handle.h"

using rpmp_jni::C;
using rpmp_jni::Cluster;
using rpmp_jni::ThrowIfError;
using rpmp_jni::ToLongArray;
using rpmp_jni::ToString;

namespace {
// {replicas, minReplicas, ttlSeconds, primary, degraded(0/1), replica node ids...}
jlongArray InfoArray(JNIEnv* env, const rpmp::NamespaceInfo& info) {
  std::vector<jlong> v = {static_cast<jlong>(info.options.replicas),
                          static_cast<jlong>(info.options.min_replicas),
                          static_cast<jlong>(info.options.ttl_seconds),
                          static_cast<jlong>(info.primary), info.degraded ? 1 : 0};
  for (uint64_t id : info.replicas) v.push_back(static_cast<jlong>(id));
  return ToLongArray(env, v.data(), v.size());
}
}  // namespace

extern "C" {

JNIEXPORT jboolean JNICALL Java_io_rpmp_client_RpmpAdmin_nativeIsCluster(JNIEnv* env, jclass,
                                                                          jlong h) {
  RPMP_JNI_TRY
  return rpmp::AsCluster(C(h)) != nullptr ? JNI_TRUE : JNI_FALSE;
  RPMP_JNI_CATCH(env, JNI_FALSE)
}

// {server connections opened, staged copies, staged bytes, failover retries, sessions
// opened, sessions re-established, session refusals}
JNIEXPORT jlongArray JNICALL Java_io_rpmp_client_RpmpAdmin_nativeClusterCounters(JNIEnv* env,
                                                                                jclass, jlong h) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return nullptr;
  rpmp::ClusterCounters k = c->Counters();
  jlong v[] = {static_cast<jlong>(k.server_connections), static_cast<jlong>(k.staged_copies),
               static_cast<jlong>(k.staged_bytes), static_cast<jlong>(k.failover_retries),
               static_cast<jlong>(k.sessions_opened), static_cast<jlong>(k.sessions_reestablished),
               static_cast<jlong>(k.session_refusals)};
  return ToLongArray(env, v, 7);
  RPMP_JNI_CATCH(env, nullptr)
}

// {node id, capacity, free} of each LIVE node, flattened.
JNIEXPORT jlongArray JNICALL Java_io_rpmp_client_RpmpAdmin_nativeLiveNodeSpace(JNIEnv* env,
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
  return ToLongArray(env, v.data(), v.size());
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT jlongArray JNICALL Java_io_rpmp_client_RpmpAdmin_nativeCreateNamespace(
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

JNIEXPORT jlongArray JNICALL Java_io_rpmp_client_RpmpAdmin_nativeDescribeNamespace(
    JNIEnv* env, jclass, jlong h, jbyteArray name) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return nullptr;
  auto info = c->DescribeNamespace(ToString(env, name));
  if (ThrowIfError(env, info.status())) return nullptr;
  return InfoArray(env, *info);
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT jobjectArray JNICALL Java_io_rpmp_client_RpmpAdmin_nativeDeleteNamespaces(
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

JNIEXPORT void JNICALL Java_io_rpmp_client_RpmpAdmin_nativeTouchNamespace(JNIEnv* env, jclass,
                                                                           jlong h,
                                                                           jbyteArray name) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return;
  ThrowIfError(env, c->TouchNamespace(ToString(env, name)));
  RPMP_JNI_CATCH(env, )
}

JNIEXPORT jobject JNICALL Java_io_rpmp_client_RpmpAdmin_nativeStat(JNIEnv* env, jclass,
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

}  // extern "C"
