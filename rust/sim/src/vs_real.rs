//! Simulation against reality: per-class JCTs of a real run (`tidal-replay`) beside the
//! simulation of the same workload, read from both runs' `jobs.csv`.

use crate::metrics::JctStats;
use anyhow::{bail, Context, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// JCTs in seconds by job class, from a run's `jobs.csv`.
pub fn jcts_by_class(jobs_csv: &Path) -> Result<BTreeMap<String, Vec<f64>>> {
    let mut r = csv::Reader::from_path(jobs_csv).with_context(|| format!("cannot read {}", jobs_csv.display()))?;
    let head = r.headers()?.clone();
    let col = |name: &str| {
        head.iter().position(|h| h == name).with_context(|| format!("{}: no {name} column", jobs_csv.display()))
    };
    let (class, jct) = (col("class")?, col("jct_s")?);
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("{}: line {}", jobs_csv.display(), i + 2))?;
        let v: f64 = rec[jct]
            .parse()
            .with_context(|| format!("{}: line {}: jct_s '{}'", jobs_csv.display(), i + 2, &rec[jct]))?;
        out.entry(rec[class].to_string()).or_default().push(v);
    }
    Ok(out)
}

/// One line of the table: a policy's class, real and simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub policy: String,
    pub class: String,
    pub real: JctStats,
    pub sim: JctStats,
}

impl Row {
    /// Simulated over real average JCT.
    pub fn avg_ratio(&self) -> f64 {
        self.sim.avg_s / self.real.avg_s
    }

    pub fn p95_ratio(&self) -> f64 {
        self.sim.p95_s / self.real.p95_s
    }
}

/// Rows for every `real/<policy>/jobs.csv` with a `sim/<policy>/jobs.csv` under `dir`, by policy
/// then class. A class only one side has is an error: the runs did not replay the same jobs.
pub fn rows(dir: &Path) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let real_dir = dir.join("real");
    let mut policies: Vec<String> = std::fs::read_dir(&real_dir)
        .with_context(|| format!("cannot read {}", real_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|p| real_dir.join(p).join("jobs.csv").is_file() && dir.join("sim").join(p).join("jobs.csv").is_file())
        .collect();
    policies.sort();
    for policy in policies {
        let real = jcts_by_class(&real_dir.join(&policy).join("jobs.csv"))?;
        let sim = jcts_by_class(&dir.join("sim").join(&policy).join("jobs.csv"))?;
        if real.keys().ne(sim.keys()) {
            bail!(
                "{policy}: the real run has classes {:?} and the simulation {:?}",
                real.keys().collect::<Vec<_>>(),
                sim.keys().collect::<Vec<_>>()
            );
        }
        for (class, r) in &real {
            let s = &sim[class];
            if r.len() != s.len() {
                bail!("{policy}: class {class} has {} jobs in the real run and {} in the simulation", r.len(), s.len());
            }
            rows.push(Row {
                policy: policy.clone(),
                class: class.clone(),
                real: JctStats::of(r),
                sim: JctStats::of(s),
            });
        }
    }
    if rows.is_empty() {
        bail!("no real/<policy>/jobs.csv with a sim/<policy>/jobs.csv under {}", dir.display());
    }
    Ok(rows)
}

/// The table as Markdown.
pub fn table(rows: &[Row]) -> String {
    let mut t = String::from(
        "| policy | class | jobs | real avg s | sim avg s | sim/real avg | real p95 s | sim p95 s | sim/real p95 |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows {
        t.push_str(&format!(
            "| {} | {} | {} | {:.1} | {:.1} | {:.2} | {:.1} | {:.1} | {:.2} |\n",
            r.policy,
            r.class,
            r.real.jobs,
            r.real.avg_s,
            r.sim.avg_s,
            r.avg_ratio(),
            r.real.p95_s,
            r.sim.p95_s,
            r.p95_ratio()
        ));
    }
    t
}

pub fn write_csv(rows: &[Row], path: &Path) -> Result<()> {
    let mut w = csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    w.write_record([
        "policy",
        "class",
        "jobs",
        "real_avg_s",
        "sim_avg_s",
        "avg_ratio",
        "real_p95_s",
        "sim_p95_s",
        "p95_ratio",
    ])?;
    for r in rows {
        let f = |x: f64| format!("{x:.3}");
        w.write_record([
            r.policy.clone(),
            r.class.clone(),
            r.real.jobs.to_string(),
            f(r.real.avg_s),
            f(r.sim.avg_s),
            f(r.avg_ratio()),
            f(r.real.p95_s),
            f(r.sim.p95_s),
            f(r.p95_ratio()),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// The latencies a real run measured, in workload milliseconds (wall-clock over the replay's
/// time scale), as the simulator's knobs take them (`sim.container_overhead_ms`,
/// `sim.am_overhead_ms`, `sim.submit_latency_ms`). Means: the simulator's constant should keep
/// the containers' total held time, and start-up latencies under load have a long tail.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// A task container's allocation to its task's start (launch, JVM and Tez start-up).
    pub container_start_ms: f64,
    pub tasks: usize,
    /// A task's run beyond its traced duration (its inputs, the task's own set-up and end).
    pub task_extra_ms: f64,
    /// An AM's launch to its DAG's start.
    pub am_start_ms: f64,
    pub ams: usize,
    /// A job's arrival to the RM having its application (the client's staging and submit); the
    /// replay's median.
    pub submit_ms: f64,
}

impl Calibration {
    /// What a task container holds beyond the task's traced duration.
    pub fn container_overhead_ms(&self) -> f64 {
        self.container_start_ms + self.task_extra_ms
    }

    /// The AM's container starts like a task's, then the AM starts up.
    pub fn am_overhead_ms(&self) -> f64 {
        self.container_start_ms + self.am_start_ms
    }
}

/// Traced task durations by job name, stage name and task index, from the workload document
/// the replay copied into its directory.
fn traced_durations(path: &Path) -> Result<BTreeMap<(String, String), Vec<f64>>> {
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?,
    )
    .with_context(|| format!("{}: not JSON", path.display()))?;
    let mut out = BTreeMap::new();
    for j in doc["jobs"].as_array().into_iter().flatten() {
        for s in j["stages"].as_array().into_iter().flatten() {
            let ms = s["task_durations_ms"].as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
            out.insert(
                (j["name"].as_str().unwrap_or("").to_string(), s["name"].as_str().unwrap_or("").to_string()),
                ms,
            );
        }
    }
    Ok(out)
}

fn history_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let p = e?.path();
        if p.is_dir() {
            history_files(&p, out)?;
        } else if p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("history.txt.appattempt")) {
            out.push(p);
        }
    }
    Ok(())
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Measures a tidal-replay run from its `summary.json`, `workload.json` and the Tez AMs' history
/// logs under its directory (`logs/`, as the replay script collects them): Tez's simple history
/// logging writes one JSON entity per record, records separated by Ctrl-A. Tasks are matched to
/// their traced durations by DAG name (the job's), vertex name (the stage's) and task index.
pub fn calibrate(run_dir: &Path) -> Result<Calibration> {
    let summary_path = run_dir.join("summary.json");
    let summary: Value = serde_json::from_str(
        &std::fs::read_to_string(&summary_path).with_context(|| format!("cannot read {}", summary_path.display()))?,
    )
    .with_context(|| format!("{}: not JSON", summary_path.display()))?;
    let replay = &summary["replay"];
    let scale = replay["time_scale"]
        .as_f64()
        .with_context(|| format!("{}: no replay.time_scale (not a tidal-replay run)", summary_path.display()))?;
    let traced = traced_durations(&run_dir.join("workload.json"))?;
    let mut files = Vec::new();
    history_files(run_dir, &mut files)?;
    if files.is_empty() {
        bail!("no Tez history logs (history.txt.appattempt_*) under {}", run_dir.display());
    }
    let (mut container, mut am, mut extra) = (Vec::new(), Vec::new(), Vec::new());
    for f in files {
        let text = std::fs::read_to_string(&f).with_context(|| format!("cannot read {}", f.display()))?;
        let (mut launched, mut started) = (None, None);
        let mut dag = String::new();
        // Vertex index (as attempt ids name it) to vertex name.
        let mut vertices = BTreeMap::new();
        let recs: Vec<&str> = text.split('\u{1}').filter(|r| !r.trim().is_empty()).collect();
        for (i, rec) in recs.iter().enumerate() {
            let v: Value = match serde_json::from_str(rec) {
                Ok(v) => v,
                // An AM stopped while writing leaves its last record cut short.
                Err(_) if i + 1 == recs.len() => continue,
                Err(e) => bail!("{}: record {} is not JSON: {e}", f.display(), i + 1),
            };
            let entity = v["entity"].as_str().unwrap_or("");
            let o = &v["otherinfo"];
            for ev in v["events"].as_array().into_iter().flatten() {
                let ts = ev["ts"].as_f64();
                match ev["eventtype"].as_str() {
                    Some("AM_LAUNCHED") => launched = ts,
                    Some("DAG_STARTED") => started = ts,
                    Some("DAG_SUBMITTED") => dag = v["primaryfilters"]["dagName"].as_str().unwrap_or("").into(),
                    Some("VERTEX_INITIALIZED") => {
                        let index = entity.rsplit('_').next().unwrap_or("").to_string();
                        vertices.insert(index, o["vertexName"].as_str().unwrap_or("").to_string());
                    }
                    Some("TASK_ATTEMPT_FINISHED") if o["status"] == "SUCCEEDED" => {
                        if let (Some(s), Some(a)) = (o["startTime"].as_f64(), o["allocationTime"].as_f64()) {
                            if a > 0.0 {
                                container.push((s - a) / scale);
                            }
                        }
                        // attempt_<cluster>_<app>_<dag>_<vertex>_<task>_<attempt>
                        let id: Vec<&str> = entity.split('_').collect();
                        let traced_ms = (id.len() == 7)
                            .then(|| vertices.get(id[4]))
                            .flatten()
                            .and_then(|vertex| traced.get(&(dag.clone(), vertex.clone())))
                            .and_then(|ms| ms.get(id[5].parse::<usize>().ok()?));
                        if let (Some(taken), Some(ms)) = (o["timeTaken"].as_f64(), traced_ms) {
                            extra.push((taken - ms * scale) / scale);
                        }
                    }
                    _ => {}
                }
            }
        }
        if let (Some(l), Some(s)) = (launched, started) {
            am.push((s - l) / scale);
        }
    }
    if container.is_empty() || am.is_empty() || extra.is_empty() {
        bail!("{}: the Tez history logs record no finished task of the workload or no started DAG", run_dir.display());
    }
    Ok(Calibration {
        tasks: container.len(),
        container_start_ms: mean(&container),
        task_extra_ms: mean(&extra),
        ams: am.len(),
        am_start_ms: mean(&am),
        submit_ms: replay["submit_latency_ms_p50"].as_f64().unwrap_or(f64::NAN) / scale,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_reads_tez_history_logs() {
        let dir = std::env::temp_dir().join(format!("tidal-calibrate-{}", std::process::id()));
        let logs = dir.join("logs/nm1/containers/c1");
        std::fs::create_dir_all(&logs).unwrap();
        std::fs::write(dir.join("summary.json"), r#"{"replay": {"time_scale": 0.5, "submit_latency_ms_p50": 1000}}"#)
            .unwrap();
        // Job j's stage s1 has three tasks traced at 2, 4 and 6 s: 1, 2 and 3 s at a scale of 0.5.
        std::fs::write(
            dir.join("workload.json"),
            r#"{"jobs": [{"name": "j", "stages": [{"name": "s1", "task_durations_ms": [2000, 4000, 6000]}]}]}"#,
        )
        .unwrap();
        let attempt = |task: usize, alloc: i64, start: i64, taken: i64, status: &str| {
            format!(
                r#"{{"entitytype":"TEZ_TASK_ATTEMPT_ID","entity":"attempt_1_0001_1_00_{task:06}_0","events":[{{"eventtype":"TASK_ATTEMPT_FINISHED","ts":{}}}],"otherinfo":{{"startTime":{start},"allocationTime":{alloc},"timeTaken":{taken},"status":"{status}"}}}}"#,
                start + taken
            )
        };
        let recs = [
            r#"{"entitytype":"TEZ_APPLICATION_ATTEMPT","events":[{"eventtype":"AM_LAUNCHED","ts":1000}]}"#.to_string(),
            r#"{"entitytype":"TEZ_DAG_ID","entity":"dag_1_0001_1","events":[{"eventtype":"DAG_SUBMITTED","ts":3000}],"primaryfilters":{"dagName":"j"}}"#.to_string(),
            r#"{"entitytype":"TEZ_DAG_ID","events":[{"eventtype":"DAG_STARTED","ts":4000}]}"#.to_string(),
            r#"{"entitytype":"TEZ_VERTEX_ID","entity":"vertex_1_0001_1_00","events":[{"eventtype":"VERTEX_INITIALIZED","ts":4100}],"otherinfo":{"vertexName":"s1"}}"#.to_string(),
            // Each runs 500 ms beyond its scaled duration: 1 s of workload time.
            attempt(0, 10_000, 11_000, 1500, "SUCCEEDED"),
            attempt(1, 10_000, 12_000, 2500, "SUCCEEDED"),
            attempt(2, 10_000, 16_000, 3500, "SUCCEEDED"),
            attempt(2, 10_000, 90_000, 100, "KILLED"),
        ];
        std::fs::write(logs.join("history.txt.appattempt_1_0001_000001"), recs.join("\u{1}") + "\u{1}").unwrap();
        let c = calibrate(&dir).unwrap();
        // Means (1, 2 and 6 s of container start), wall-clock times over the time scale of 0.5;
        // the killed attempt does not count.
        assert_eq!(
            c,
            Calibration {
                container_start_ms: 6000.0,
                tasks: 3,
                task_extra_ms: 1000.0,
                am_start_ms: 6000.0,
                ams: 1,
                submit_ms: 2000.0
            }
        );
        assert_eq!((c.container_overhead_ms(), c.am_overhead_ms()), (7000.0, 12_000.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn write(path: &Path, rows: &[(&str, f64)]) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut s = String::from("job,queue,class,arrival_s,start_s,finish_s,jct_s,deadline_s,met_deadline,tasks\n");
        for (i, (class, jct)) in rows.iter().enumerate() {
            s.push_str(&format!("j{i},q,{class},0,0,{jct},{jct},,,1\n"));
        }
        std::fs::write(path, s).unwrap();
    }

    #[test]
    fn classes_pair_up_and_ratios_are_sim_over_real() {
        let dir = std::env::temp_dir().join(format!("tidal-vs-real-{}", std::process::id()));
        write(&dir.join("real/drf/jobs.csv"), &[("LQ", 10.0), ("LQ", 20.0), ("TQ", 100.0)]);
        write(&dir.join("sim/drf/jobs.csv"), &[("TQ", 80.0), ("LQ", 12.0), ("LQ", 24.0)]);
        let rows = rows(&dir).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].class.as_str(), rows[0].real.avg_s, rows[0].sim.avg_s), ("LQ", 15.0, 18.0));
        assert!((rows[0].avg_ratio() - 1.2).abs() < 1e-9);
        assert!((rows[1].avg_ratio() - 0.8).abs() < 1e-9);
        assert!(table(&rows).contains("| drf | TQ | 1 | 100.0 | 80.0 | 0.80 |"));
        // A class the simulation lacks means the runs are not of the same workload.
        write(&dir.join("sim/drf/jobs.csv"), &[("LQ", 12.0), ("LQ", 24.0)]);
        assert!(rows_err(&dir).contains("classes"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn rows_err(dir: &Path) -> String {
        rows(dir).unwrap_err().to_string()
    }
}
