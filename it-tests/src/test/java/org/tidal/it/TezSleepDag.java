package org.tidal.it;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.tez.dag.api.DAG;
import org.apache.tez.dag.api.Edge;
import org.apache.tez.dag.api.ProcessorDescriptor;
import org.apache.tez.dag.api.TezConfiguration;
import org.apache.tez.dag.api.UserPayload;
import org.apache.tez.dag.api.Vertex;
import org.apache.tez.runtime.api.LogicalInput;
import org.apache.tez.runtime.api.LogicalOutput;
import org.apache.tez.runtime.api.ProcessorContext;
import org.apache.tez.runtime.library.api.KeyValueReader;
import org.apache.tez.runtime.library.api.KeyValueWriter;
import org.apache.tez.runtime.library.conf.UnorderedKVEdgeConfig;
import org.apache.tez.runtime.library.processor.SimpleProcessor;
import org.tidal.replay.TezAmClassLoader;

/**
 * A real Tez 0.9.2 DAG on the mini cluster: producer tasks that sleep, broadcast to one consumer
 * task. The Tez AM and its tasks run on this JVM's class path (Tez jars, the Tidal jar, the
 * processor below), passed as {@code tez.cluster.additional.classpath.prefix} with {@code
 * tez.ignore.lib.uris}, the way the harness's MapReduce AMs inherit it.
 */
public final class TezSleepDag {
  /**
   * Tez 0.9 on Java 17: a URLClassLoader as system class loader (see TezAmClassLoader) and access
   * to its protected addURL, which Tez calls reflectively.
   */
  static final String TEZ_JDK_OPTS =
      "--add-opens=java.base/java.net=ALL-UNNAMED -Djava.system.class.loader="
          + TezAmClassLoader.class.getName();

  private TezSleepDag() {}

  /**
   * A vertex's work: reads every record of its inputs, sleeps for the millisecond count in its
   * payload and writes one record to each output.
   */
  public static final class SleepAndPass extends SimpleProcessor {
    public SleepAndPass(ProcessorContext context) {
      super(context);
    }

    @Override
    public void run() throws Exception {
      long records = 0;
      for (LogicalInput input : getInputs().values()) {
        KeyValueReader reader = (KeyValueReader) input.getReader();
        while (reader.next()) {
          records++;
        }
      }
      Thread.sleep(
          Long.parseLong(
              new String(getContext().getUserPayload().deepCopyAsArray(), StandardCharsets.UTF_8)));
      for (LogicalOutput output : getOutputs().values()) {
        ((KeyValueWriter) output.getWriter())
            .write(new Text(getContext().getTaskVertexName()), new IntWritable((int) records));
      }
    }
  }

  /** Tez settings for a DAG in {@code queue} of the mini cluster {@code base} points at. */
  static TezConfiguration configuration(Configuration base, String queue) {
    TezConfiguration tez = new TezConfiguration(base);
    String workDir =
        System.getProperty("it.work.dir", new File("target", "it-work").getAbsolutePath());
    tez.set(
        TezConfiguration.TEZ_AM_STAGING_DIR, new File(workDir, "tez-staging").getAbsolutePath());
    tez.set(TezConfiguration.TEZ_QUEUE_NAME, queue);
    // No Tez tarball: AM and tasks run on this JVM's class path, as MapReduce AMs do here.
    tez.setBoolean(TezConfiguration.TEZ_IGNORE_LIB_URIS, true);
    tez.setBoolean(TezConfiguration.TEZ_USE_CLUSTER_HADOOP_LIBS, false);
    tez.set(
        TezConfiguration.TEZ_CLUSTER_ADDITIONAL_CLASSPATH_PREFIX,
        System.getProperty("java.class.path"));
    // Small containers; the AM's web app needs the same --add-opens as the RM. Tez's default
    // JVM options (-XX:+PrintGCTimeStamps) would not even start on Java 17.
    tez.setInt(TezConfiguration.TEZ_AM_RESOURCE_MEMORY_MB, HarnessSettings.CONTAINER_MB);
    tez.setInt(TezConfiguration.TEZ_TASK_RESOURCE_MEMORY_MB, HarnessSettings.CONTAINER_MB);
    String opts = HarnessSettings.amJavaOpts() + " " + TEZ_JDK_OPTS;
    tez.set(TezConfiguration.TEZ_AM_LAUNCH_CMD_OPTS, opts);
    tez.set(TezConfiguration.TEZ_TASK_LAUNCH_CMD_OPTS, opts);
    String javaHome = "JAVA_HOME=" + System.getProperty("java.home");
    tez.set(TezConfiguration.TEZ_AM_LAUNCH_ENV, javaHome);
    tez.set(TezConfiguration.TEZ_TASK_LAUNCH_ENV, javaHome);
    tez.setInt("tez.runtime.unordered.output.buffer.size-mb", 8);
    return tez;
  }

  /** producer ({@code producers} tasks) -> broadcast -> consumer (1 task). */
  static DAG dag(String name, int producers, long producerMillis, long consumerMillis) {
    UnorderedKVEdgeConfig edge =
        UnorderedKVEdgeConfig.newBuilder(Text.class.getName(), IntWritable.class.getName())
            .setAdditionalConfiguration("tez.runtime.unordered.output.buffer.size-mb", "8")
            .build();
    Vertex producer = Vertex.create("producer", processor(producerMillis), producers);
    Vertex consumer = Vertex.create("consumer", processor(consumerMillis), 1);
    return DAG.create(name)
        .addVertex(producer)
        .addVertex(consumer)
        .addEdge(Edge.create(producer, consumer, edge.createDefaultBroadcastEdgeProperty()));
  }

  private static ProcessorDescriptor processor(long millis) {
    return ProcessorDescriptor.create(SleepAndPass.class.getName())
        .setUserPayload(
            UserPayload.create(
                ByteBuffer.wrap(Long.toString(millis).getBytes(StandardCharsets.UTF_8))));
  }
}
