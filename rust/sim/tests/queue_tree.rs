//! A nested allocation file with two subtrees ordering their apps by different app policies,
//! in one run: the same pair of jobs finishes in opposite orders in the two subtrees.

use tidal_core::Resources;
use tidal_sim::model::{estimate_of, Job, Stage};
use tidal_sim::runner;
use tidal_sim::spec::Spec;

/// `tasks` tasks of 1 GB and 1 vcore, each running `seconds`.
fn job(name: &str, queue: &str, arrival_ms: i64, tasks: usize, seconds: u32) -> Job {
    let stages = vec![Stage {
        name: "map".into(),
        parents: Vec::new(),
        demand: Resources::new(1024, 1),
        durations_ms: vec![seconds * 1000; tasks],
    }];
    Job {
        name: name.into(),
        queue: queue.into(),
        user: name.into(),
        class: name.into(),
        arrival_ms,
        deadline_ms: None,
        estimate: estimate_of(&stages).unwrap(),
        stages,
    }
}

#[test]
fn two_subtrees_with_different_app_policies_in_one_run() {
    let text = r#"
        seed = 1
        [cluster]
        machines = 2
        machine = { memory_mb = 8192, vcores = 8, disk_read_mbps = 4000, disk_write_mbps = 2000, net_in_mbps = 10000, net_out_mbps = 10000 }
        [sim]
        am_container = {}
        [workload]
        type = "carbyne"
        source = { type = "generator", family = "tpch" }
        jobs = 1
        arrivals = "poisson"
    "#;
    let spec = Spec::from_str(text, false).unwrap();
    let mut p = runner::prepare(&spec, false).unwrap();
    // Each subtree has half of the 16 slots for a big job and a small one arriving just after.
    p.queue_xml = r#"<tidal><app-policy>fifo</app-policy>
        <queue name="batch"><queue name="etl"/></queue>
        <queue name="science"><app-policy>job-fair</app-policy><queue name="ml"/></queue></tidal>"#
        .into();
    p.jobs = vec![
        job("fifo-big", "batch.etl", 0, 64, 10),
        job("fair-big", "science.ml", 0, 64, 10),
        job("fifo-small", "batch.etl", 1000, 4, 20),
        job("fair-small", "science.ml", 1000, 4, 20),
    ];
    let run = runner::run_prepared(&p).unwrap();
    assert_eq!(run.unfinished, 0);
    let finish = |name: &str| run.jobs.iter().find(|j| j.name == name).unwrap().finish_ms;
    // FIFO: the small job waits until the big one has started all its tasks.
    assert!(finish("fifo-small") > finish("fifo-big"), "fifo: {} vs {}", finish("fifo-small"), finish("fifo-big"));
    // Job-fair: the small job gets half the leaf from the start and is done long before.
    assert!(
        finish("fair-small") < finish("fair-big") / 2,
        "job-fair: {} vs {}",
        finish("fair-small"),
        finish("fair-big")
    );
}
