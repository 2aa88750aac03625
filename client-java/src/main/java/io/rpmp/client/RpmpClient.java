// The Java client of RPMP through librpmp (JNI): one connection to one rpmp-server
// (connect), or to a whole cluster through its rpmp-proxies (connectCluster: same
// methods, routed by each namespace's placement, plus namespace admin).
// Any thread may call any method; each instance owns its native client (no global
// state besides the loaded library). Callers: applications and the Spark plugin.
package io.rpmp.client;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

/**
 * A connection to an rpmp-server. Blocking methods throw {@link RpmpException} subclasses;
 * asynchronous ones return futures completed (exceptionally with the same exceptions) on a
 * callback thread of this client. After {@link #close()} every method throws
 * IllegalStateException.
 */
public final class RpmpClient implements AutoCloseable {
  private static final AtomicInteger CLIENT_IDS = new AtomicInteger();
  private static final int INITIAL_GET_BUFFER = 4096;

  private final String server;
  private final long timeoutMillis;
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
  private final Set<RpmpBuffer> liveBuffers = ConcurrentHashMap.newKeySet();
  private final Set<AsyncResult<?>> pending = ConcurrentHashMap.newKeySet();
  private final ExecutorService callbackExecutor;
  private long handle;
  private volatile boolean closed;

  private RpmpClient(String server, long handle, long timeoutMillis) {
    this.server = server;
    this.handle = handle;
    this.timeoutMillis = timeoutMillis;
    String threadName = "rpmp-callback-" + CLIENT_IDS.incrementAndGet();
    this.callbackExecutor =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, threadName);
              t.setDaemon(true);
              return t;
            });
  }

  /** Connects to "host:port"; RpmpUnavailableException when unreachable within the timeout. */
  public static RpmpClient connect(String server, RpmpClientOptions options)
      throws RpmpException {
    NativeLoader.load();
    long h =
        nativeConnect(
            utf8(server),
            utf8(options.provider()),
            options.timeout().toMillis(),
            utf8(options.name()),
            options.bufferCacheBytes(),
            options.maxInflight(),
            options.secret());
    return new RpmpClient(server, h, options.timeout().toMillis());
  }

  /**
   * Cluster mode: connects through the rpmp-proxies "host:port[,host:port]" (empty: env
   * RPMP_PROXIES). Every method then routes by the namespace's placement, replicates and
   * fails over (see docs/cluster.md); namespaces are created on first write with
   * options.namespaceDefaults, or explicitly with {@link #createNamespace}.
   */
  public static RpmpClient connectCluster(String proxies, RpmpClientOptions options)
      throws RpmpException {
    NativeLoader.load();
    long h =
        nativeConnectCluster(
            utf8(proxies),
            utf8(options.provider()),
            options.timeout().toMillis(),
            utf8(options.name()),
            options.bufferCacheBytes(),
            options.maxInflight(),
            options.retryFor().toMillis(),
            options.proxyTimeout().toMillis(),
            options.defaultReplicas(),
            options.defaultMinReplicas(),
            options.defaultTtl().getSeconds(),
            options.secret());
    // Calls may retry for retryFor: close() waits that long for async calls too.
    long wait = Math.max(options.timeout().toMillis(), options.retryFor().toMillis());
    return new RpmpClient(proxies, h, wait);
  }

  /** The server ("host:port"), or for a cluster client the proxy list it was given. */
  public String server() {
    return server;
  }

  public long nodeId() {
    long h = enter();
    try {
      return nativeNodeId(h);
    } finally {
      exit();
    }
  }

  // --- buffers -------------------------------------------------------------------------

  /** Registered memory of at least {@code size} bytes, size() 0. Close it when done. */
  public RpmpBuffer allocateBuffer(int size) throws RpmpException {
    if (size < 0) {
      throw new IllegalArgumentException("negative size " + size);
    }
    long h = enter();
    try {
      return track(nativeAllocBuffer(h, size));
    } finally {
      exit();
    }
  }

  /**
   * Like {@link #allocateBuffer(int)}, for puts and appends to namespace {@code ns}: in
   * cluster mode the memory belongs to the connection of ns's primary, so writing it there
   * moves no extra copy (memory of another server's connection is copied once).
   */
  public RpmpBuffer allocateBufferForWrite(String ns, int size) throws RpmpException {
    if (size < 0) {
      throw new IllegalArgumentException("negative size " + size);
    }
    long h = enter();
    try {
      return track(nativeAllocBufferForWrite(h, utf8(ns), size));
    } finally {
      exit();
    }
  }

  private RpmpBuffer track(long handle) {
    RpmpBuffer b = new RpmpBuffer(this, handle);
    liveBuffers.add(b);
    return b;
  }

  /** A buffer for a one-sided read of r: memory of the connection to r's node when known. */
  private RpmpBuffer allocateBufferForRead(RecordRef r, int size) throws RpmpException {
    long h = enter();
    try {
      return track(nativeAllocBufferForRead(h, r.nodeId(), size));
    } finally {
      exit();
    }
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

  /** Buffers of this client not yet closed (leak checks in tests and metrics). */
  public int liveBufferCount() {
    return liveBuffers.size();
  }

  /** Copies src's remaining bytes (position unchanged) into a new pool buffer. */
  private RpmpBuffer copyToBuffer(ByteBuffer src) throws RpmpException {
    return fill(allocateBuffer(src.remaining()), src);
  }

  /** Like copyToBuffer, in memory of the connection that writes to ns (cluster mode). */
  private RpmpBuffer copyToBufferForWrite(String ns, ByteBuffer src) throws RpmpException {
    return fill(allocateBufferForWrite(ns, src.remaining()), src);
  }

  private static RpmpBuffer fill(RpmpBuffer b, ByteBuffer src) {
    ByteBuffer dst = b.byteBuffer().duplicate();
    dst.clear();
    dst.put(src.duplicate());
    b.setSize(src.remaining());
    return b;
  }

  // --- put / append ----------------------------------------------------------------------

  /** Replaces (ns, key) with buf's first size() bytes, without copying them. */
  public void put(String ns, String key, RpmpBuffer buf, long tag) throws RpmpException {
    writeBuffer(WriteKind.PUT, ns, key, buf, tag);
  }

  public void put(String ns, String key, RpmpBuffer buf) throws RpmpException {
    writeBuffer(WriteKind.PUT, ns, key, buf, 0);
  }

  /** Replaces (ns, key) with data's remaining bytes (position unchanged); copies them. */
  public void put(String ns, String key, ByteBuffer data, long tag) throws RpmpException {
    writeByteBuffer(WriteKind.PUT, ns, key, data, tag);
  }

  public void put(String ns, String key, ByteBuffer data) throws RpmpException {
    writeByteBuffer(WriteKind.PUT, ns, key, data, 0);
  }

  public void put(String ns, String key, byte[] data) throws RpmpException {
    writeByteBuffer(WriteKind.PUT, ns, key, ByteBuffer.wrap(data), 0);
  }

  /** Adds buf's first size() bytes as one record tagged {@code tag}, without copying. */
  public void append(String ns, String key, RpmpBuffer buf, long tag) throws RpmpException {
    writeBuffer(WriteKind.APPEND, ns, key, buf, tag);
  }

  /** Adds data's remaining bytes (position unchanged) as one record; copies them. */
  public void append(String ns, String key, ByteBuffer data, long tag) throws RpmpException {
    writeByteBuffer(WriteKind.APPEND, ns, key, data, tag);
  }

  public void append(String ns, String key, byte[] data, long tag) throws RpmpException {
    writeByteBuffer(WriteKind.APPEND, ns, key, ByteBuffer.wrap(data), tag);
  }

  /** Zero-copy put; buf must stay untouched (and open) until the future completes. */
  public CompletableFuture<Void> putAsync(String ns, String key, RpmpBuffer buf, long tag) {
    return writeBufferAsync(WriteKind.PUT, ns, key, buf, tag, null);
  }

  /** Zero-copy append; buf must stay untouched (and open) until the future completes. */
  public CompletableFuture<Void> appendAsync(String ns, String key, RpmpBuffer buf, long tag) {
    return writeBufferAsync(WriteKind.APPEND, ns, key, buf, tag, null);
  }

  /** Copying put: data may be reused as soon as this returns. */
  public CompletableFuture<Void> putAsync(String ns, String key, ByteBuffer data, long tag) {
    return copyThenWriteAsync(WriteKind.PUT, ns, key, data, tag);
  }

  /** Copying append: data may be reused as soon as this returns. */
  public CompletableFuture<Void> appendAsync(String ns, String key, ByteBuffer data, long tag) {
    return copyThenWriteAsync(WriteKind.APPEND, ns, key, data, tag);
  }

  private void writeBuffer(WriteKind kind, String ns, String key, RpmpBuffer buf, long tag)
      throws RpmpException {
    long h = enter();
    try {
      nativeWriteBuffer(h, kind.code, utf8(ns), utf8(key), buf.handle(), buf.size(), tag);
    } finally {
      exit();
    }
  }

  private void writeByteBuffer(WriteKind kind, String ns, String key, ByteBuffer data, long tag)
      throws RpmpException {
    if (data.isDirect()) {
      long h = enter();
      try {
        nativeWriteDirect(
            h, kind.code, utf8(ns), utf8(key), data, data.position(), data.remaining(), tag);
      } finally {
        exit();
      }
      return;
    }
    try (RpmpBuffer copy = copyToBufferForWrite(ns, data)) {
      writeBuffer(kind, ns, key, copy, tag);
    }
  }

  private CompletableFuture<Void> writeBufferAsync(
      WriteKind kind, String ns, String key, RpmpBuffer buf, long tag, Runnable cleanup) {
    AsyncResult<Void> result = newResult(() -> null, cleanup);
    long h = enter();
    try {
      nativeWriteBufferAsync(
          h, kind.code, utf8(ns), utf8(key), buf.handle(), buf.size(), tag, result);
    } catch (Throwable t) {
      failStarted(result, t);
    } finally {
      exit();
    }
    return result.future;
  }

  private CompletableFuture<Void> copyThenWriteAsync(
      WriteKind kind, String ns, String key, ByteBuffer data, long tag) {
    RpmpBuffer copy;
    try {
      copy = copyToBufferForWrite(ns, data);
    } catch (RpmpException e) {
      return CompletableFuture.failedFuture(e);
    }
    return writeBufferAsync(kind, ns, key, copy, tag, copy::close);
  }

  // --- get / meta / records -------------------------------------------------------------

  /** All records of (ns, key), concatenated, in a new buffer the caller closes. */
  public RpmpBuffer get(String ns, String key) throws RpmpException {
    RpmpBuffer out = allocateBuffer(INITIAL_GET_BUFFER);
    try {
      get(ns, key, out);
      return out;
    } catch (RpmpException | RuntimeException e) {
      out.close();
      throw e;
    }
  }

  /** Fills out (grown when too small; out.byteBuffer() may then be a new object). */
  public void get(String ns, String key, RpmpBuffer out) throws RpmpException {
    long h = enter();
    try {
      nativeGet(h, utf8(ns), utf8(key), out.handle());
      out.refreshView();
    } finally {
      exit();
    }
  }

  public byte[] getBytes(String ns, String key) throws RpmpException {
    try (RpmpBuffer b = get(ns, key)) {
      return b.toByteArray();
    }
  }

  /** The value in a new buffer the caller closes. */
  public CompletableFuture<RpmpBuffer> getAsync(String ns, String key) {
    RpmpBuffer out;
    try {
      out = allocateBuffer(INITIAL_GET_BUFFER);
    } catch (RpmpException e) {
      return CompletableFuture.failedFuture(e);
    }
    AsyncResult<RpmpBuffer> result =
        newResult(
            () -> {
              out.refreshView();
              return out;
            },
            null);
    result.future.whenComplete((v, e) -> {
      if (e != null) {
        out.close();
      }
    });
    long h = enter();
    try {
      nativeGetAsync(h, utf8(ns), utf8(key), out.handle(), result);
    } catch (Throwable t) {
      failStarted(result, t);
    } finally {
      exit();
    }
    return result.future;
  }

  public ObjectMeta getMeta(String ns, String key) throws RpmpException {
    long h = enter();
    try {
      return nativeGetMeta(h, utf8(ns), utf8(key));
    } finally {
      exit();
    }
  }

  /**
   * getMeta listing only the records whose tag is one of {@code tags} (for example the map
   * attempts a Spark reader wants), in append order; {@link ObjectMeta#totalLength()} is still
   * the whole object's. The server filters (up to 4096 tags), so the listing costs what it
   * returns. An empty array lists every record.
   */
  public ObjectMeta getMetaOfTags(String ns, String key, long[] tags) throws RpmpException {
    if (tags == null) throw new NullPointerException("tags");
    long h = enter();
    try {
      return nativeGetMetaOfTags(h, utf8(ns), utf8(key), tags);
    } finally {
      exit();
    }
  }

  /**
   * Cluster clients only: getMeta answered by the replica {@code nodeId} (one of {@link
   * NamespaceInfo#replicaNodes()}), without failover to another; its records are read from that
   * replica. FAILED_PRECONDITION for a server-direct client.
   */
  public ObjectMeta getMeta(String ns, String key, long nodeId) throws RpmpException {
    long h = enter();
    try {
      return nativeGetMetaOnNode(h, utf8(ns), utf8(key), nodeId);
    } finally {
      exit();
    }
  }

  /**
   * Reads one record (from getMeta) into dst at dstOffset, checksum verified; sets size. When
   * the server's compaction moved the record since getMeta, the metadata is fetched again and
   * the record read from its new place (no error); RpmpCorruptionException when the record no
   * longer exists (overwritten or deleted since getMeta).
   */
  public void readRecord(RecordRef r, RpmpBuffer dst, int dstOffset) throws RpmpException {
    checkFits(r, dst, dstOffset);
    long h = enter();
    try {
      nativeReadRecord(
          h, r.tag(), r.length(), r.crc(), r.pool(), r.rmaAddr(), r.rmaKey(), r.nodeId(),
          r.originNamespace(), r.originKey(), r.index(), dst.handle(), dstOffset);
      dst.setSize((int) Math.max(dst.size(), dstOffset + r.length()));
    } finally {
      exit();
    }
  }

  /** Reads one record into a new buffer the caller closes. */
  public RpmpBuffer readRecord(RecordRef r) throws RpmpException {
    RpmpBuffer dst = allocateBufferForRead(r, recordLength(r));
    try {
      readRecord(r, dst, 0);
      return dst;
    } catch (RpmpException | RuntimeException e) {
      dst.close();
      throw e;
    }
  }

  /** Asynchronous readRecord into dst, which must stay open until the future completes. */
  public CompletableFuture<Void> readRecordAsync(RecordRef r, RpmpBuffer dst, int dstOffset) {
    checkFits(r, dst, dstOffset);
    AsyncResult<Void> result =
        newResult(
            () -> {
              dst.setSize((int) Math.max(dst.size(), dstOffset + r.length()));
              return null;
            },
            null);
    long h = enter();
    try {
      nativeReadRecordAsync(
          h, r.tag(), r.length(), r.crc(), r.pool(), r.rmaAddr(), r.rmaKey(), r.nodeId(),
          r.originNamespace(), r.originKey(), r.index(), dst.handle(), dstOffset, result);
    } catch (Throwable t) {
      failStarted(result, t);
    } finally {
      exit();
    }
    return result.future;
  }

  /** Asynchronous readRecord into a new buffer the caller closes. */
  public CompletableFuture<RpmpBuffer> readRecordAsync(RecordRef r) {
    RpmpBuffer dst;
    try {
      dst = allocateBufferForRead(r, recordLength(r));
    } catch (RpmpException e) {
      return CompletableFuture.failedFuture(e);
    }
    return readRecordAsync(r, dst, 0)
        .handle(
            (v, e) -> {
              if (e != null) {
                dst.close();
                throw e instanceof RuntimeException
                    ? (RuntimeException) e
                    : new java.util.concurrent.CompletionException(e);
              }
              return dst;
            });
  }

  private static int recordLength(RecordRef r) {
    if (r.length() > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("record too large for one buffer: " + r.length());
    }
    return (int) r.length();
  }

  private static void checkFits(RecordRef r, RpmpBuffer dst, int dstOffset) {
    if (dstOffset < 0 || dstOffset + r.length() > dst.capacity()) {
      throw new IllegalArgumentException(
          "record of " + r.length() + " bytes does not fit at offset " + dstOffset
              + " of a buffer of " + dst.capacity());
    }
  }

  // --- keys and namespaces --------------------------------------------------------------

  public void delete(String ns, String key) throws RpmpException {
    long h = enter();
    try {
      nativeDelete(h, utf8(ns), utf8(key));
    } finally {
      exit();
    }
  }

  public List<KeyInfo> list(String ns) throws RpmpException {
    return list(ns, "", 0);
  }

  /** Keys of ns after startAfter, at most max of them (all when max is 0). */
  public List<KeyInfo> list(String ns, String startAfter, long max) throws RpmpException {
    long h = enter();
    try {
      return new ArrayList<>(Arrays.asList(nativeList(h, utf8(ns), utf8(startAfter), max)));
    } finally {
      exit();
    }
  }

  public void deleteNamespace(String ns) throws RpmpException {
    long h = enter();
    try {
      nativeDeleteNamespace(h, utf8(ns));
    } finally {
      exit();
    }
  }

  // --- cluster namespace admin (connectCluster clients only) ------------------------------

  /** True for a client made by connectCluster. */
  public boolean isCluster() {
    long h = enter();
    try {
      return nativeIsCluster(h);
    } finally {
      exit();
    }
  }

  /**
   * Counters of this cluster client since it connected (cluster mode only; else
   * FAILED_PRECONDITION): connections to rpmp-servers opened, writes and reads moved through
   * one extra copy because their buffer belonged to another server's connection (and their
   * bytes), and calls sent again after a failover answer.
   */
  public ClusterCounters clusterCounters() throws RpmpException {
    long h = enter();
    try {
      long[] v = nativeClusterCounters(h);
      return new ClusterCounters(v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
    } finally {
      exit();
    }
  }

  /**
   * Space of each LIVE node as the proxy's node map holds it (from the nodes' heartbeats):
   * one proxy call, no server asked. Cluster clients only (FAILED_PRECONDITION otherwise).
   */
  public List<NodeSpace> liveNodeSpace() throws RpmpException {
    long h = enter();
    try {
      long[] v = nativeLiveNodeSpace(h);
      List<NodeSpace> out = new ArrayList<>(v.length / 3);
      for (int i = 0; i + 2 < v.length; i += 3) out.add(new NodeSpace(v[i], v[i + 1], v[i + 2]));
      return out;
    } finally {
      exit();
    }
  }

  /**
   * Creates namespace {@code name} with {@code replicas} copies, writes acknowledged after
   * {@code minReplicas} (0 = replicas) and expiry after {@code ttl} untouched (ZERO = never).
   * Idempotent for equal options; RpmpException ALREADY_EXISTS for different ones,
   * FAILED_PRECONDITION when fewer nodes are live than replicas. Cluster clients only
   * (FAILED_PRECONDITION otherwise).
   */
  public NamespaceInfo createNamespace(String name, int replicas, int minReplicas, Duration ttl)
      throws RpmpException {
    if (replicas < 1 || minReplicas < 0 || minReplicas > replicas) {
      throw new IllegalArgumentException(
          "replicas " + replicas + ", minReplicas " + minReplicas);
    }
    long h = enter();
    try {
      return NamespaceInfo.fromNative(
          name, nativeCreateNamespace(h, utf8(name), replicas, minReplicas, ttl.getSeconds()));
    } finally {
      exit();
    }
  }

  /** Options and placement of a namespace; RpmpNotFoundException when there is none. */
  public NamespaceInfo describeNamespace(String name) throws RpmpException {
    long h = enter();
    try {
      return NamespaceInfo.fromNative(name, nativeDescribeNamespace(h, utf8(name)));
    } finally {
      exit();
    }
  }

  /**
   * Deletes namespace {@code name} and, with {@code recursive}, every {@code name/...}, on
   * every node holding them; returns the names deleted. RpmpNotFoundException when no
   * namespace matched.
   */
  public List<String> deleteNamespaces(String name, boolean recursive) throws RpmpException {
    long h = enter();
    try {
      byte[][] names = nativeDeleteNamespaces(h, utf8(name), recursive);
      List<String> out = new ArrayList<>(names.length);
      for (byte[] n : names) {
        out.add(new String(n, StandardCharsets.UTF_8));
      }
      return out;
    } finally {
      exit();
    }
  }

  /** Resets a namespace's ttl clock. */
  public void touchNamespace(String name) throws RpmpException {
    long h = enter();
    try {
      nativeTouchNamespace(h, utf8(name));
    } finally {
      exit();
    }
  }

  public ServerStats stat() throws RpmpException {
    long h = enter();
    try {
      return nativeStat(h);
    } finally {
      exit();
    }
  }

  // --- raw memory --------------------------------------------------------------------------

  public GlobalAddress alloc(long size) throws RpmpException {
    long h = enter();
    try {
      return nativeAlloc(h, size);
    } finally {
      exit();
    }
  }

  public void free(GlobalAddress a) throws RpmpException {
    long h = enter();
    try {
      nativeFree(h, a.nodeId(), a.pool(), a.offset());
    } finally {
      exit();
    }
  }

  /** Writes src's remaining bytes (position unchanged) at a; heap buffers are copied first. */
  public void write(GlobalAddress a, ByteBuffer src) throws RpmpException {
    if (!src.isDirect()) {
      try (RpmpBuffer copy = copyToBuffer(src)) {
        write(a, copy.contents());
      }
      return;
    }
    long h = enter();
    try {
      nativeRawWrite(h, a.nodeId(), a.pool(), a.offset(), src, src.position(), src.remaining());
    } finally {
      exit();
    }
  }

  /** Fills dst's remaining bytes (position unchanged) from a. */
  public void read(GlobalAddress a, ByteBuffer dst) throws RpmpException {
    if (!dst.isDirect()) {
      try (RpmpBuffer tmp = allocateBuffer(dst.remaining())) {
        tmp.setSize(dst.remaining());
        read(a, tmp.contents());
        dst.duplicate().put(tmp.contents());
      }
      return;
    }
    long h = enter();
    try {
      nativeRawRead(h, a.nodeId(), a.pool(), a.offset(), dst, dst.position(), dst.remaining());
    } finally {
      exit();
    }
  }

  // --- lifecycle -----------------------------------------------------------------------------

  public boolean isClosed() {
    return closed;
  }

  /**
   * Waits (up to the call timeout) for asynchronous calls, frees this client's buffers and the
   * native client. Futures still pending then fail with RpmpException(CANCELLED). Idempotent.
   */
  @Override
  public void close() {
    lock.writeLock().lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
    } finally {
      lock.writeLock().unlock();
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis + 1000);
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

  /**
   * An async native threw instead of starting the call (a checked RpmpException too, which
   * natives may throw undeclared): the future fails with it. Errors are rethrown as well.
   */
  private static void failStarted(AsyncResult<?> result, Throwable t) {
    result.finish(t);
    if (t instanceof Error) {
      throw (Error) t;
    }
  }

  private <T> AsyncResult<T> newResult(Supplier<T> onSuccess, Runnable cleanup) {
    AsyncResult<T> r = new AsyncResult<>(callbackExecutor, onSuccess, cleanup);
    pending.add(r);
    r.future.whenComplete((v, e) -> pending.remove(r));
    return r;
  }

  private long enter() {
    lock.readLock().lock();
    if (closed) {
      lock.readLock().unlock();
      throw new IllegalStateException("RpmpClient for " + server + " is closed");
    }
    return handle;
  }

  private void exit() {
    lock.readLock().unlock();
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  // --- native methods (rpmp_client_jni.cc) ---------------------------------------------------

  private static native long nativeConnect(
      byte[] server, byte[] provider, long timeoutMs, byte[] name, long bufferCacheBytes,
      int maxInflight, byte[] secret) throws RpmpException;

  private static native long nativeConnectCluster(
      byte[] proxies, byte[] provider, long timeoutMs, byte[] name, long bufferCacheBytes,
      int maxInflight, long retryForMs, long proxyTimeoutMs, int replicas, int minReplicas,
      long ttlSeconds, byte[] secret) throws RpmpException;

  private static native void nativeClose(long h);

  private static native long nativeNodeId(long h);

  private static native long nativeAllocBuffer(long h, long size) throws RpmpException;

  private static native long nativeAllocBufferForWrite(long h, byte[] ns, long size)
      throws RpmpException;

  private static native long nativeAllocBufferForRead(long h, long nodeId, long size)
      throws RpmpException;

  private static native void nativeWriteBuffer(
      long h, int kind, byte[] ns, byte[] key, long buf, long size, long tag)
      throws RpmpException;

  private static native void nativeWriteDirect(
      long h, int kind, byte[] ns, byte[] key, ByteBuffer data, long offset, long len,
      long tag) throws RpmpException;

  private static native void nativeWriteBufferAsync(
      long h, int kind, byte[] ns, byte[] key, long buf, long size, long tag,
      AsyncResult<?> result);

  private static native long nativeGet(long h, byte[] ns, byte[] key, long buf)
      throws RpmpException;

  private static native void nativeGetAsync(
      long h, byte[] ns, byte[] key, long buf, AsyncResult<?> result);

  private static native ObjectMeta nativeGetMeta(long h, byte[] ns, byte[] key)
      throws RpmpException;

  private static native ObjectMeta nativeGetMetaOfTags(long h, byte[] ns, byte[] key, long[] tags)
      throws RpmpException;

  private static native ObjectMeta nativeGetMetaOnNode(long h, byte[] ns, byte[] key, long node)
      throws RpmpException;

  private static native void nativeReadRecord(
      long h, long tag, long length, int crc, int pool, long rmaAddr, long rmaKey, long nodeId,
      byte[] ns, byte[] key, int index, long buf, long dstOffset) throws RpmpException;

  private static native void nativeReadRecordAsync(
      long h, long tag, long length, int crc, int pool, long rmaAddr, long rmaKey, long nodeId,
      byte[] ns, byte[] key, int index, long buf, long dstOffset, AsyncResult<?> result);

  private static native void nativeDelete(long h, byte[] ns, byte[] key) throws RpmpException;

  private static native KeyInfo[] nativeList(long h, byte[] ns, byte[] startAfter, long max)
      throws RpmpException;

  private static native void nativeDeleteNamespace(long h, byte[] ns) throws RpmpException;

  private static native ServerStats nativeStat(long h) throws RpmpException;

  private static native boolean nativeIsCluster(long h);

  private static native long[] nativeClusterCounters(long h) throws RpmpException;

  private static native long[] nativeLiveNodeSpace(long h) throws RpmpException;

  private static native long[] nativeCreateNamespace(
      long h, byte[] name, int replicas, int minReplicas, long ttlSeconds) throws RpmpException;

  private static native long[] nativeDescribeNamespace(long h, byte[] name)
      throws RpmpException;

  private static native byte[][] nativeDeleteNamespaces(long h, byte[] name, boolean recursive)
      throws RpmpException;

  private static native void nativeTouchNamespace(long h, byte[] name) throws RpmpException;

  private static native GlobalAddress nativeAlloc(long h, long size) throws RpmpException;

  private static native void nativeFree(long h, long node, int pool, long offset)
      throws RpmpException;

  private static native void nativeRawWrite(
      long h, long node, int pool, long offset, ByteBuffer src, long srcOffset, long len)
      throws RpmpException;

  private static native void nativeRawRead(
      long h, long node, int pool, long offset, ByteBuffer dst, long dstOffset, long len)
      throws RpmpException;
}
