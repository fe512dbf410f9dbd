package org.tidal.it3;

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

/**
 * A real Tez 0.10 DAG on the mini cluster: producer tasks that sleep, broadcast to one consumer
 * task. The Tez AM and its tasks run on this JVM's class path (no Tez tarball), the way the
 * MapReduce AMs inherit it. Unlike Tez 0.9, Tez 0.10 loads classes through a class loader of its
 * own, so Java 17 needs no system class loader in its containers.
 */
final class TezSleepDag {
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
    tez.set(
        TezConfiguration.TEZ_AM_STAGING_DIR,
        new File(TidalMiniCluster.workDir(), "tez-staging").getAbsolutePath());
    tez.set(TezConfiguration.TEZ_QUEUE_NAME, queue);
    // No Tez tarball: AM and tasks run on this JVM's class path.
    tez.setBoolean(TezConfiguration.TEZ_IGNORE_LIB_URIS, true);
    tez.setBoolean(TezConfiguration.TEZ_USE_CLUSTER_HADOOP_LIBS, false);
    tez.set(
        TezConfiguration.TEZ_CLUSTER_ADDITIONAL_CLASSPATH_PREFIX,
        System.getProperty("java.class.path"));
    // Small containers; the AM's web app needs the RM's --add-opens. Tez's default options
    // (-XX:+UseNUMA, GC logging) are replaced, not added to.
    tez.setInt(TezConfiguration.TEZ_AM_RESOURCE_MEMORY_MB, TidalMiniCluster.CONTAINER_MB);
    tez.setInt(TezConfiguration.TEZ_TASK_RESOURCE_MEMORY_MB, TidalMiniCluster.CONTAINER_MB);
    String opts = TidalMiniCluster.amJavaOpts();
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
