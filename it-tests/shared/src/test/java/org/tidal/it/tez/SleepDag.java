package org.tidal.it.tez;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.BiFunction;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.tez.client.TezClient;
import org.apache.tez.dag.api.DAG;
import org.apache.tez.dag.api.Edge;
import org.apache.tez.dag.api.ProcessorDescriptor;
import org.apache.tez.dag.api.TezConfiguration;
import org.apache.tez.dag.api.UserPayload;
import org.apache.tez.dag.api.Vertex;
import org.apache.tez.dag.api.client.DAGClient;
import org.apache.tez.dag.api.client.DAGStatus;
import org.apache.tez.runtime.api.LogicalInput;
import org.apache.tez.runtime.api.LogicalOutput;
import org.apache.tez.runtime.api.ProcessorContext;
import org.apache.tez.runtime.library.api.KeyValueReader;
import org.apache.tez.runtime.library.api.KeyValueWriter;
import org.apache.tez.runtime.library.conf.UnorderedKVEdgeConfig;
import org.apache.tez.runtime.library.processor.SimpleProcessor;

/**
 * A real Tez DAG, the same on both Hadoop lines (this source is compiled into the integration tests
 * of each, against its own Tez): producer tasks that sleep, broadcast to one consumer task. The Tez
 * AM and its tasks run on the submitting JVM's class path (no Tez tarball), the way the tests'
 * MapReduce AMs inherit it. What differs between the lines (the JVM options Tez's containers need
 * on Java 17, the harness's container size and work directory) comes from each line's caller.
 */
public final class SleepDag {
  private SleepDag() {}

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

  /**
   * Tez settings for a DAG in {@code queue} of the cluster {@code base} points at: staging under
   * {@code workDir}, AM and tasks in containers of {@code containerMb} started with {@code
   * javaOpts} (which replace Tez's defaults: its GC logging flags would not start on Java 17).
   */
  public static TezConfiguration configuration(
      Configuration base, String queue, File workDir, int containerMb, String javaOpts) {
    TezConfiguration tez = new TezConfiguration(base);
    tez.set(
        TezConfiguration.TEZ_AM_STAGING_DIR, new File(workDir, "tez-staging").getAbsolutePath());
    tez.set(TezConfiguration.TEZ_QUEUE_NAME, queue);
    tez.setBoolean(TezConfiguration.TEZ_IGNORE_LIB_URIS, true);
    tez.setBoolean(TezConfiguration.TEZ_USE_CLUSTER_HADOOP_LIBS, false);
    tez.set(
        TezConfiguration.TEZ_CLUSTER_ADDITIONAL_CLASSPATH_PREFIX,
        System.getProperty("java.class.path"));
    tez.setInt(TezConfiguration.TEZ_AM_RESOURCE_MEMORY_MB, containerMb);
    tez.setInt(TezConfiguration.TEZ_TASK_RESOURCE_MEMORY_MB, containerMb);
    tez.set(TezConfiguration.TEZ_AM_LAUNCH_CMD_OPTS, javaOpts);
    tez.set(TezConfiguration.TEZ_TASK_LAUNCH_CMD_OPTS, javaOpts);
    String javaHome = "JAVA_HOME=" + System.getProperty("java.home");
    tez.set(TezConfiguration.TEZ_AM_LAUNCH_ENV, javaHome);
    tez.set(TezConfiguration.TEZ_TASK_LAUNCH_ENV, javaHome);
    tez.setInt("tez.runtime.unordered.output.buffer.size-mb", 8);
    return tez;
  }

  /** producer ({@code producers} tasks) -> broadcast -> consumer (1 task). */
  public static DAG dag(String name, int producers, long producerMillis, long consumerMillis) {
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

  /**
   * The DAG as a command, for a cluster of separate hosts (the docker cluster's {@code make
   * cluster-run}): submits it to the queue given, with the settings {@code configuration} makes for
   * that queue, and waits for it. The staging directory must be on the cluster's shared file
   * system.
   *
   * <pre>
   *   QUEUE PRODUCERS PRODUCER_MILLIS CONSUMER_MILLIS
   * </pre>
   *
   * @return the exit status: 0 when the DAG succeeded, 1 when it did not, 2 on bad arguments
   */
  public static int runFromCommandLine(
      String[] args, BiFunction<Configuration, String, TezConfiguration> configuration)
      throws Exception {
    if (args.length != 4) {
      System.err.println(
          "usage: QUEUE PRODUCERS PRODUCER_MILLIS CONSUMER_MILLIS (got "
              + args.length
              + " arguments)");
      return 2;
    }
    String queue = args[0];
    int producers;
    long producerMillis;
    long consumerMillis;
    try {
      producers = Integer.parseInt(args[1]);
      producerMillis = Long.parseLong(args[2]);
      consumerMillis = Long.parseLong(args[3]);
    } catch (NumberFormatException e) {
      System.err.println("PRODUCERS and the MILLIS must be numbers: " + e);
      return 2;
    }
    String name = "sleep-dag-" + queue;
    TezClient tez =
        TezClient.create(name, configuration.apply(new YarnConfiguration(), queue), false);
    tez.start();
    DAGStatus.State state;
    try {
      DAGClient dag = tez.submitDAG(dag(name, producers, producerMillis, consumerMillis));
      state = dag.waitForCompletion().getState();
      System.out.println("DAG " + name + " of " + tez.getAppMasterApplicationId() + ": " + state);
    } finally {
      tez.stop();
    }
    return state == DAGStatus.State.SUCCEEDED ? 0 : 1;
  }
}
