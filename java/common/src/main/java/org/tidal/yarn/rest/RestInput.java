package org.tidal.yarn.rest;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import javax.servlet.http.HttpServletRequest;

/**
 * What the REST resources read from a request beyond what Jersey checks: the body as bounded strict
 * UTF-8, and a sane caller name. Whatever is wrong is a {@link RestException} with the status the
 * client gets.
 */
public final class RestInput {
  /** The query parameter that names the caller under simple authentication, as in Hadoop. */
  public static final String USER_PARAM = "user.name";

  private static final int MAX_USER_NAME_LENGTH = 256;

  private RestInput() {}

  /** 400 unless {@code user} (as authenticated) can be a user name. */
  static void checkUserName(String user) throws RestException {
    if (user.length() > MAX_USER_NAME_LENGTH) {
      throw new RestException(
          400, "the user name is longer than " + MAX_USER_NAME_LENGTH + " characters");
    }
    for (int i = 0; i < user.length(); i++) {
      char c = user.charAt(i);
      if (Character.isISOControl(c) || Character.isWhitespace(c)) {
        throw new RestException(400, "the user name contains whitespace or control characters");
      }
    }
  }

  /** Reads the body as strict UTF-8, refusing anything over {@code limit} bytes. */
  static String body(HttpServletRequest request, int limit) throws RestException, IOException {
    InputStream in = request.getInputStream();
    long declared = request.getContentLength();
    if (declared > limit) {
      discard(in, 4L * limit);
      throw new RestException(
          413, "request body of " + declared + " bytes exceeds the limit of " + limit + " bytes");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[8192];
    int n;
    try {
      while ((n = in.read(buffer)) > 0) {
        if (out.size() + n > limit) {
          discard(in, 4L * limit);
          throw new RestException(413, "request body exceeds the limit of " + limit + " bytes");
        }
        out.write(buffer, 0, n);
      }
    } catch (EOFException e) {
      // The client closed, or went idle past the timeout, before its body was complete: its
      // fault, not the server's, so no stack trace in the RM log.
      throw new RestException(
          400, "request body incomplete after " + out.size() + " bytes: " + e.getMessage());
    }
    if (out.size() == 0) {
      throw new RestException(400, "empty request body");
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(out.toByteArray()))
          .toString();
    } catch (CharacterCodingException e) {
      throw new RestException(400, "request body is not valid UTF-8");
    }
  }

  /**
   * Reads and drops what the client is still sending, up to {@code cap} bytes: replying while a
   * moderately oversized body is unread would reset the connection before the client reads the 413.
   * Bodies beyond the cap are cut off.
   */
  private static void discard(InputStream in, long cap) throws IOException {
    byte[] buffer = new byte[8192];
    long total = 0;
    int n;
    while (total < cap && (n = in.read(buffer)) > 0) {
      total += n;
    }
  }
}
