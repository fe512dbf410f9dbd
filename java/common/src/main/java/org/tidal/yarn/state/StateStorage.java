package org.tidal.yarn.state;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;

/** Named blobs in one place (a directory or a znode), where {@link TidalStateStore} keeps files. */
interface StateStorage extends Closeable {
  /** Where the blobs are, for logs and errors. */
  String location();

  /** The names of the blobs there. */
  List<String> names() throws IOException;

  /** A blob's bytes; an IOException when it is larger than {@code maxBytes}. */
  byte[] read(String name, int maxBytes) throws IOException;

  /** Creates a blob in one step: readers see all of it or none. */
  void create(String name, byte[] data) throws IOException;

  void delete(String name) throws IOException;
}
