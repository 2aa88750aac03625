// Bridge from a librpmp callback to a CompletableFuture. Native code (jni_util.cc)
// calls onComplete on librpmp's progress thread; the future is completed on the
// client's callback executor so user continuations never run on (or block) that thread.
package io.rpmp.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

/** One pending asynchronous call of an RpmpClient. Package-private plumbing. */
final class AsyncResult<T> {
  final CompletableFuture<T> future = new CompletableFuture<>();
  private final Executor executor;
  private final Supplier<T> onSuccess;
  private final Runnable cleanup;

  /**
   * @param onSuccess gives the value on success (runs on the executor)
   * @param cleanup runs after success or failure, before the future completes (may be null)
   */
  AsyncResult(Executor executor, Supplier<T> onSuccess, Runnable cleanup) {
    this.executor = executor;
    this.onSuccess = onSuccess;
    this.cleanup = cleanup;
  }

  /** Called from native code exactly once: error is null on success. */
  void onComplete(Throwable error) {
    try {
      executor.execute(() -> finish(error));
    } catch (RuntimeException rejected) {
      finish(error); // executor shut down (client closing): finish here, it is short
    }
  }

  void finish(Throwable error) {
    if (future.isDone()) {
      return;
    }
    try {
      if (cleanup != null) {
        cleanup.run();
      }
      if (error != null) {
        future.completeExceptionally(error);
      } else {
        future.complete(onSuccess.get());
      }
    } catch (Throwable t) {
      future.completeExceptionally(t);
    }
  }
}
