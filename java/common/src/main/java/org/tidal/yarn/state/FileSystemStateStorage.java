package org.tidal.yarn.state;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IOUtils;

/**
 * Blobs as files in a directory of any Hadoop file system (HDFS, local); a file is written under a
 * hidden temporary name and renamed into place, so it appears whole.
 */
final class FileSystemStateStorage implements StateStorage {
  private final FileSystem fs;
  private final Path dir;

  FileSystemStateStorage(String uri, Configuration conf) throws IOException {
    this.dir = new Path(uri);
    this.fs = dir.getFileSystem(conf);
    if (!fs.mkdirs(dir)) {
      throw new IOException("cannot create the directory " + dir);
    }
  }

  @Override
  public String location() {
    return dir.toString();
  }

  @Override
  public List<String> names() throws IOException {
    List<String> names = new ArrayList<String>();
    for (FileStatus status : fs.listStatus(dir)) {
      names.add(status.getPath().getName());
    }
    return names;
  }

  @Override
  public byte[] read(String name, int maxBytes) throws IOException {
    Path file = new Path(dir, name);
    long length = fs.getFileStatus(file).getLen();
    if (length > maxBytes) {
      throw new IOException(file + " is " + length + " bytes, over " + maxBytes);
    }
    byte[] bytes = new byte[(int) length];
    try (InputStream in = fs.open(file)) {
      IOUtils.readFully(in, bytes, 0, bytes.length);
    }
    return bytes;
  }

  @Override
  public void create(String name, byte[] data) throws IOException {
    Path target = new Path(dir, name);
    Path temporary = new Path(dir, "." + name + ".tmp");
    try (OutputStream out = fs.create(temporary, true)) {
      out.write(data);
    }
    if (!fs.rename(temporary, target)) {
      throw new IOException("cannot rename " + temporary + " to " + target);
    }
  }

  @Override
  public void delete(String name) throws IOException {
    fs.delete(new Path(dir, name), false);
  }

  /** The file system instance is Hadoop's shared one, which others still use. */
  @Override
  public void close() {}
}
