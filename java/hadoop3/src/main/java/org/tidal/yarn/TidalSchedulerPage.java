package org.tidal.yarn;

import com.google.inject.Inject;
import java.io.IOException;
import org.apache.hadoop.yarn.webapp.View;
import org.apache.hadoop.yarn.webapp.WebAppException;

/**
 * The RM web UI's {@code /cluster/scheduler} page under Hadoop 3, which renders a plugin
 * scheduler's page by the class {@code yarn.http.rmwebapp.scheduler.page.class} names: Tidal's
 * queue page, as {@link TidalWebFilter} serves it.
 */
public class TidalSchedulerPage extends View {
  @Inject
  TidalSchedulerPage(ViewContext context) {
    super(context);
  }

  @Override
  public void render() {
    try {
      TidalWebFilter.schedulerPage(request()).send(response(), false);
    } catch (IOException e) {
      throw new WebAppException(e);
    }
  }
}
