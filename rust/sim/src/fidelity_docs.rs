//! The fidelity page's tables, rendered from the `paper.csv` and `checks.csv` files an
//! `experiment all` run writes, so the page cannot drift from the committed results.
//!
//! The page's generated blocks are marked as [`crate::marked_blocks`] describes; [`rewrite`]
//! fills each with what [`render`] gives for its name and [`check`] names every block whose
//! text differs. Tables are keyed on the experiments' metric names: a metric a table needs
//! that a `paper.csv` lacks is an error naming it, never an empty cell.

use crate::marked_blocks;
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// One row of an experiment's `paper.csv`.
#[derive(Clone, Debug, Deserialize)]
pub struct PaperCsvRow {
    pub metric: String,
    pub paper: f64,
    pub ours: f64,
    pub ratio: f64,
    pub within_25pct: bool,
}

/// One row of an experiment's `checks.csv`.
#[derive(Clone, Debug, Deserialize)]
pub struct CheckCsvRow {
    pub check: String,
    pub verdict: String,
    pub enforced: bool,
    pub subject: String,
    pub subject_holds: bool,
    pub subject_detail: String,
    pub baseline: String,
    pub baseline_holds: String,
    pub baseline_detail: String,
}

impl CheckCsvRow {
    pub fn passed(&self) -> bool {
        self.verdict == "pass"
    }
}

/// One experiment's committed results.
#[derive(Clone, Debug, Default)]
pub struct Experiment {
    pub rows: Vec<PaperCsvRow>,
    pub checks: Vec<CheckCsvRow>,
}

/// Every experiment's results, by experiment name.
#[derive(Clone, Debug, Default)]
pub struct Results {
    pub experiments: BTreeMap<String, Experiment>,
}

/// The records of a CSV file, an error naming the file and record when one does not parse.
pub(crate) fn read_csv<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let mut r = csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    r.deserialize()
        .enumerate()
        .map(|(i, rec)| rec.with_context(|| format!("{}: record {}", path.display(), i + 1)))
        .collect()
}

impl Results {
    /// Reads `DIR/<experiment>/paper.csv` and `checks.csv` for every experiment directory.
    pub fn load(dir: &Path) -> Result<Results> {
        let mut experiments = BTreeMap::new();
        let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
        for entry in entries {
            let path = entry?.path();
            if !path.join("paper.csv").is_file() {
                continue;
            }
            let name = path.file_name().and_then(|n| n.to_str()).context("experiment directory name")?.to_string();
            let e =
                Experiment { rows: read_csv(&path.join("paper.csv"))?, checks: read_csv(&path.join("checks.csv"))? };
            experiments.insert(name, e);
        }
        if experiments.is_empty() {
            bail!("{}: no experiment directories with a paper.csv", dir.display());
        }
        Ok(Results { experiments })
    }

    /// Experiment names in the order the simulator runs them, then any others by name.
    fn ordered(&self) -> Vec<(&str, &Experiment)> {
        let known: Vec<&str> = crate::experiments::EXPERIMENTS.iter().map(|e| e.name).collect();
        let mut v: Vec<(&str, &Experiment)> = self.experiments.iter().map(|(n, e)| (n.as_str(), e)).collect();
        v.sort_by_key(|(n, _)| (known.iter().position(|k| k == n).unwrap_or(known.len()), n.to_string()));
        v
    }

    fn experiment(&self, name: &str) -> Result<&Experiment> {
        self.experiments.get(name).with_context(|| format!("no results for experiment {name}"))
    }

    /// The paper row `metric` of experiment `exp`.
    fn row(&self, exp: &str, metric: &str) -> Result<&PaperCsvRow> {
        self.experiment(exp)?
            .rows
            .iter()
            .find(|r| r.metric == metric)
            .with_context(|| format!("paper.csv of {exp} has no metric '{metric}'"))
    }
}

/// `paper / ours (ratio)`, the ratio starred when outside ±25%.
fn cell(r: &PaperCsvRow) -> String {
    format!("{:.2} / {:.2} ({:.2}{})", r.paper, r.ours, r.ratio, if r.within_25pct { "" } else { "*" })
}

fn verdict(r: &PaperCsvRow) -> &'static str {
    if r.within_25pct {
        "within ±25%"
    } else {
        "outside"
    }
}

/// Markdown table cells: `|` would end the cell.
fn esc(s: &str) -> String {
    s.replace('|', "\\|")
}

const BOPF_BENCHES: [(&str, &str); 3] = [("BB", "BigBench"), ("TPC-DS", "TPC-DS"), ("TPC-H", "TPC-H")];

/// BoPF Table 4 (1-32 TQs) and the Table 3 set-up (1-8 TQs): the LQ's gain over DRF.
fn bopf_grid(res: &Results) -> Result<String> {
    let tqs = [1, 2, 4, 8, 16, 32];
    let mut md = String::from("| experiment | 1 TQ | 2 | 4 | 8 | 16 | 32 TQs |\n|---|---|---|---|---|---|---|\n");
    for (exp, table, counts) in [("bopf-table4", "Table 4", &tqs[..]), ("bopf-table3", "Table 3 set-up", &tqs[..4])] {
        for (bench, label) in BOPF_BENCHES {
            let _ = write!(md, "| {table}, {label} |");
            for n in tqs {
                if counts.contains(&n) {
                    let _ = write!(md, " {} |", cell(res.row(exp, &format!("{bench} {n} TQs: LQ gain DRF/BoPF"))?));
                } else {
                    md.push_str(" |");
                }
            }
            md.push('\n');
        }
    }
    Ok(md)
}

/// Carbyne Table 4's rows: per set-up the paper prints, per-job factors against DRF and Tetris.
fn carbyne_table4(res: &Results) -> Result<String> {
    let mut md = String::from(
        "| set-up | baseline | per-job p50: paper / ours (ratio) | per-job p95: paper / ours (ratio) |\n|---|---|---|---|\n",
    );
    for setup in ["TPC-DS online", "Facebook"] {
        for base in ["DRF", "Tetris"] {
            let p = |q: &str| res.row("carbyne-table4", &format!("{setup}: factor vs {base}, per-job {q}"));
            let _ = writeln!(md, "| {setup} | {base} | {} | {} |", cell(p("p50")?), cell(p("p95")?));
        }
    }
    Ok(md)
}

/// UWFQ Table 1: average and per-user response times per scheduler, one table per scenario.
fn uwfq_table1(res: &Results) -> Result<String> {
    let mut md = String::new();
    for (scenario, cols, heads) in [
        ("scenario 1", ["frequent users'", "infrequent users'"], ["frequent users", "infrequent users"]),
        ("scenario 2", ["first user's", "last user's"], ["first user", "last user"]),
    ] {
        if !md.is_empty() {
            md.push('\n');
        }
        let _ = writeln!(
            md,
            "| {scenario}: paper / ours (ratio), s | average | {} | {} |\n|---|---|---|---|",
            heads[0], heads[1]
        );
        for sched in ["UJF", "UWFQ", "CFQ", "job-fair"] {
            let p = |what: &str| res.row("uwfq-users", &format!("{scenario}: {sched} {what} response time (s)"));
            let _ =
                writeln!(md, "| {sched} | {} | {} | {} |", cell(p("average")?), cell(p(cols[0])?), cell(p(cols[1])?));
        }
    }
    Ok(md)
}

/// UWFQ Table 2 (the macro-benchmark): run time and response times by group per scheduler.
fn uwfq_table2(res: &Results) -> Result<String> {
    let mut md = String::from(
        "| macro-benchmark: paper / ours (ratio), s | run time | average | first 80% | next 15% | last 5% |\n|---|---|---|---|---|---|\n",
    );
    for sched in ["UJF", "UWFQ", "CFQ", "job-fair"] {
        let _ = write!(md, "| {sched} |");
        for col in crate::experiments::MACRO_COLUMNS {
            let _ = write!(md, " {} |", cell(res.row("uwfq-users", &format!("macro: {sched} {col} (s)"))?));
        }
        md.push('\n');
    }
    Ok(md)
}

/// Every paper row of the experiments named (separated by spaces), in their order; with more
/// than one, a first column names the experiment.
fn paper_rows(res: &Results, exps: &str) -> Result<String> {
    let exps: Vec<&str> = exps.split_whitespace().collect();
    let many = exps.len() > 1;
    let mut md = String::from(if many { "| experiment " } else { "" });
    md.push_str("| metric | paper | Tidal | ratio | verdict |\n");
    md.push_str(if many { "|---" } else { "" });
    md.push_str("|---|---:|---:|---:|---|\n");
    for exp in exps {
        let e = res.experiment(exp)?;
        if e.rows.is_empty() {
            bail!("paper.csv of {exp} has no rows");
        }
        for r in &e.rows {
            if many {
                let _ = write!(md, "| {exp} ");
            }
            let (m, v) = (esc(&r.metric), verdict(r));
            let _ = writeln!(md, "| {m} | {:.2} | {:.2} | {:.2} | {v} |", r.paper, r.ours, r.ratio);
        }
    }
    Ok(md)
}

/// Who a check ran on and what it measured, subject then baseline.
fn check_detail(c: &CheckCsvRow) -> String {
    let side = |who: &str, what: &str, detail: &str| {
        let d = if detail.is_empty() { String::new() } else { format!(", {detail}") };
        format!("{who}: {what}{d}")
    };
    let what = if c.subject_holds { "holds" } else { "does NOT hold" };
    let mut s = side(&c.subject, what, &c.subject_detail);
    if !c.baseline.is_empty() {
        let what = if c.baseline_holds == "true" { "holds too" } else { "does not hold, as it must" };
        let _ = write!(s, "; baseline {}", side(&c.baseline, what, &c.baseline_detail));
    }
    s
}

fn check_verdict(c: &CheckCsvRow) -> &'static str {
    match (c.passed(), c.enforced) {
        (true, _) => "pass",
        (false, true) => "FAIL",
        (false, false) => "not met (reported)",
    }
}

/// Every check of one experiment but the passing loaded-run ones, in its order.
fn checks(res: &Results, exp: &str) -> Result<String> {
    let e = res.experiment(exp)?;
    let mut md = String::from("| check | verdict | measured |\n|---|---|---|\n");
    for c in e.checks.iter().filter(|c| !c.check.starts_with("loaded run") || !c.passed()) {
        let _ = writeln!(md, "| {} | {} | {} |", esc(&c.check), check_verdict(c), esc(&check_detail(c)));
    }
    Ok(md)
}

/// Every miss across experiments: paper rows outside ±25%, then checks that do not pass.
fn misses(res: &Results) -> Result<String> {
    let mut md = String::from("| experiment | miss | paper | Tidal | ratio or detail |\n|---|---|---:|---:|---|\n");
    let mut any = false;
    for (exp, e) in res.ordered() {
        for r in e.rows.iter().filter(|r| !r.within_25pct) {
            any = true;
            let _ = writeln!(md, "| {exp} | {} | {:.2} | {:.2} | {:.2} |", esc(&r.metric), r.paper, r.ours, r.ratio);
        }
    }
    for (exp, e) in res.ordered() {
        for c in e.checks.iter().filter(|c| !c.passed()) {
            any = true;
            let kind = format!("check {}", check_verdict(c));
            let detail = check_detail(c);
            let _ = writeln!(md, "| {exp} | {kind}: {} | | | {} |", esc(&c.check), esc(&detail));
        }
    }
    if !any {
        md.push_str("| none | | | | |\n");
    }
    Ok(md)
}

/// The names [`render`] knows, for error messages.
pub const BLOCKS: &[&str] = &[
    "bopf-tq-grid",
    "carbyne-table4",
    "uwfq-table1",
    "uwfq-table2",
    "paper-rows EXPERIMENT...",
    "checks EXPERIMENT",
    "misses",
];

/// The text of block `name`, ending in a newline.
pub fn render(name: &str, res: &Results) -> Result<String> {
    let md = match name {
        "bopf-tq-grid" => bopf_grid(res),
        "carbyne-table4" => carbyne_table4(res),
        "uwfq-table1" => uwfq_table1(res),
        "uwfq-table2" => uwfq_table2(res),
        "misses" => misses(res),
        _ => match (name.strip_prefix("paper-rows "), name.strip_prefix("checks ")) {
            (Some(exps), _) => paper_rows(res, exps),
            (_, Some(exp)) => checks(res, exp.trim()),
            _ => bail!("unknown generated block '{name}' (known: {})", BLOCKS.join(", ")),
        },
    };
    md.with_context(|| format!("generated block '{name}'"))
}

/// `doc` with every marked block's body replaced by the table the results give.
pub fn rewrite(doc: &str, res: &Results) -> Result<String> {
    marked_blocks::rewrite(doc, |name| render(name, res))
}

/// The names of the blocks whose body differs from what the results give (empty: the page
/// agrees with the results). A page without blocks is an error.
pub fn check(doc: &str, res: &Results) -> Result<Vec<String>> {
    marked_blocks::stale(doc, |name| render(name, res))
}

/// [`check`] on files: an error naming every stale block and the command that regenerates
/// them.
pub fn check_files(results: &Path, docs: &Path) -> Result<()> {
    let res = Results::load(results)?;
    let regenerate = format!("tidal-sim fidelity-docs --results {} --docs {}", results.display(), docs.display());
    marked_blocks::check_file(docs, results, &regenerate, |name| render(name, &res))
}

/// The files of an `experiment all` run kept as its committed results: per experiment these,
/// and the run's `fidelity.md`. Plots and each set-up's run directory stay behind.
pub const KEPT: &[&str] = &["paper.csv", "checks.csv", "report.txt"];

/// Whether `a` and `b` name the same existing directory: a run imported into itself (tables
/// regenerated from the committed files) must not be copied, since copying a file onto itself
/// truncates it.
pub(crate) fn same_dir(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

/// Copies the [`KEPT`] files of the run in `run` into `results`, replacing what was there; an
/// experiment `results` has that the run lacks loses its files. Returns the run's experiments,
/// which `results` now holds (already held, when `run` is `results`).
pub fn import_run(run: &Path, results: &Path) -> Result<Vec<String>> {
    let fresh = Results::load(run)?;
    std::fs::create_dir_all(results).with_context(|| format!("cannot create {}", results.display()))?;
    if same_dir(run, results) {
        return Ok(fresh.experiments.into_keys().collect());
    }
    if let Ok(old) = Results::load(results) {
        for name in old.experiments.keys().filter(|n| !fresh.experiments.contains_key(*n)) {
            for f in KEPT {
                let path = results.join(name).join(f);
                if path.is_file() {
                    std::fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
                }
            }
            let _ = std::fs::remove_dir(results.join(name));
        }
    }
    for name in fresh.experiments.keys() {
        let dir = results.join(name);
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for f in KEPT {
            let (from, to) = (run.join(name).join(f), dir.join(f));
            std::fs::copy(&from, &to).with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
        }
    }
    let (from, to) = (run.join("fidelity.md"), results.join("fidelity.md"));
    std::fs::copy(&from, &to).with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))?;
    Ok(fresh.experiments.keys().cloned().collect())
}

/// [`rewrite`] on files; returns the names of the blocks that changed.
pub fn rewrite_files(results: &Path, docs: &Path) -> Result<Vec<String>> {
    let res = Results::load(results)?;
    marked_blocks::rewrite_file(docs, |name| render(name, &res))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(metric: &str, paper: f64, ours: f64) -> PaperCsvRow {
        let ratio = ours / paper;
        PaperCsvRow { metric: metric.into(), paper, ours, ratio, within_25pct: (ratio - 1.0).abs() <= 0.25 }
    }

    fn results() -> Results {
        let mut res = Results::default();
        let e = Experiment {
            rows: vec![row("a: worst slowdown", 3.9, 2.8), row("b: copies cut JCT (%)", 73.0, 80.0)],
            checks: vec![CheckCsvRow {
                check: "a: reservation helps".into(),
                verdict: "fail".into(),
                enforced: false,
                subject: "reserve".into(),
                subject_holds: false,
                subject_detail: "1.2 vs 1.1".into(),
                baseline: String::new(),
                baseline_holds: String::new(),
                baseline_detail: String::new(),
            }],
        };
        res.experiments.insert("slot-reservation".into(), e);
        res
    }

    fn page(res: &Results) -> String {
        let doc = "prose\n<!-- generated: paper-rows slot-reservation -->\nold\n<!-- end generated -->\nmore\n\
                   <!-- generated: misses -->\n<!-- end generated -->\nend\n";
        rewrite(doc, res).unwrap()
    }

    #[test]
    fn rewriting_fills_the_blocks_and_keeps_the_prose() {
        let res = results();
        let doc = page(&res);
        assert!(doc.starts_with("prose\n<!-- generated: paper-rows slot-reservation -->\n| metric |"), "{doc}");
        assert!(doc.contains("| a: worst slowdown | 3.90 | 2.80 | 0.72 | outside |"), "{doc}");
        assert!(doc.contains("| slot-reservation | a: worst slowdown | 3.90 | 2.80 | 0.72 |"), "{doc}");
        assert!(doc.contains("check not met (reported): a: reservation helps"), "{doc}");
        assert!(doc.contains("|\n<!-- end generated -->\nmore\n"), "{doc}");
        assert!(doc.ends_with("<!-- end generated -->\nend\n"), "{doc}");
        assert_eq!(check(&doc, &res).unwrap(), Vec::<String>::new());
        assert_eq!(rewrite(&doc, &res).unwrap(), doc, "rewriting is idempotent");
    }

    #[test]
    fn a_changed_csv_value_fails_the_check_naming_the_block() {
        let mut res = results();
        let doc = page(&res);
        res.experiments.get_mut("slot-reservation").unwrap().rows[1] = row("b: copies cut JCT (%)", 73.0, 81.0);
        assert_eq!(check(&doc, &res).unwrap(), ["paper-rows slot-reservation"]);
        // A value that moves a row outside ±25% changes the misses too.
        res.experiments.get_mut("slot-reservation").unwrap().rows[1] = row("b: copies cut JCT (%)", 73.0, 99.0);
        assert_eq!(check(&doc, &res).unwrap(), ["paper-rows slot-reservation", "misses"]);
    }

    #[test]
    fn a_hand_edited_block_fails_the_check() {
        let res = results();
        let doc = page(&res).replacen("| 3.90 | 2.80 |", "| 3.90 | 2.90 |", 1);
        assert_eq!(check(&doc, &res).unwrap(), ["paper-rows slot-reservation"]);
    }

    #[test]
    fn a_missing_metric_is_an_error_naming_it() {
        let res = results();
        let err = format!("{:#}", render("carbyne-table4", &res).unwrap_err());
        assert!(err.contains("generated block 'carbyne-table4'"), "{err}");
        assert!(err.contains("no results for experiment carbyne-table4"), "{err}");
        let mut res = res;
        res.experiments.insert(
            "carbyne-table4".into(),
            Experiment { rows: vec![row("TPC-DS online: factor vs DRF, per-job p50", 1.59, 1.9)], checks: vec![] },
        );
        let err = format!("{:#}", render("carbyne-table4", &res).unwrap_err());
        assert!(
            err.contains("paper.csv of carbyne-table4 has no metric 'TPC-DS online: factor vs DRF, per-job p95'"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_block_is_an_error() {
        let res = results();
        assert!(format!("{:#}", render("nope", &res).unwrap_err()).contains("unknown generated block 'nope'"));
    }
}
