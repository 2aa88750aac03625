// What RpmpClient.stat returns: counters of one rpmp-server and its pools. Built by
// native code; immutable.
package io.rpmp.client;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/** Counters of one server. */
public final class ServerStats {
  /** One pool (persistent-memory file) of a server. */
  public static final class PoolInfo {
    private final String path;
    private final String medium;
    private final long capacity;
    private final long used;
    private final long free;

    public PoolInfo(byte[] path, byte[] medium, long capacity, long used, long free) {
      this.path = new String(path, StandardCharsets.UTF_8);
      this.medium = new String(medium, StandardCharsets.UTF_8);
      this.capacity = capacity;
      this.used = used;
      this.free = free;
    }

    public String path() {
      return path;
    }

    public String medium() {
      return medium;
    }

    public long capacity() {
      return capacity;
    }

    public long used() {
      return used;
    }

    public long free() {
      return free;
    }
  }

  private final long nodeId;
  private final long namespaces;
  private final long keys;
  private final long records;
  private final long liveBytes;
  private final List<PoolInfo> pools;

  public ServerStats(
      long nodeId, long namespaces, long keys, long records, long liveBytes, PoolInfo[] pools) {
    this.nodeId = nodeId;
    this.namespaces = namespaces;
    this.keys = keys;
    this.records = records;
    this.liveBytes = liveBytes;
    this.pools = Collections.unmodifiableList(Arrays.asList(pools));
  }

  public long nodeId() {
    return nodeId;
  }

  public long namespaces() {
    return namespaces;
  }

  public long keys() {
    return keys;
  }

  public long records() {
    return records;
  }

  public long liveBytes() {
    return liveBytes;
  }

  public List<PoolInfo> pools() {
    return pools;
  }
}
