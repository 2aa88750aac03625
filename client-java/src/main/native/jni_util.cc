// Implementation of jni_util.h: the Status -> exception table, class cache (filled in
// JNI_OnLoad) and thread attachment for librpmp's progress thread.
#include "jni_util.h"

#include <cstdio>

namespace rpmp_jni {
namespace {

JavaVM* g_vm = nullptr;
JavaRefs g_refs;

// THE table: which Java exception class stands for which status code. Codes not
// listed become a plain RpmpException carrying the code.
struct ExceptionClass {
  rpmp::StatusCode code;
  const char* class_name;
  jclass cls;
  jmethodID ctor;
};
ExceptionClass g_exceptions[] = {
    {rpmp::StatusCode::kNotFound, "io/rpmp/client/RpmpNotFoundException", nullptr, nullptr},
    {rpmp::StatusCode::kResourceExhausted, "io/rpmp/client/RpmpNoSpaceException", nullptr,
     nullptr},
    {rpmp::StatusCode::kUnavailable, "io/rpmp/client/RpmpUnavailableException", nullptr, nullptr},
    {rpmp::StatusCode::kDeadlineExceeded, "io/rpmp/client/RpmpTimeoutException", nullptr,
     nullptr},
    {rpmp::StatusCode::kDataLoss, "io/rpmp/client/RpmpCorruptionException", nullptr, nullptr},
    {rpmp::StatusCode::kInvalidArgument, "io/rpmp/client/RpmpInvalidArgumentException", nullptr,
     nullptr},
};

jclass GlobalClass(JNIEnv* env, const char* name) {
  jclass local = env->FindClass(name);
  if (local == nullptr) return nullptr;
  jclass global = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  return global;
}

// Detaches the thread from the JVM when a thread attached by CurrentEnv() exits.
struct Attachment {
  JNIEnv* env = nullptr;
  bool attached_here = false;
  ~Attachment() {
    if (attached_here && g_vm != nullptr) g_vm->DetachCurrentThread();
  }
};
thread_local Attachment t_attachment;

bool LoadRefs(JNIEnv* env) {
  constexpr const char* kCtor = "<init>";
  auto& r = g_refs;
  if (!(r.object_meta = GlobalClass(env, "io/rpmp/client/ObjectMeta"))) return false;
  if (!(r.record_ref = GlobalClass(env, "io/rpmp/client/RecordRef"))) return false;
  if (!(r.key_info = GlobalClass(env, "io/rpmp/client/KeyInfo"))) return false;
  if (!(r.server_stats = GlobalClass(env, "io/rpmp/client/ServerStats"))) return false;
  if (!(r.pool_info = GlobalClass(env, "io/rpmp/client/ServerStats$PoolInfo"))) return false;
  if (!(r.global_address = GlobalClass(env, "io/rpmp/client/GlobalAddress"))) return false;
  if (!(r.rpmp_exception = GlobalClass(env, "io/rpmp/client/RpmpException"))) return false;
  r.object_meta_ctor = env->GetMethodID(r.object_meta, kCtor, "(J[Lio/rpmp/client/RecordRef;)V");
  r.record_ref_ctor = env->GetMethodID(r.record_ref, kCtor, "(JJIIJJJ[B[BI)V");
  r.key_info_ctor = env->GetMethodID(r.key_info, kCtor, "([BJI)V");
  r.server_stats_ctor = env->GetMethodID(r.server_stats, kCtor,
                                         "(JJJJJ[Lio/rpmp/client/ServerStats$PoolInfo;)V");
  r.pool_info_ctor = env->GetMethodID(r.pool_info, kCtor, "([B[BJJJ)V");
  r.global_address_ctor = env->GetMethodID(r.global_address, kCtor, "(JIJ)V");
  r.rpmp_exception_ctor = env->GetMethodID(r.rpmp_exception, kCtor, "(ILjava/lang/String;)V");
  jclass async_result = env->FindClass("io/rpmp/client/AsyncResult");
  if (async_result == nullptr) return false;
  r.async_result_on_complete =
      env->GetMethodID(async_result, "onComplete", "(Ljava/lang/Throwable;)V");
  env->DeleteLocalRef(async_result);
  if (!r.object_meta_ctor || !r.record_ref_ctor || !r.key_info_ctor || !r.server_stats_ctor ||
      !r.pool_info_ctor || !r.global_address_ctor || !r.rpmp_exception_ctor ||
      !r.async_result_on_complete) {
    return false;
  }
  for (auto& e : g_exceptions) {
    if (!(e.cls = GlobalClass(env, e.class_name))) return false;
    if (!(e.ctor = env->GetMethodID(e.cls, kCtor, "(ILjava/lang/String;)V"))) return false;
  }
  jstring msg = env->NewStringUTF(
      "librpmp_jni: the call failed, and building its exception failed too (out of memory?)");
  if (msg == nullptr) return false;
  jobject fallback = env->NewObject(r.rpmp_exception, r.rpmp_exception_ctor,
                                    static_cast<jint>(rpmp::StatusCode::kInternal), msg);
  env->DeleteLocalRef(msg);
  if (fallback == nullptr) return false;
  r.unbuildable_exception = static_cast<jthrowable>(env->NewGlobalRef(fallback));
  env->DeleteLocalRef(fallback);
  return r.unbuildable_exception != nullptr;
}

}  // namespace

const JavaRefs& Refs() { return g_refs; }

jthrowable MakeException(JNIEnv* env, const rpmp::Status& status) {
  jclass cls = g_refs.rpmp_exception;
  jmethodID ctor = g_refs.rpmp_exception_ctor;
  for (const auto& e : g_exceptions) {
    if (e.code == status.code()) {
      cls = e.cls;
      ctor = e.ctor;
      break;
    }
  }
  jstring message = ToJavaString(env, status.ToString());
  if (message == nullptr) return nullptr;
  auto ex = static_cast<jthrowable>(
      env->NewObject(cls, ctor, static_cast<jint>(status.code()), message));
  env->DeleteLocalRef(message);
  return ex;
}

jthrowable MakeFailure(JNIEnv* env, const rpmp::Status& status) {
  jthrowable ex = MakeException(env, status);
  if (ex != nullptr) return ex;
  ex = env->ExceptionOccurred();
  if (ex != nullptr) {
    env->ExceptionClear();
    return ex;
  }
  return static_cast<jthrowable>(env->NewLocalRef(g_refs.unbuildable_exception));
}

bool ThrowIfError(JNIEnv* env, const rpmp::Status& status) {
  if (status.ok()) return false;
  jthrowable ex = MakeException(env, status);
  if (ex != nullptr) {
    env->Throw(ex);
    env->DeleteLocalRef(ex);
  } else if (!env->ExceptionCheck()) {
    env->Throw(g_refs.unbuildable_exception);  // never report a failure as success
  }
  return true;
}

void ThrowInternal(JNIEnv* env, const char* what) {
  if (env->ExceptionCheck()) return;  // keep the first pending exception
  ThrowIfError(env, rpmp::Status::Internal(std::string("librpmp_jni: ") + what));
}

std::string ToString(JNIEnv* env, jbyteArray bytes) {
  if (bytes == nullptr) return {};
  jsize n = env->GetArrayLength(bytes);
  std::string s(static_cast<size_t>(n), '\0');
  env->GetByteArrayRegion(bytes, 0, n, reinterpret_cast<jbyte*>(s.data()));
  return s;
}

jbyteArray ToByteArray(JNIEnv* env, const std::string& s) {
  jbyteArray a = env->NewByteArray(static_cast<jsize>(s.size()));
  if (a != nullptr) {
    env->SetByteArrayRegion(a, 0, static_cast<jsize>(s.size()),
                            reinterpret_cast<const jbyte*>(s.data()));
  }
  return a;
}

jstring ToJavaString(JNIEnv* env, const std::string& s) {
  // NewStringUTF wants modified UTF-8; replace NULs and non-ASCII bytes to stay safe.
  std::string safe = s;
  for (char& c : safe) {
    if (c == '\0' || static_cast<unsigned char>(c) >= 0x80) c = '?';
  }
  return env->NewStringUTF(safe.c_str());
}

JNIEnv* CurrentEnv() {
  if (t_attachment.env != nullptr) return t_attachment.env;
  if (g_vm == nullptr) return nullptr;
  JNIEnv* env = nullptr;
  jint rc = g_vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8);
  if (rc == JNI_EDETACHED) {
    JavaVMAttachArgs args{JNI_VERSION_1_8, const_cast<char*>("rpmp-progress"), nullptr};
    if (g_vm->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(&env), &args) != JNI_OK) {
      return nullptr;
    }
    t_attachment.attached_here = true;
  } else if (rc != JNI_OK) {
    return nullptr;
  }
  t_attachment.env = env;
  return env;
}

GlobalRef::~GlobalRef() {
  JNIEnv* env = CurrentEnv();
  if (env != nullptr && obj_ != nullptr) env->DeleteGlobalRef(obj_);
}

rpmp::Callback CompleteJava(JNIEnv* env, jobject async_result, std::function<void()> after) {
  auto target = std::make_shared<GlobalRef>(env, async_result);
  return [target, after = std::move(after)](rpmp::Status status) {
    try {
      if (after) after();
    } catch (...) {
      // Nothing may escape into librpmp's progress thread either.
    }
    JNIEnv* env = CurrentEnv();
    if (env == nullptr) {
      std::fprintf(stderr, "librpmp_jni: cannot attach thread to the JVM; result lost\n");
      return;
    }
    if (env->ExceptionCheck()) env->ExceptionClear();
    // A failed call always completes its future exceptionally (MakeFailure never returns
    // nullptr), even when its exception cannot be built.
    jthrowable ex = status.ok() ? nullptr : MakeFailure(env, status);
    if (!status.ok() && ex == nullptr) {
      std::fprintf(stderr, "librpmp_jni: no exception object for a failed call; result lost\n");
      return;
    }
    env->CallVoidMethod(target->get(), g_refs.async_result_on_complete, ex);
    if (env->ExceptionCheck()) {
      env->ExceptionDescribe();  // a bug in AsyncResult; never let it reach librpmp
      env->ExceptionClear();
    }
    if (ex != nullptr) env->DeleteLocalRef(ex);
  };
}

}  // namespace rpmp_jni

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  rpmp_jni::g_vm = vm;
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  if (!rpmp_jni::LoadRefs(env)) return JNI_ERR;
  return JNI_VERSION_1_8;
}
