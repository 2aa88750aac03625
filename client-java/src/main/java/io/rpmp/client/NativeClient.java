// The native facade of one client: the librpmp client handle (native_client_jni.cc), the
// read/write lock that keeps it alive while a call uses it, the one guard every native
// call goes through (call), the registry of the client's RpmpBuffers and of its pending
// asynchronous calls, and close(). Package-private: RpmpClient, RpmpAdmin, RpmpRawMemory
// and RpmpBuffer call it; any thread may.
package io.rpmp.client;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

final class NativeClient {
  /** A native call given the live client handle (E: RpmpException, or none). */
  @FunctionalInterface
  interface Call<T, E extends Exception> {
    T apply(long handle) throws E;
  }

  /** A native call without a result. */
  @FunctionalInterface
  interface VoidCall<E extends Exception> {
    void apply(long handle) throws E;
  }

  private static final AtomicInteger CLIENT_IDS = new AtomicInteger();

  private final String server;
  private final long closeWaitMillis;
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final Set<RpmpBuffer> liveBuffers = ConcurrentHashMap.newKeySet();
  private final Set<AsyncResult<?>> pending = ConcurrentHashMap.newKeySet();
  private final ExecutorService callbackExecutor;
  private long handle;
  private volatile boolean closed;

  private NativeClient(String server, long handle, long closeWaitMillis) {
    this.server = server;
    this.handle = handle;
    this.closeWaitMillis = closeWaitMillis;
    String threadName = "rpmp-callback-" + CLIENT_IDS.incrementAndGet();
    this.callbackExecutor =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, threadName);
              t.setDaemon(true);
              return t;
            });
  }

  static NativeClient connect(String server, RpmpClientOptions o) throws RpmpException {
    NativeLoader.load();
    long h =
        nativeConnect(
            utf8(server), utf8(o.provider()), o.timeout().toMillis(), utf8(o.name()),
            o.bufferCacheBytes(), o.maxInflight(), o.connections(), o.secret(), utf8(o.token()));
    return new NativeClient(server, h, o.timeout().toMillis());
  }

  static NativeClient connectCluster(String proxies, RpmpClientOptions o) throws RpmpException {
    NativeLoader.load();
    long h =
        nativeConnectCluster(
            utf8(proxies), utf8(o.provider()), o.timeout().toMillis(), utf8(o.name()),
            o.bufferCacheBytes(), o.maxInflight(), o.connections(), o.retryFor().toMillis(),
            o.proxyTimeout().toMillis(), o.defaultReplicas(), o.defaultMinReplicas(),
            o.defaultTtl().getSeconds(), o.secret(), utf8(o.token()));
    // Calls may retry for retryFor: close() waits that long for async calls too.
    return new NativeClient(proxies, h, Math.max(o.timeout().toMillis(), o.retryFor().toMillis()));
  }

  String server() {
    return server;
  }

  /**
   * The guard of every native call: runs fn with the handle under the read lock, so close()
   * (write lock) never frees the native client while a call uses it. IllegalStateException
   * once the client is closed.
   */
  <T, E extends Exception> T call(Call<T, E> fn) throws E {
    lock.readLock().lock();
    try {
      if (closed) {
        throw new IllegalStateException("RpmpClient for " + server + " is closed");
      }
      return fn.apply(handle);
    } finally {
      lock.readLock().unlock();
    }
  }

  /** {@link #call} for a native without a result. */
  <E extends Exception> void run(VoidCall<E> fn) throws E {
    call(
        h -> {
          fn.apply(h);
          return null;
        });
  }

  /**
   * Starts an asynchronous native call through {@link #call}: when the native throws instead
   * of starting it (a checked RpmpException too, which natives may throw undeclared), the
   * future fails with that; Errors are rethrown as well. IllegalStateException once closed.
   */
  void start(AsyncResult<?> result, VoidCall<RpmpException> fn) {
    run(
        h -> {
          try {
            fn.apply(h);
          } catch (Throwable t) {
            result.finish(t);
            if (t instanceof Error) {
              throw (Error) t;
            }
          }
        });
  }

  // --- buffers -----------------------------------------------------------------------------

  RpmpBuffer allocBuffer(int size) throws RpmpException {
    checkSize(size);
    return call(h -> track(nativeAllocBuffer(h, size)));
  }

  RpmpBuffer allocBufferForWrite(String ns, int size) throws RpmpException {
    checkSize(size);
    return call(h -> track(nativeAllocBufferForWrite(h, utf8(ns), size)));
  }

  RpmpBuffer allocBufferForRead(long nodeId, int size) throws RpmpException {
    checkSize(size);
    return call(h -> track(nativeAllocBufferForRead(h, nodeId, size)));
  }

  private static void checkSize(int size) {
    if (size < 0) {
      throw new IllegalArgumentException("negative size " + size);
    }
  }

  private RpmpBuffer track(long bufferHandle) {
    RpmpBuffer b = new RpmpBuffer(this, bufferHandle);
    liveBuffers.add(b);
    return b;
  }

  /**
   * Frees a buffer of this client. Under the read lock, so close() (write lock) either frees it
   * itself before or sees it gone: a buffer is never freed after the native client is closed.
   */
  void release(RpmpBuffer buffer) {
    lock.readLock().lock();
    try {
      if (liveBuffers.remove(buffer)) {
        buffer.freeNative(); // else already freed, possibly by close()
      }
    } finally {
      lock.readLock().unlock();
    }
  }

  int liveBufferCount() {
    return liveBuffers.size();
  }

  // --- asynchronous calls -------------------------------------------------------------------

  /** A pending call whose future completes on this client's callback executor. */
  <T> AsyncResult<T> newResult(Supplier<T> onSuccess, Runnable cleanup) {
    AsyncResult<T> r = new AsyncResult<>(callbackExecutor, onSuccess, cleanup);
    pending.add(r);
    r.future.whenComplete((v, e) -> pending.remove(r));
    return r;
  }

  // --- lifecycle ----------------------------------------------------------------------------

  boolean isClosed() {
    return closed;
  }

  /** See RpmpClient.close(). */
  void close() {
    lock.writeLock().lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
    } finally {
      lock.writeLock().unlock();
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(closeWaitMillis + 1000);
    for (AsyncResult<?> r : pending.toArray(new AsyncResult<?>[0])) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        break;
      }
      try {
        r.future.handle((v, e) -> null).get(left, TimeUnit.NANOSECONDS);
      } catch (Exception ignored) {
        // timed out or interrupted: give up waiting, fail it below
      }
    }
    lock.writeLock().lock();
    try {
      for (RpmpBuffer b : liveBuffers.toArray(new RpmpBuffer[0])) {
        if (liveBuffers.remove(b)) {
          b.freeNative();
        }
      }
      nativeClose(handle);
      handle = 0;
    } finally {
      lock.writeLock().unlock();
    }
    RpmpException cancelled = new RpmpException(RpmpException.CANCELLED, "client closed");
    for (AsyncResult<?> r : pending) {
      r.finish(cancelled);
    }
    callbackExecutor.shutdown();
  }

  static byte[] utf8(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  // --- natives (native_client_jni.cc) --------------------------------------------------------

  private static native long nativeConnect(
      byte[] server, byte[] provider, long timeoutMs, byte[] name, long bufferCacheBytes,
      int maxInflight, int connections, byte[] secret, byte[] token) throws RpmpException;

  private static native long nativeConnectCluster(
      byte[] proxies, byte[] provider, long timeoutMs, byte[] name, long bufferCacheBytes,
      int maxInflight, int connections, long retryForMs, long proxyTimeoutMs, int replicas, int minReplicas,
      long ttlSeconds, byte[] secret, byte[] token) throws RpmpException;

  private static native void nativeClose(long h);

  static native long nativeNodeId(long h);

  private static native long nativeAllocBuffer(long h, long size) throws RpmpException;

  private static native long nativeAllocBufferForWrite(long h, byte[] ns, long size)
      throws RpmpException;

  private static native long nativeAllocBufferForRead(long h, long nodeId, long size)
      throws RpmpException;
}
