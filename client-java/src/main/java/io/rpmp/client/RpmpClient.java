// The Java client of RPMP through librpmp (JNI): one rpmp-server (connect) or a cluster
// through its rpmp-proxies (connectCluster: same methods, routed by placement). Holds the
// data calls (buffers, put/append, get, metadata, record reads, keys); admin() and
// rawMemory() hold the rest (also delegated to from here), NativeClient the handle, its
// guard and close(). Any thread may call any method; each instance owns its native client
// (no global state besides the loaded library). Natives: rpmp_client_jni.cc.
// Callers: applications and the Spark plugin.
package io.rpmp.client;

import static io.rpmp.client.NativeClient.utf8;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A connection to an rpmp-server. Blocking methods throw {@link RpmpException} subclasses;
 * asynchronous ones return futures completed (exceptionally with the same exceptions) on a
 * callback thread of this client. After {@link #close()} every method throws
 * IllegalStateException.
 */
public final class RpmpClient implements AutoCloseable {
  private static final int INITIAL_GET_BUFFER = 4096;

  private final NativeClient nc;
  private final RpmpAdmin admin;
  private final RpmpRawMemory rawMemory;

  private RpmpClient(NativeClient nc) {
    this.nc = nc;
    this.admin = new RpmpAdmin(nc);
    this.rawMemory = new RpmpRawMemory(nc);
  }

  /** Connects to "host:port"; RpmpUnavailableException when unreachable within the timeout. */
  public static RpmpClient connect(String server, RpmpClientOptions options)
      throws RpmpException {
    return new RpmpClient(NativeClient.connect(server, options));
  }

  /**
   * Cluster mode: connects through the rpmp-proxies "host:port[,host:port]" (empty: env
   * RPMP_PROXIES). Every method then routes by the namespace's placement, replicates and
   * fails over (see docs/cluster.md); namespaces are created on first write with
   * options.namespaceDefaults, or explicitly with {@link RpmpAdmin#createNamespace}.
   */
  public static RpmpClient connectCluster(String proxies, RpmpClientOptions options)
      throws RpmpException {
    return new RpmpClient(NativeClient.connectCluster(proxies, options));
  }

  /** Namespace administration, cluster counters and statistics of this client. */
  public RpmpAdmin admin() {
    return admin;
  }

  /** Raw memory (alloc/free/write/read by GlobalAddress) of this client. */
  public RpmpRawMemory rawMemory() {
    return rawMemory;
  }

  /** The server ("host:port"), or for a cluster client the proxy list it was given. */
  public String server() {
    return nc.server();
  }

  public long nodeId() {
    return nc.call(NativeClient::nativeNodeId);
  }

  // --- buffers -------------------------------------------------------------------------

  /** Registered memory of at least {@code size} bytes, size() 0. Close it when done. */
  public RpmpBuffer allocateBuffer(int size) throws RpmpException {
    return nc.allocBuffer(size);
  }

  /**
   * Like {@link #allocateBuffer(int)}, for puts and appends to namespace {@code ns}: in
   * cluster mode the memory belongs to the connection of ns's primary, so writing it there
   * moves no extra copy (memory of another server's connection is copied once).
   */
  public RpmpBuffer allocateBufferForWrite(String ns, int size) throws RpmpException {
    return nc.allocBufferForWrite(ns, size);
  }

  /** Buffers of this client not yet closed (leak checks in tests and metrics). */
  public int liveBufferCount() {
    return nc.liveBufferCount();
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
    nc.run(h -> nativeWriteBuffer(h, kind.code, utf8(ns), utf8(key), buf.handle(), buf.size(), tag));
  }

  private void writeByteBuffer(WriteKind kind, String ns, String key, ByteBuffer data, long tag)
      throws RpmpException {
    if (data.isDirect()) {
      nc.run(
          h ->
              nativeWriteDirect(
                  h, kind.code, utf8(ns), utf8(key), data, data.position(), data.remaining(), tag));
      return;
    }
    try (RpmpBuffer copy = nc.allocBufferForWrite(ns, data.remaining()).fill(data)) {
      writeBuffer(kind, ns, key, copy, tag);
    }
  }

  private CompletableFuture<Void> writeBufferAsync(
      WriteKind kind, String ns, String key, RpmpBuffer buf, long tag, Runnable cleanup) {
    AsyncResult<Void> result = nc.newResult(() -> null, cleanup);
    nc.start(
        result,
        h ->
            nativeWriteBufferAsync(
                h, kind.code, utf8(ns), utf8(key), buf.handle(), buf.size(), tag, result));
    return result.future;
  }

  private CompletableFuture<Void> copyThenWriteAsync(
      WriteKind kind, String ns, String key, ByteBuffer data, long tag) {
    RpmpBuffer copy;
    try {
      copy = nc.allocBufferForWrite(ns, data.remaining()).fill(data);
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
    nc.run(
        h -> {
          nativeGet(h, utf8(ns), utf8(key), out.handle());
          out.refreshView();
        });
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
        nc.newResult(
            () -> {
              out.refreshView();
              return out;
            },
            null);
    result.future.whenComplete(
        (v, e) -> {
          if (e != null) {
            out.close();
          }
        });
    nc.start(result, h -> nativeGetAsync(h, utf8(ns), utf8(key), out.handle(), result));
    return result.future;
  }

  public ObjectMeta getMeta(String ns, String key) throws RpmpException {
    return nc.call(h -> nativeGetMeta(h, utf8(ns), utf8(key)));
  }

  /**
   * getMeta listing only the records whose tag is one of {@code tags} (for example the map
   * attempts a Spark reader wants), in append order; {@link ObjectMeta#totalLength()} is still
   * the whole object's. The server filters (up to 4096 tags), so the listing costs what it
   * returns. An empty array lists every record.
   */
  public ObjectMeta getMetaOfTags(String ns, String key, long[] tags) throws RpmpException {
    if (tags == null) throw new NullPointerException("tags");
    return nc.call(h -> nativeGetMetaOfTags(h, utf8(ns), utf8(key), tags));
  }

  /**
   * Cluster clients only: getMeta answered by the replica {@code nodeId} (one of {@link
   * NamespaceInfo#replicaNodes()}), without failover to another; its records are read from that
   * replica. FAILED_PRECONDITION for a server-direct client.
   */
  public ObjectMeta getMeta(String ns, String key, long nodeId) throws RpmpException {
    return nc.call(h -> nativeGetMetaOnNode(h, utf8(ns), utf8(key), nodeId));
  }

  /**
   * Reads one record (from getMeta) into dst at dstOffset, checksum verified; sets size. When
   * the server's compaction moved the record since getMeta, the metadata is fetched again and
   * the record read from its new place (no error); RpmpCorruptionException when the record no
   * longer exists (overwritten or deleted since getMeta).
   */
  public void readRecord(RecordRef r, RpmpBuffer dst, int dstOffset) throws RpmpException {
    checkFits(r, dst, dstOffset);
    nc.run(
        h -> {
          nativeReadRecord(
              h, r.tag(), r.length(), r.crc(), r.pool(), r.rmaAddr(), r.rmaKey(), r.nodeId(),
              r.originNamespace(), r.originKey(), r.index(), dst.handle(), dstOffset);
          dst.growSizeTo((int) (dstOffset + r.length()));
        });
  }

  /** Reads one record into a new buffer the caller closes. */
  public RpmpBuffer readRecord(RecordRef r) throws RpmpException {
    RpmpBuffer dst = nc.allocBufferForRead(r.nodeId(), recordLength(r));
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
        nc.newResult(
            () -> {
              dst.growSizeTo((int) (dstOffset + r.length()));
              return null;
            },
            null);
    nc.start(
        result,
        h ->
            nativeReadRecordAsync(
                h, r.tag(), r.length(), r.crc(), r.pool(), r.rmaAddr(), r.rmaKey(), r.nodeId(),
                r.originNamespace(), r.originKey(), r.index(), dst.handle(), dstOffset, result));
    return result.future;
  }

  /** Asynchronous readRecord into a new buffer the caller closes. */
  public CompletableFuture<RpmpBuffer> readRecordAsync(RecordRef r) {
    RpmpBuffer dst;
    try {
      dst = nc.allocBufferForRead(r.nodeId(), recordLength(r));
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
                    : new CompletionException(e);
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

  // --- keys --------------------------------------------------------------------------------

  public void delete(String ns, String key) throws RpmpException {
    nc.run(h -> nativeDelete(h, utf8(ns), utf8(key)));
  }

  public List<KeyInfo> list(String ns) throws RpmpException {
    return list(ns, "", 0);
  }

  /** Keys of ns after startAfter, at most max of them (all when max is 0). */
  public List<KeyInfo> list(String ns, String startAfter, long max) throws RpmpException {
    KeyInfo[] keys = nc.call(h -> nativeList(h, utf8(ns), utf8(startAfter), max));
    return new ArrayList<>(Arrays.asList(keys));
  }

  /** Deletes ns and its keys (in cluster mode: admin().deleteNamespaces(ns, false)). */
  public void deleteNamespace(String ns) throws RpmpException {
    nc.run(h -> nativeDeleteNamespace(h, utf8(ns)));
  }

  // --- delegating to admin() and rawMemory(), for callers written before the split ----------

  /** {@link RpmpAdmin#isCluster}. */
  public boolean isCluster() {
    return admin.isCluster();
  }

  /** {@link RpmpAdmin#clusterCounters}. */
  public ClusterCounters clusterCounters() throws RpmpException {
    return admin.clusterCounters();
  }

  /** {@link RpmpAdmin#liveNodeSpace}. */
  public List<NodeSpace> liveNodeSpace() throws RpmpException {
    return admin.liveNodeSpace();
  }

  /** {@link RpmpAdmin#createNamespace}. */
  public NamespaceInfo createNamespace(String name, int replicas, int minReplicas, Duration ttl)
      throws RpmpException {
    return admin.createNamespace(name, replicas, minReplicas, ttl);
  }

  /** {@link RpmpAdmin#describeNamespace}. */
  public NamespaceInfo describeNamespace(String name) throws RpmpException {
    return admin.describeNamespace(name);
  }

  /** {@link RpmpAdmin#deleteNamespaces}. */
  public List<String> deleteNamespaces(String name, boolean recursive) throws RpmpException {
    return admin.deleteNamespaces(name, recursive);
  }

  /** {@link RpmpAdmin#touchNamespace}. */
  public void touchNamespace(String name) throws RpmpException {
    admin.touchNamespace(name);
  }

  /** {@link RpmpAdmin#stat}. */
  public ServerStats stat() throws RpmpException {
    return admin.stat();
  }

  /** {@link RpmpRawMemory#alloc}. */
  public GlobalAddress alloc(long size) throws RpmpException {
    return rawMemory.alloc(size);
  }

  /** {@link RpmpRawMemory#free}. */
  public void free(GlobalAddress a) throws RpmpException {
    rawMemory.free(a);
  }

  /** {@link RpmpRawMemory#write}. */
  public void write(GlobalAddress a, ByteBuffer src) throws RpmpException {
    rawMemory.write(a, src);
  }

  /** {@link RpmpRawMemory#read}. */
  public void read(GlobalAddress a, ByteBuffer dst) throws RpmpException {
    rawMemory.read(a, dst);
  }

  // --- lifecycle -----------------------------------------------------------------------------

  public boolean isClosed() {
    return nc.isClosed();
  }

  /**
   * Waits (up to the call timeout) for asynchronous calls, frees this client's buffers and the
   * native client. Futures still pending then fail with RpmpException(CANCELLED). Idempotent.
   */
  @Override
  public void close() {
    nc.close();
  }

  // --- natives (rpmp_client_jni.cc); kind is WriteKind.code ---------------------------------

  private static native void nativeWriteBuffer(
      long h, int kind, byte[] ns, byte[] key, long buf, long size, long tag)
      throws RpmpException;

  private static native void nativeWriteDirect(
      long h, int kind, byte[] ns, byte[] key, ByteBuffer data, long offset, long len, long tag)
      throws RpmpException;

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
}
