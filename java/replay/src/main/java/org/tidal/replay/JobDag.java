package org.tidal.replay;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.tez.dag.api.DAG;
import org.apache.tez.dag.api.Edge;
import org.apache.tez.dag.api.Vertex;
import org.apache.tez.dag.library.vertexmanager.ShuffleVertexManager;
import org.apache.tez.runtime.library.conf.UnorderedPartitionedKVEdgeConfig;
import org.apache.tez.runtime.library.partitioner.HashPartitioner;

/**
 * A job as a Tez DAG: a vertex per stage with the stage's task count and container size, and a
 * scatter-gather edge from every parent whose consumer starts only once all its parents have
 * finished (slow start at 100%: the barrier tidal-sim models).
 */
final class JobDag {
  private JobDag() {}

  /**
   * @param timeScale multiplies every task duration
   * @param burn tasks keep their vcores busy and touch {@code burnMemoryFraction} of their memory
   */
  static DAG of(
      Workload.Job job,
      double timeScale,
      boolean burn,
      double burnMemoryFraction,
      Configuration conf) {
    DAG dag = DAG.create(job.name);
    List<Vertex> vertices = new ArrayList<>();
    for (Workload.Stage s : job.stages) {
      long[] ms = new long[s.taskDurationsMs.length];
      for (int i = 0; i < ms.length; i++) {
        ms[i] = Math.round(s.taskDurationsMs[i] * timeScale);
      }
      int touch = (int) (s.memoryMb * burnMemoryFraction);
      Vertex v =
          Vertex.create(
              s.name,
              HoldProcessor.descriptor(burn, touch, s.vcores, ms),
              ms.length,
              Resource.newInstance(s.memoryMb, s.vcores));
      if (s.parents.length > 0) {
        v.setVertexManagerPlugin(
            ShuffleVertexManager.createConfigBuilder(conf)
                .setSlowStartMinSrcCompletionFraction(1.0f)
                .setSlowStartMaxSrcCompletionFraction(1.0f)
                .setAutoReduceParallelism(false)
                .build());
      }
      vertices.add(v);
      dag.addVertex(v);
    }
    UnorderedPartitionedKVEdgeConfig edge =
        UnorderedPartitionedKVEdgeConfig.newBuilder(
                Text.class.getName(), IntWritable.class.getName(), HashPartitioner.class.getName())
            .setAdditionalConfiguration("tez.runtime.unordered.output.buffer.size-mb", "1")
            .build();
    for (int i = 0; i < job.stages.size(); i++) {
      for (int p : job.stages.get(i).parents) {
        dag.addEdge(
            Edge.create(vertices.get(p), vertices.get(i), edge.createDefaultEdgeProperty()));
      }
    }
    return dag;
  }
}
