//! Simulation against reality: per-class JCTs of a real run (`tidal-replay`) beside the
//! simulation of the same workload, read from both runs' `jobs.csv`.

use crate::metrics::JctStats;
use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::Path;

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

/// Rows for every `<policy>/real/jobs.csv` beside a `<policy>/sim/jobs.csv` under `dir`, by policy
/// then class. A class only one side has is an error: the runs did not replay the same jobs.
pub fn rows(dir: &Path) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("real/jobs.csv").is_file() && p.join("sim/jobs.csv").is_file())
        .collect();
    entries.sort();
    for p in entries {
        let policy = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let real = jcts_by_class(&p.join("real/jobs.csv"))?;
        let sim = jcts_by_class(&p.join("sim/jobs.csv"))?;
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
        bail!("no <policy>/real/jobs.csv with a <policy>/sim/jobs.csv under {}", dir.display());
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

#[cfg(test)]
mod tests {
    use super::*;

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
        write(&dir.join("drf/real/jobs.csv"), &[("LQ", 10.0), ("LQ", 20.0), ("TQ", 100.0)]);
        write(&dir.join("drf/sim/jobs.csv"), &[("TQ", 80.0), ("LQ", 12.0), ("LQ", 24.0)]);
        let rows = rows(&dir).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].class.as_str(), rows[0].real.avg_s, rows[0].sim.avg_s), ("LQ", 15.0, 18.0));
        assert!((rows[0].avg_ratio() - 1.2).abs() < 1e-9);
        assert!((rows[1].avg_ratio() - 0.8).abs() < 1e-9);
        assert!(table(&rows).contains("| drf | TQ | 1 | 100.0 | 80.0 | 0.80 |"));
        // A class the simulation lacks means the runs are not of the same workload.
        write(&dir.join("drf/sim/jobs.csv"), &[("LQ", 12.0), ("LQ", 24.0)]);
        assert!(rows_err(&dir).contains("classes"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn rows_err(dir: &Path) -> String {
        rows(dir).unwrap_err().to_string()
    }
}
