// Registered memory of one RpmpClient's pool, seen from Java as a direct ByteBuffer
// (no copy). Values in an RpmpBuffer travel without client-side copies. Created by
// RpmpClient.allocateBuffer/get/readRecord; closed by the caller (or by client.close()).
package io.rpmp.client;

import java.nio.ByteBuffer;

/**
 * Registered memory wrapped as a direct ByteBuffer. {@link #size()} counts the valid bytes:
 * put/append store the first size() bytes; get/readRecord set it. Using any ByteBuffer
 * obtained from this buffer after {@link #close()} is undefined (the memory is reused).
 */
public final class RpmpBuffer implements AutoCloseable {
  private final NativeClient owner;
  private long handle;
  private ByteBuffer view;
  private long viewAddress;

  RpmpBuffer(NativeClient owner, long handle) {
    this.owner = owner;
    this.handle = handle;
    refreshView();
  }

  /** Re-creates the ByteBuffer view when native code moved the memory (Get grew it). */
  synchronized void refreshView() {
    long address = nativeAddress(handle);
    if (view == null || address != viewAddress) {
      ByteBuffer v = nativeView(handle);
      view = v != null ? v : ByteBuffer.allocateDirect(0);
      viewAddress = address;
    }
  }

  synchronized long handle() {
    if (handle == 0) {
      throw new IllegalStateException("RpmpBuffer is closed");
    }
    return handle;
  }

  /**
   * The whole registered memory as a direct ByteBuffer (position 0, limit capacity when first
   * returned; the same object on every call until the memory moves). Write into it, then call
   * {@link #setSize}.
   */
  public synchronized ByteBuffer byteBuffer() {
    handle();
    return view;
  }

  /** A new ByteBuffer over the valid bytes [0, size()), sharing the memory. */
  public synchronized ByteBuffer contents() {
    handle();
    ByteBuffer d = view.duplicate();
    d.clear().limit(size());
    return d.slice();
  }

  /** Copies src's remaining bytes (position unchanged) to the start; size() becomes their count. */
  RpmpBuffer fill(ByteBuffer src) {
    ByteBuffer dst = byteBuffer().duplicate();
    dst.clear();
    dst.put(src.duplicate());
    setSize(src.remaining());
    return this;
  }

  /** A copy of the valid bytes. */
  public byte[] toByteArray() {
    ByteBuffer c = contents();
    byte[] out = new byte[c.remaining()];
    c.get(out);
    return out;
  }

  public int capacity() {
    return (int) Math.min(Integer.MAX_VALUE, nativeCapacity(handle()));
  }

  public int size() {
    return (int) nativeSize(handle());
  }

  /** Sets the number of valid bytes (capped at capacity). */
  public RpmpBuffer setSize(int size) {
    if (size < 0) {
      throw new IllegalArgumentException("negative size " + size);
    }
    nativeSetSize(handle(), size);
    return this;
  }

  /**
   * Raises size() to at least {@code size}, atomically with other calls of this method: reads
   * that fill disjoint ranges of one buffer complete on different threads, and each extends the
   * valid bytes to its end; an unsynchronized max could let a shorter range's end win.
   */
  synchronized RpmpBuffer growSizeTo(int size) {
    if (size > size()) {
      setSize(size);
    }
    return this;
  }

  public synchronized boolean isClosed() {
    return handle == 0;
  }

  /** Returns the memory to the client's pool. Idempotent. */
  @Override
  public void close() {
    owner.release(this);
  }

  /** Frees the native buffer; called by the owning client only. */
  synchronized void freeNative() {
    if (handle != 0) {
      nativeFree(handle);
      handle = 0;
      view = null;
    }
  }

  private static native ByteBuffer nativeView(long handle);

  private static native long nativeAddress(long handle);

  private static native long nativeCapacity(long handle);

  private static native long nativeSize(long handle);

  private static native void nativeSetSize(long handle, long size);

  private static native void nativeFree(long handle);
}
