package org.tidal.yarn.bridge;

import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * An error reported by the Rust core: bad input, an unknown node or app, an invalid config. Where
 * the core's error is about an application, a node, a queue or an input field, the exception
 * carries it ({@link #appKey}, {@link #nodeId}, {@link #queue}, {@link #field}), so callers need
 * not parse the message.
 */
public class TidalException extends RuntimeException {
  private static final long serialVersionUID = 2L;

  /** App keys and node ids are never negative: -1 stands for none. */
  private static final long NO_APP = -1;

  private static final int NO_NODE = -1;

  private final long appKey;
  private final int nodeId;
  private final String queue;
  private final String field;

  public TidalException(String message) {
    this(message, NO_APP, NO_NODE, null, null);
  }

  /**
   * An error about the given application, node, queue and input field; -1 or null where it is about
   * none. The bridge raises the subclasses through this signature.
   */
  TidalException(String message, long appKey, int nodeId, String queue, String field) {
    super(message);
    this.appKey = appKey;
    this.nodeId = nodeId;
    this.queue = queue;
    this.field = field;
  }

  /** The key of the application the error is about. */
  public OptionalLong appKey() {
    return appKey < 0 ? OptionalLong.empty() : OptionalLong.of(appKey);
  }

  /** The id of the node the error is about. */
  public OptionalInt nodeId() {
    return nodeId < 0 ? OptionalInt.empty() : OptionalInt.of(nodeId);
  }

  /** The full name of the queue the error is about. */
  public Optional<String> queue() {
    return Optional.ofNullable(queue);
  }

  /** The input field refused, as a path into the document, such as {@code stages[1].tasks}. */
  public Optional<String> field() {
    return Optional.ofNullable(field);
  }
}
