//! Sweeps: every combination of specs, queue policies, seeds and cluster sizes, run across the
//! machine's cores, each run's usual outputs in its own directory and one row per run in
//! `sweep.csv`.
//!
//! ```toml
//! specs = ["bopf.toml"]                   # relative to the sweep file
//! policies = ["drf", "strict-priority"]   # default: each spec's own
//! seeds = [1, 2, 3]                       # default: each spec's own
//! machines = [40, 80]                     # cluster sizes; default: each spec's own
//! ```
//!
//! Trace files are loaded once and shared read-only by all runs.

use crate::metrics::Summary;
use crate::policies;
use crate::report;
use crate::runner::{prepare_from, run_prepared};
use crate::spec::Spec;
use crate::workload::Traces;
use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The sweep file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    /// Spec files (TOML or JSON), relative to the sweep file.
    pub specs: Vec<PathBuf>,
    /// Queue policies; empty: each spec's own.
    #[serde(default)]
    pub policies: Vec<String>,
    /// Seeds; empty: each spec's own.
    #[serde(default)]
    pub seeds: Vec<u64>,
    /// Machine counts; empty: each spec's own.
    #[serde(default)]
    pub machines: Vec<usize>,
}

/// One combination: the spec with the axes' values applied.
pub struct SweepRun {
    pub spec: Spec,
    /// Where its outputs go, under the sweep's directory.
    pub dir: String,
}

/// The CSV row of a finished run.
pub struct SweepRow {
    pub spec: String,
    pub seed: u64,
    pub machines: usize,
    pub dir: String,
    pub summary: Summary,
    /// Building the workload and simulating it.
    pub wall_s: f64,
}

/// Errors name the field at fault: `specs[1]`, `policies[0]`, ...
fn unique<T: Ord + std::fmt::Debug>(v: &[T], field: &str) -> Result<()> {
    let mut seen = BTreeSet::new();
    for (i, x) in v.iter().enumerate() {
        if !seen.insert(x) {
            bail!("sweep field `{field}[{i}]`: {x:?} is listed twice");
        }
    }
    Ok(())
}

impl SweepFile {
    pub fn parse(text: &str) -> Result<SweepFile> {
        let f: SweepFile = toml::from_str(text).map_err(|e| anyhow!("{e}"))?;
        if f.specs.is_empty() {
            bail!("sweep field `specs` is empty: name at least one spec file");
        }
        unique(&f.policies, "policies")?;
        unique(&f.seeds, "seeds")?;
        unique(&f.machines, "machines")?;
        for (i, p) in f.policies.iter().enumerate() {
            policies::check_queue_policy(p).with_context(|| format!("sweep field `policies[{i}]`"))?;
        }
        if let Some(i) = f.machines.iter().position(|&m| m == 0) {
            bail!("sweep field `machines[{i}]`: a cluster needs at least one machine");
        }
        Ok(f)
    }

    /// Every combination, specs loaded relative to `base` (the sweep file's directory).
    pub fn runs(&self, base: &Path) -> Result<Vec<SweepRun>> {
        let mut runs = Vec::new();
        let mut dirs = BTreeSet::new();
        for (i, path) in self.specs.iter().enumerate() {
            let spec = Spec::load(&base.join(path)).with_context(|| format!("sweep field `specs[{i}]`"))?;
            if spec.scheduler.queue_file.is_some() && !self.policies.is_empty() {
                bail!(
                    "sweep field `specs[{i}]`: {} names scheduler.queue_file, whose policy `policies` cannot override",
                    path.display()
                );
            }
            let or_own = |v: &[String]| {
                if v.is_empty() {
                    vec![spec.scheduler.policy.clone()]
                } else {
                    v.iter().cloned().map(Some).collect()
                }
            };
            for policy in or_own(&self.policies) {
                for &seed in if self.seeds.is_empty() { std::slice::from_ref(&spec.seed) } else { &self.seeds } {
                    let own = spec.cluster.machines;
                    for &machines in if self.machines.is_empty() { std::slice::from_ref(&own) } else { &self.machines }
                    {
                        let mut s = spec.clone();
                        s.seed = seed;
                        s.cluster.machines = machines;
                        s.scheduler.policy = policy.clone();
                        let p = policy.as_deref().unwrap_or("own");
                        let dir = format!("{}-{p}-seed{seed}-m{machines}", spec.name);
                        if !dirs.insert(dir.clone()) {
                            bail!(
                                "sweep field `specs[{i}]`: two runs would both write {dir} (two specs named '{}')",
                                spec.name
                            );
                        }
                        runs.push(SweepRun { spec: s, dir });
                    }
                }
            }
        }
        Ok(runs)
    }
}

/// Runs every combination on `threads` threads, writing each run's outputs under `out` and
/// `out/sweep.csv`. Rows come back in the order of the combinations.
pub fn run(runs: Vec<SweepRun>, threads: usize, out: &Path) -> Result<Vec<SweepRow>> {
    let traces = Traces::default();
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<Option<Result<SweepRow>>>> = Mutex::new((0..runs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, runs.len().max(1)) {
            scope.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(r) = runs.get(i) else { break };
                    let row = run_one(r, &traces, out).with_context(|| format!("run {}", r.dir));
                    if row.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    results.lock().expect("no worker panics holding the lock")[i] = Some(row);
                }
            });
        }
    });
    let rows =
        results.into_inner().expect("no worker panicked").into_iter().flatten().collect::<Result<Vec<SweepRow>>>()?;
    write_csv(&rows, &out.join("sweep.csv"))?;
    Ok(rows)
}

fn run_one(r: &SweepRun, traces: &Traces, out: &Path) -> Result<SweepRow> {
    let t = Instant::now();
    let p = prepare_from(&r.spec, false, traces)?;
    let run = run_prepared(&p)?;
    let wall_s = t.elapsed().as_secs_f64();
    let summary = report::write_all(&run, p.window_ms, &out.join(&r.dir))?;
    Ok(SweepRow {
        spec: r.spec.name.clone(),
        seed: r.spec.seed,
        machines: r.spec.cluster.machines,
        dir: r.dir.clone(),
        summary,
        wall_s,
    })
}

/// One row per run; per-class and per-resource columns for every class and resource any run
/// has, empty where a run has none.
pub fn write_csv(rows: &[SweepRow], path: &Path) -> Result<()> {
    let classes: BTreeSet<&str> = rows.iter().flat_map(|r| r.summary.jct_by_class.keys().map(String::as_str)).collect();
    let resources: BTreeSet<&str> =
        rows.iter().flat_map(|r| r.summary.utilization.keys().map(String::as_str)).collect();
    let mut w = csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    let mut header: Vec<String> =
        ["spec", "policy", "seed", "machines", "jobs", "unfinished", "avg_jct_s", "p95_jct_s"].map(String::from).into();
    for c in &classes {
        header.push(format!("{c}_avg_jct_s"));
        header.push(format!("{c}_p95_jct_s"));
    }
    header.push("makespan_s".into());
    header.extend(resources.iter().map(|r| format!("utilization_{r}")));
    header.extend(["wall_s", "dir"].map(String::from));
    w.write_record(&header)?;
    let num = |x: f64| format!("{x:.3}");
    for r in rows {
        let s = &r.summary;
        let mut rec = vec![
            r.spec.clone(),
            s.policy.clone(),
            r.seed.to_string(),
            r.machines.to_string(),
            s.jobs.to_string(),
            s.unfinished.to_string(),
            num(s.jct.avg_s),
            num(s.jct.p95_s),
        ];
        for c in &classes {
            match s.jct_by_class.get(*c) {
                Some(j) => rec.extend([num(j.avg_s), num(j.p95_s)]),
                None => rec.extend([String::new(), String::new()]),
            }
        }
        rec.push(num(s.makespan_s));
        rec.extend(resources.iter().map(|k| s.utilization.get(*k).map_or(String::new(), |u| format!("{u:.4}"))));
        rec.push(format!("{:.2}", r.wall_s));
        rec.push(r.dir.clone());
        w.write_record(&rec)?;
    }
    w.flush().with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// The threads a sweep uses by default: one per core.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Reads a sweep file and its specs.
pub fn load(path: &Path) -> Result<Vec<SweepRun>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read sweep file {}", path.display()))?;
    let f = SweepFile::parse(&text).with_context(|| format!("{}", path.display()))?;
    f.runs(path.parent().unwrap_or(Path::new(".")))
}

/// The sweep's output directory when none is given: named after the file.
pub fn default_dir(path: &Path) -> PathBuf {
    let stem = path.file_stem().map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
    crate::experiments::default_out(&format!("sweep-{stem}"))
}
