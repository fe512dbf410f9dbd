//! Container reuse on the Spark-measured TPC-H trace, whose sub-second tasks leave a container
//! waiting for node heartbeats most of its life when every task needs a container of its own.

use tidal_sim::fidelity::utilization;
use tidal_sim::metrics::summarize;
use tidal_sim::runner;
use tidal_sim::spec::{shared_dir, ContainerReuse, Spec};

#[test]
fn reuse_lifts_utilisation_on_the_spark_tpch_trace() {
    let trace = shared_dir().join("traces/tpch-spark/tpch-10g.json");
    if !trace.exists() {
        println!("SKIP: {} not found; shared traces are not part of the repository", trace.display());
        return;
    }
    // 20 queries arriving every 3 s on average on two of Carbyne's machines: a backlog, so
    // utilisation is bounded by how fast containers turn over, not by the arrivals.
    let text = r#"
        seed = 4
        [cluster]
        machines = 2
        machine = { memory_mb = 131072, vcores = 20, disk_read_mbps = 4000, disk_write_mbps = 2000, net_in_mbps = 10000, net_out_mbps = 10000 }
        [sim]
        am_container = {}
        [workload]
        type = "carbyne"
        source = { type = "tpch-spark", file = "{shared}/traces/tpch-spark/tpch-10g.json" }
        jobs = 20
        arrivals = "poisson"
        mean_interarrival_s = 3.0
    "#;
    let mut spec = Spec::from_str(text, false).unwrap();
    spec.resolve_paths(std::path::Path::new("."));
    let mut busy = |mode| {
        spec.sim.container_reuse = mode;
        let run = runner::run_spec(&spec, false).unwrap();
        assert_eq!((run.jobs.len(), run.unfinished), (20, 0));
        let s = summarize(&run, spec.sim.fairness_window_ms);
        println!(
            "{mode:?}: {:.1}% busy, {} containers for {} tasks",
            100.0 * utilization(&s),
            s.stats.containers,
            s.tasks
        );
        utilization(&s)
    };
    let none = busy(ContainerReuse::None);
    let stage = busy(ContainerReuse::Stage);
    let dag = busy(ContainerReuse::Dag);
    assert!(stage > 2.0 * none && dag > 2.0 * none, "busy: none {none:.3}, stage {stage:.3}, dag {dag:.3}");
}
