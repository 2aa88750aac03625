// JNI side of io.rpmp.client.RpmpClient: its data calls (put and append, sync and
// async, get, metadata, record reads, delete, list, deleteNamespace). Each takes the
// client handle (client_handle.h), converts arguments, calls librpmp and maps the Status
// through jni_util's table. Only RpmpClient.java calls these.
#include <utility>
#include <vector>

#include "client_handle.h"

using rpmp_jni::B;
using rpmp_jni::C;
using rpmp_jni::Cluster;
using rpmp_jni::DirectRange;
using rpmp_jni::ThrowIfError;
using rpmp_jni::ToString;

namespace {

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

// Waits for a zero-copy async call; used by the blocking zero-copy forms.
rpmp::Status Await(std::future<rpmp::Status> f) { return f.get(); }

// The write a Java WriteKind code names (WriteKind.code: 1 put, 2 append).
rpmp::WriteKind Kind(jint code) {
  return code == static_cast<jint>(rpmp::WriteKind::kPut) ? rpmp::WriteKind::kPut
                                                          : rpmp::WriteKind::kAppend;
}

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

extern "C" {

// --- put / append ----------------------------------------------------------------

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

// --- get / meta / records --------------------------------------------------------

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

JNIEXPORT jobject JNICALL Java_io_rpmp_client_RpmpClient_nativeGetMeta(JNIEnv* env, jclass,
                                                                       jlong h, jbyteArray ns,
                                                                       jbyteArray key) {
  RPMP_JNI_TRY
  return MetaToJava(env, C(h)->GetMeta(ToString(env, ns), ToString(env, key)));
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

// --- keys ------------------------------------------------------------------------

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

}  // extern "C"
