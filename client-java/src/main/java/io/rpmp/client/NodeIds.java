// How node ids are printed everywhere (rpmpctl, rpmp-proxy and rpmp-server logs, Java and
// Spark logs and exceptions): 16 lowercase hex digits, never Java's signed decimal. Stateless.
package io.rpmp.client;

import java.util.List;
import java.util.StringJoiner;

/** Formats node ids as 16 lowercase hex digits, as {@code rpmpctl nodes} prints them. */
public final class NodeIds {
  private NodeIds() {}

  /** {@code 80ff37acd4d8f63f} for the unsigned 64-bit id held in {@code id}. */
  public static String hex(long id) {
    return String.format("%016x", id);
  }

  /** {@code [80ff37acd4d8f63f, 00000000000000a1]}. */
  public static String hex(List<Long> ids) {
    StringJoiner j = new StringJoiner(", ", "[", "]");
    for (Long id : ids) {
      j.add(hex(id));
    }
    return j.toString();
  }
}
