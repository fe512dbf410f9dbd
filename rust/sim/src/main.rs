//! The `tidal-sim` command line: runs specs, paper checks, comparisons and benchmarks.

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};
use tidal_sim::bench::{self, BenchCase};
use tidal_sim::experiments::{self, Scale};
use tidal_sim::gen::DemandModel;
use tidal_sim::metrics::{improvement, JctStats};
use tidal_sim::{bench_docs, dashboard, export, fidelity_docs, policies, report, runner, spec::Spec, sweep, vs_real};

/// Trace-driven simulator of a YARN cluster running Tidal's scheduling core.
#[derive(Parser)]
#[command(name = "tidal-sim", version, about)]
struct Cli {
    /// No progress bar.
    #[arg(long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run one experiment spec (TOML or JSON) and write jobs.csv, shares.csv, summary.json, SVG
    /// plots, and the core's status.json and history.json.
    Run {
        spec: PathBuf,
        /// Output directory (default target/tidal-sim/<spec name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override the spec's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Override the spec's queue policy.
        #[arg(long)]
        policy: Option<String>,
        /// Override the spec's app policy (the order inside a queue: carbyne, tetris, sjf,
        /// uwfq, cfq, ujf, job-fair, fifo, ...). Knobs of another app policy in the spec are dropped.
        #[arg(long)]
        app_policy: Option<String>,
    },
    /// Resolve a spec into its concrete jobs and write them as JSON (schema/workload.schema.json):
    /// what `tidal-replay` runs on a real cluster.
    Workload {
        spec: PathBuf,
        /// The JSON file to write.
        #[arg(long)]
        out: PathBuf,
        /// Override the spec's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Override the spec's queue policy.
        #[arg(long)]
        policy: Option<String>,
    },
    /// Run a paper check and print our numbers beside the paper's; exits with status 1 when a
    /// check fails. `all` runs every experiment and writes `fidelity.md`.
    Experiment {
        /// Experiment name, or `all`; `--list` shows them.
        name: Option<String>,
        #[arg(long, value_enum, default_value = "full")]
        scale: Scale,
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long)]
        list: bool,
        /// Run one policy in place of another, `POLICY=REPLACEMENT`, both queue policies (e.g.
        /// `bopf=strict-priority`) or both app policies (e.g. `uwfq=ujf`), or turn slot
        /// reservation off (`slot-reservation=none`): the checks credited to POLICY should then
        /// fail.
        #[arg(long, value_parser = parse_swap)]
        swap: Option<(String, String)>,
        /// Demand model of the experiment's generated DAG jobs, for experiments that take one
        /// (carbyne-table4, default multi-resource).
        #[arg(long, value_enum)]
        demands: Option<DemandModel>,
        /// Also exit with status 1 when a paper number is outside ±25% of ours or a reported
        /// (unenforced) check does not pass; every such miss is listed.
        #[arg(long)]
        strict: bool,
    },
    /// Simulation against reality: for every policy with a real run (`DIR/real/<policy>/jobs.csv`,
    /// from tidal-replay) and a simulated one (`DIR/sim/<policy>/jobs.csv`), per-class average and
    /// p95 JCTs side by side with their ratio; also written to DIR/sim-vs-real.csv.
    SimVsReal { dir: PathBuf },
    /// What a tidal-replay run measured of the latencies the simulator models (from its
    /// summary.json and the Tez AMs' history logs under its directory), as the spec's knobs.
    Calibrate { run_dir: PathBuf },
    /// Factors of improvement between two runs' jobs.csv (base / new).
    Compare { base: PathBuf, new: PathBuf },
    /// Write a run's dashboard as one standalone HTML page (everything inlined, nothing fetched)
    /// from its status.json and history.json.
    Report {
        /// The run's output directory.
        run_dir: PathBuf,
        /// The page to write (default <run-dir>/report.html).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run every combination of a sweep file's specs, policies, seeds and machine counts
    /// across the cores: each run's outputs in its own directory, one row per run in sweep.csv.
    Sweep {
        file: PathBuf,
        /// Output directory (default target/tidal-sim/sweep-<file name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Runs at a time (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Rewrite the generated tables of the fidelity page (the blocks between
    /// `<!-- generated: NAME -->` and `<!-- end generated -->`) from an `experiment all` run's
    /// paper.csv and checks.csv files. With `--check`, change nothing and exit with status 1
    /// naming every block that differs from what the files give.
    FidelityDocs {
        /// First copy this `experiment all` output directory's CSVs, reports and fidelity.md
        /// into the results directory (plots and run directories stay behind).
        #[arg(long, conflicts_with = "check")]
        from: Option<PathBuf>,
        /// The run's output directory, one folder of CSVs per experiment.
        #[arg(long, default_value = "docs/results")]
        results: PathBuf,
        /// The page whose blocks to rewrite.
        #[arg(long, default_value = "docs/fidelity.md")]
        docs: PathBuf,
        #[arg(long)]
        check: bool,
    },
    /// Rewrite the generated benchmark tables (the README's, and docs/benchmarks.md's) from a
    /// `make bench` run's CSV files. With `--check`, change nothing and exit with status 1
    /// naming every block that differs from what the files give.
    BenchDocs {
        /// First collect criterion's medians (from this directory of its estimates) into the
        /// run's core.csv.
        #[arg(long)]
        criterion: Option<PathBuf>,
        /// First copy this `make bench` output directory's CSVs into the results directory.
        #[arg(long, conflicts_with = "check")]
        from: Option<PathBuf>,
        /// The committed results: one CSV per benchmark family.
        #[arg(long, default_value = "docs/results/bench")]
        results: PathBuf,
        /// The pages whose blocks to rewrite.
        #[arg(long, default_values = ["README.md", "docs/benchmarks.md"])]
        docs: Vec<PathBuf>,
        #[arg(long)]
        check: bool,
    },
    /// Scale benchmarks on synthetic workloads: wall time and peak memory.
    Bench {
        /// The cases to run, in turn (`all`: every case but the huge ones).
        #[arg(value_enum, default_value = "all")]
        cases: Vec<BenchCase>,
        /// Also write one row per case (counts, CPU time, wall time, peak memory) to this CSV.
        #[arg(long)]
        csv: Option<PathBuf>,
        #[arg(long, default_value = "drf")]
        policy: String,
    },
}

/// A spec with the command line's overrides.
fn load_spec(path: &Path, seed: Option<u64>, policy: Option<String>) -> Result<Spec> {
    let mut s = Spec::load(path)?;
    if let Some(seed) = seed {
        s.seed = seed;
    }
    if let Some(p) = policy {
        policies::check_queue_policy(&p).context("--policy")?;
        s.scheduler.policy = Some(p);
    }
    Ok(s)
}

fn parse_swap(s: &str) -> Result<(String, String), String> {
    let (a, b) = s.split_once('=').ok_or_else(|| format!("'{s}' is not POLICY=REPLACEMENT"))?;
    policies::check_swap(a, b).map_err(|e| e.to_string())?;
    Ok((a.to_string(), b.to_string()))
}

fn read_jcts(path: &Path) -> Result<Vec<f64>> {
    let file = if path.is_dir() { path.join("jobs.csv") } else { path.to_path_buf() };
    let mut r = csv::Reader::from_path(&file).with_context(|| format!("cannot read {}", file.display()))?;
    let col = r
        .headers()?
        .iter()
        .position(|h| h == "jct_s")
        .with_context(|| format!("{}: no jct_s column", file.display()))?;
    let mut v = Vec::new();
    for (i, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("{}: line {}", file.display(), i + 2))?;
        v.push(
            rec[col]
                .parse::<f64>()
                .with_context(|| format!("{}: line {}: jct_s '{}'", file.display(), i + 2, &rec[col]))?,
        );
    }
    Ok(v)
}

/// Prints to stdout; a closed pipe (`| head`) is not an error worth a message.
macro_rules! say {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

fn main_inner(cli: Cli) -> Result<()> {
    let progress = !cli.quiet;
    match cli.cmd {
        Cmd::Run { spec, out, seed, policy, app_policy } => {
            let mut s = load_spec(&spec, seed, policy)?;
            if let Some(p) = app_policy {
                policies::check_app_policy(&p).context("--app-policy")?;
                policies::set_app_policy(&mut s.scheduler, &p);
            }
            let out = out.unwrap_or_else(|| experiments::default_out(&s.name));
            let run = runner::run_spec(&s, progress)?;
            let summary = report::write_all(&run, s.sim.fairness_window_ms, &out)?;
            say!("{}", serde_json::to_string_pretty(&summary)?);
            eprintln!("outputs in {}", out.display());
            eprintln!("dashboard page: tidal-sim report {}", out.display());
        }
        Cmd::Workload { spec, out, seed, policy } => {
            let s = load_spec(&spec, seed, policy)?;
            let prepared = runner::prepare(&s, false)?;
            let doc = export::workload_doc(&s, &prepared)?;
            std::fs::write(&out, serde_json::to_string(&doc)?)
                .with_context(|| format!("cannot write {}", out.display()))?;
            eprintln!("{} jobs of {} ({}) in {}", doc.jobs.len(), s.name, doc.policy, out.display());
        }
        Cmd::Experiment { name, scale, out, list, swap, demands, strict } => {
            if list || name.is_none() {
                for e in experiments::EXPERIMENTS {
                    let missing: Vec<&str> =
                        e.policies.iter().copied().filter(|p| policies::check_policy(p).is_err()).collect();
                    let note = if missing.is_empty() {
                        String::new()
                    } else {
                        format!(" [needs policies: {}]", missing.join(", "))
                    };
                    say!("{:<16} {}{}", e.name, e.about, note);
                }
                return Ok(());
            }
            let name = name.expect("checked");
            let swap = swap.as_ref().map(|(a, b)| (a.as_str(), b.as_str()));
            let (found, out) = if name == "all" {
                if swap.is_some() || demands.is_some() {
                    bail!("--swap and --demands apply to one experiment, not all");
                }
                let out = out.unwrap_or_else(|| experiments::default_out("all"));
                (experiments::run_all(scale, &out, progress)?, out)
            } else {
                let e = experiments::find(&name)?;
                let out = out.unwrap_or_else(|| experiments::default_out(e.name));
                (vec![(e.name, experiments::run_with(e, scale, &out, swap, demands)?)], out)
            };
            let (mut failed, mut misses) = (Vec::new(), Vec::new());
            for (name, f) in &found {
                say!("{}", f.text);
                failed.extend(f.failures().iter().map(|c| format!("{name}: {}", c.name)));
                misses.extend(f.misses().into_iter().map(|m| format!("{name}: {m}")));
            }
            eprintln!("outputs in {}", out.display());
            if !misses.is_empty() {
                say!("not reproduced ({}):\n  {}", misses.len(), misses.join("\n  "));
            }
            if !failed.is_empty() {
                bail!("{} check(s) failed:\n  {}", failed.len(), failed.join("\n  "));
            }
            if strict && !misses.is_empty() {
                bail!("--strict: {} result(s) do not reproduce the papers (listed above)", misses.len());
            }
        }
        Cmd::SimVsReal { dir } => {
            let rows = vs_real::rows(&dir)?;
            say!("{}", vs_real::table(&rows).trim_end());
            let csv = dir.join("sim-vs-real.csv");
            vs_real::write_csv(&rows, &csv)?;
            eprintln!("table in {}", csv.display());
        }
        Cmd::Calibrate { run_dir } => {
            let c = vs_real::calibrate(&run_dir)?;
            say!(
                "{}: container start mean {:.0} ms ({} tasks), task beyond its duration mean {:.0} ms, AM start-up mean {:.0} ms ({} AMs), submission p50 {:.0} ms",
                run_dir.display(),
                c.container_start_ms,
                c.tasks,
                c.task_extra_ms,
                c.am_start_ms,
                c.ams,
                c.submit_ms
            );
            say!(
                "  as [sim] knobs: container_overhead_ms = {:.0}, am_overhead_ms = {:.0}, submit_latency_ms = {:.0}",
                c.container_overhead_ms(),
                c.am_overhead_ms(),
                c.submit_ms
            );
        }
        Cmd::Compare { base, new } => {
            let (a, b) = (JctStats::of(&read_jcts(&base)?), JctStats::of(&read_jcts(&new)?));
            if a.jobs == 0 || b.jobs == 0 {
                bail!("a run has no jobs");
            }
            let f = improvement(&a, &b);
            say!("{:<8} {:>10} {:>10} {:>8}", "", "base s", "new s", "factor");
            for (n, x, y, z) in [
                ("avg", a.avg_s, b.avg_s, f.avg),
                ("p25", a.p25_s, b.p25_s, f.p25),
                ("p50", a.p50_s, b.p50_s, f.p50),
                ("p75", a.p75_s, b.p75_s, f.p75),
                ("p95", a.p95_s, b.p95_s, f.p95),
            ] {
                say!("{n:<8} {x:>10.1} {y:>10.1} {z:>8.2}");
            }
        }
        Cmd::Report { run_dir, out } => {
            let out = out.unwrap_or_else(|| run_dir.join(dashboard::REPORT_FILE));
            dashboard::write_report(&run_dir, &out)?;
            eprintln!("report in {}", out.display());
        }
        Cmd::Sweep { file, out, threads } => {
            let runs = sweep::load(&file)?;
            let out = out.unwrap_or_else(|| sweep::default_dir(&file));
            let threads = threads.unwrap_or_else(sweep::default_threads);
            if threads == 0 {
                bail!("--threads must be at least 1");
            }
            eprintln!("{} runs on {} threads", runs.len(), threads.min(runs.len()));
            let rows = sweep::run(runs, threads, &out)?;
            for r in &rows {
                say!(
                    "{:<48} avg JCT {:>9.1} s  makespan {:>9.1} s  wall {:>7.1} s",
                    r.dir,
                    r.summary.jct.avg_s,
                    r.summary.makespan_s,
                    r.wall_s
                );
            }
            eprintln!("outputs in {}, one row per run in {}", out.display(), out.join("sweep.csv").display());
        }
        Cmd::FidelityDocs { from, results, docs, check } => {
            if let Some(run) = from {
                let copied = fidelity_docs::import_run(&run, &results)?;
                eprintln!("{} experiments' results in {}", copied.len(), results.display());
            }
            if check {
                fidelity_docs::check_files(&results, &docs)?;
                eprintln!("{}: every generated block agrees with {}", docs.display(), results.display());
            } else {
                let changed = fidelity_docs::rewrite_files(&results, &docs)?;
                if changed.is_empty() {
                    eprintln!("{}: every generated block was up to date", docs.display());
                } else {
                    eprintln!("{}: rewrote {}", docs.display(), changed.join(", "));
                }
            }
        }
        Cmd::BenchDocs { criterion, from, results, docs, check } => {
            if let Some(dir) = criterion {
                let out = from.as_deref().unwrap_or(&results);
                bench_docs::import_criterion(&dir, out)?;
                eprintln!("criterion's medians in {}", out.join("core.csv").display());
            }
            if let Some(run) = from {
                bench_docs::import_run(&run, &results)?;
                eprintln!("the run's results in {}", results.display());
            }
            for page in &docs {
                if check {
                    bench_docs::check_files(&results, page)?;
                    eprintln!("{}: every generated block agrees with {}", page.display(), results.display());
                } else {
                    let changed = bench_docs::rewrite_files(&results, page)?;
                    eprintln!(
                        "{}: rewrote {}",
                        page.display(),
                        if changed.is_empty() { "nothing".into() } else { changed.join(", ") }
                    );
                }
            }
            if !check {
                say!("{}", bench_docs::render("benchmarks", &bench_docs::BenchResults::load(&results)?)?.trim_end());
            }
        }
        Cmd::Bench { cases, csv, policy } => {
            policies::check_policy(&policy)?;
            say!("{}", bench::run(&cases, &policy, progress, csv.as_deref())?.trim_end());
        }
    }
    Ok(())
}

fn main() {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("tidal-sim: internal error: {info}");
    }));
    let cli = Cli::parse();
    if let Err(e) = main_inner(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}
