package org.tidal.yarn;

import java.util.Collections;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.http.FilterContainer;
import org.apache.hadoop.http.FilterInitializer;

/**
 * Installs {@link TidalWebFilter} on every path of a Hadoop HTTP server: add this class to {@code
 * hadoop.http.filter.initializers}. The server runs initializers as it is built, before the RM's
 * web app adds its own filter, so Tidal's routes are answered first.
 */
public class TidalWebFilterInitializer extends FilterInitializer {
  static final String FILTER_NAME = "tidal-web";

  @Override
  public void initFilter(FilterContainer container, Configuration conf) {
    container.addGlobalFilter(
        FILTER_NAME, TidalWebFilter.class.getName(), Collections.<String, String>emptyMap());
  }
}
