// Shared JNI plumbing for librpmp_jni: the one Status -> Java exception table, byte[]
// <-> std::string conversion, cached classes/constructors, JVM attachment of native
// threads (librpmp's progress thread) and the guard that keeps C++ exceptions from
// crossing the JNI boundary. Used only by the other .cc files of client-java's native code.
#pragma once

#include <jni.h>

#include <memory>
#include <string>

#include "rpmp/client.h"

namespace rpmp_jni {

// Classes and member ids resolved once in JNI_OnLoad (global references).
struct JavaRefs {
  jclass object_meta, record_ref, key_info, server_stats, pool_info, global_address;
  jmethodID object_meta_ctor, record_ref_ctor, key_info_ctor, server_stats_ctor, pool_info_ctor,
      global_address_ctor;
  jmethodID async_result_on_complete;  // io.rpmp.client.AsyncResult.onComplete(Throwable)
  jclass rpmp_exception;
  jmethodID rpmp_exception_ctor;  // (int code, String message)
  // RpmpException(INTERNAL) made at load time: the failure reported when the exception for
  // a failed call cannot be built (out of memory), so a failure never reads as success.
  jthrowable unbuildable_exception;
};
const JavaRefs& Refs();

// Builds (without throwing) the Java exception for a non-OK status, chosen by the
// table in jni_util.cc. Returns nullptr when even that fails (an OOM is then pending).
jthrowable MakeException(JNIEnv* env, const rpmp::Status& status);
// MakeException that never returns nullptr: when building fails it clears the pending
// error and returns it (e.g. the OutOfMemoryError), else the preallocated
// JavaRefs::unbuildable_exception. For completing futures: a failure stays a failure.
jthrowable MakeFailure(JNIEnv* env, const rpmp::Status& status);
// Throws the Java exception for a non-OK status; returns true when one was thrown.
bool ThrowIfError(JNIEnv* env, const rpmp::Status& status);

// UTF-8 bytes of a Java byte[] (Java side encodes Strings as UTF-8).
std::string ToString(JNIEnv* env, jbyteArray bytes);
jbyteArray ToByteArray(JNIEnv* env, const std::string& s);
jstring ToJavaString(JNIEnv* env, const std::string& s);

// The JNIEnv of the calling thread, attaching it to the JVM (as a daemon) on first use;
// the thread is detached when it exits. Returns nullptr when attaching fails.
JNIEnv* CurrentEnv();

// A JNI global reference whose release works from any thread (attaching it if needed).
class GlobalRef {
 public:
  GlobalRef(JNIEnv* env, jobject obj) : obj_(env->NewGlobalRef(obj)) {}
  ~GlobalRef();
  GlobalRef(const GlobalRef&) = delete;
  GlobalRef& operator=(const GlobalRef&) = delete;
  jobject get() const { return obj_; }

 private:
  jobject obj_;
};

// A librpmp callback that reports its Status to a Java io.rpmp.client.AsyncResult
// (onComplete(null) on success, onComplete(exception) otherwise), from whatever thread
// runs it. `after` (may be empty) runs first, on the same thread.
rpmp::Callback CompleteJava(JNIEnv* env, jobject async_result,
                            std::function<void()> after = nullptr);

// Throws RpmpException(INTERNAL) for a C++ exception that reached a JNI entry point.
void ThrowInternal(JNIEnv* env, const char* what);

}  // namespace rpmp_jni

// Wraps the body of every JNI entry point: no C++ exception crosses into the JVM.
#define RPMP_JNI_TRY try {
#define RPMP_JNI_CATCH(env, fail_value)                  \
  }                                                      \
  catch (const std::exception& e) {                      \
    rpmp_jni::ThrowInternal(env, e.what());              \
    return fail_value;                                   \
  }                                                      \
  catch (...) {                                          \
    rpmp_jni::ThrowInternal(env, "unknown C++ exception"); \
    return fail_value;                                   \
  }
