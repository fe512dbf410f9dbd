package org.tidal.yarn.view;

import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.Map;
import org.tidal.yarn.io.Streams;

/**
 * The dashboard's files, served from the class path under a fixed list of names: nothing else in
 * the jar can be fetched through it, whatever path a request gives.
 */
public final class WebAssets {
  /** Where the dashboard's files are in the jar. */
  public static final String BASE = "org/tidal/yarn/web/";

  private static final String JS = "application/javascript; charset=UTF-8";
  private static final String CSS = "text/css; charset=UTF-8";
  private static final Map<String, String> TYPES = new HashMap<String, String>();

  static {
    TYPES.put("dashboard.html", WebReply.HTML);
    TYPES.put("static/dashboard.js", JS);
    TYPES.put("static/uPlot.iife.min.js", JS);
    TYPES.put("static/dashboard.css", CSS);
    TYPES.put("static/uPlot.min.css", CSS);
    TYPES.put("static/uPlot.LICENSE", "text/plain; charset=UTF-8");
  }

  private final ClassLoader loader;
  private final String base;

  public WebAssets(ClassLoader loader, String base) {
    this.loader = loader;
    this.base = base;
  }

  /**
   * The file of an allowed name with its content type; 404 for any other name or a missing file.
   */
  public WebReply get(String name) throws IOException {
    String type = TYPES.get(name);
    if (type == null) {
      return WebReply.error(404, "no dashboard file '" + name + "'");
    }
    InputStream in = loader.getResourceAsStream(base + name);
    if (in == null) {
      return WebReply.error(404, "dashboard file '" + name + "' is missing from the Tidal jar");
    }
    return new WebReply(200, type, Streams.readAll(in));
  }
}
