// Raw memory of an RpmpClient (RpmpClient.rawMemory()): allocate, free, write and read
// byte ranges of a server's pool by GlobalAddress, outside any namespace (C++'s
// Client::Alloc/Free/Write/Read). In cluster mode each call goes to the node the address
// names. Natives: rpmp_raw_memory_jni.cc. Any thread may call any method; after the client
// is closed every method throws IllegalStateException. Callers: applications.
package io.rpmp.client;

import java.nio.ByteBuffer;

/** Raw-memory calls of one client. */
public final class RpmpRawMemory {
  private final NativeClient nc;

  RpmpRawMemory(NativeClient nc) {
    this.nc = nc;
  }

  /** size bytes of pool memory (in cluster mode on the LIVE node with the most free space). */
  public GlobalAddress alloc(long size) throws RpmpException {
    return nc.call(h -> nativeAlloc(h, size));
  }

  public void free(GlobalAddress a) throws RpmpException {
    nc.run(h -> nativeFree(h, a.nodeId(), a.pool(), a.offset()));
  }

  /** Writes src's remaining bytes (position unchanged) at a; heap buffers are copied first. */
  public void write(GlobalAddress a, ByteBuffer src) throws RpmpException {
    if (!src.isDirect()) {
      try (RpmpBuffer copy = nc.allocBuffer(src.remaining())) {
        copy.fill(src);
        write(a, copy.contents());
      }
      return;
    }
    nc.run(
        h -> nativeWrite(h, a.nodeId(), a.pool(), a.offset(), src, src.position(), src.remaining()));
  }

  /** Fills dst's remaining bytes (position unchanged) from a. */
  public void read(GlobalAddress a, ByteBuffer dst) throws RpmpException {
    if (!dst.isDirect()) {
      try (RpmpBuffer tmp = nc.allocBuffer(dst.remaining())) {
        tmp.setSize(dst.remaining());
        read(a, tmp.contents());
        dst.duplicate().put(tmp.contents());
      }
      return;
    }
    nc.run(
        h -> nativeRead(h, a.nodeId(), a.pool(), a.offset(), dst, dst.position(), dst.remaining()));
  }

  private static native GlobalAddress nativeAlloc(long h, long size) throws RpmpException;

  private static native void nativeFree(long h, long node, int pool, long offset)
      throws RpmpException;

  private static native void nativeWrite(
      long h, long node, int pool, long offset, ByteBuffer src, long srcOffset, long len)
      throws RpmpException;

  private static native void nativeRead(
      long h, long node, int pool, long offset, ByteBuffer dst, long dstOffset, long len)
      throws RpmpException;
}
