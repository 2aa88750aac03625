// JNI side of io.rpmp.client.RpmpAdmin's credential calls (issueCredential,
// renewCredential; rpmp/cluster.h ClusterControl, docs/security.md "Tenants"):
// FAILED_PRECONDITION for a server-direct client. The token crosses as bytes and is
// never logged. Only RpmpAdmin.java calls these.
#include <string>

#include "client_handle.h"

using rpmp_jni::Cluster;
using rpmp_jni::ThrowIfError;
using rpmp_jni::ToString;

namespace {
// {token, prefix, app, expiry (decimal unix seconds)} as UTF-8 byte arrays.
jobjectArray CredentialArray(JNIEnv* env, const rpmp::Credential& c) {
  jclass byte_array = env->FindClass("[B");
  if (byte_array == nullptr) return nullptr;
  jobjectArray out = env->NewObjectArray(4, byte_array, nullptr);
  env->DeleteLocalRef(byte_array);
  if (out == nullptr) return nullptr;
  const std::string parts[] = {c.token, c.prefix, c.app, std::to_string(c.expiry_unix)};
  for (jsize i = 0; i < 4; ++i) {
    jbyteArray b = rpmp_jni::ToByteArray(env, parts[i]);
    if (b == nullptr) return nullptr;
    env->SetObjectArrayElement(out, i, b);
    env->DeleteLocalRef(b);
  }
  return out;
}
}  // namespace

extern "C" {

JNIEXPORT jobjectArray JNICALL Java_io_rpmp_client_RpmpAdmin_nativeIssueCredential(
    JNIEnv* env, jclass, jlong h, jbyteArray prefix, jbyteArray app, jlong ttl_seconds) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return nullptr;
  auto cred = c->IssueCredential(ToString(env, prefix), ToString(env, app), static_cast<uint64_t>(ttl_seconds));
  if (ThrowIfError(env, cred.status())) return nullptr;
  return CredentialArray(env, *cred);
  RPMP_JNI_CATCH(env, nullptr)
}

JNIEXPORT jobjectArray JNICALL Java_io_rpmp_client_RpmpAdmin_nativeRenewCredential(
    JNIEnv* env, jclass, jlong h, jbyteArray token, jlong ttl_seconds) {
  RPMP_JNI_TRY
  rpmp::ClusterControl* c = Cluster(env, h);
  if (c == nullptr) return nullptr;
  auto cred = c->RenewCredential(ToString(env, token), static_cast<uint64_t>(ttl_seconds));
  if (ThrowIfError(env, cred.status())) return nullptr;
  return CredentialArray(env, *cred);
  RPMP_JNI_CATCH(env, nullptr)
}

}  // extern "C"
