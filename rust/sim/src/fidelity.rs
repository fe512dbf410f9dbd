//! What an experiment found, in a form that can fail: paper numbers beside ours, and checks.
//!
//! Each check runs its assertion on the policy the paper credits *and* on the baseline that
//! must fail it, so a check that holds for any input shows up as a failure instead of a "yes".
//!
//! Three kinds of check, shared by every experiment:
//! - [`Findings::trend`]: a trend the paper reports, asserted on the subject and, negated, on a
//!   baseline (strict priority must violate TQ protection; DRF against itself gives a gain of 1).
//! - [`Findings::lower`]: one run's number below another's; a third, real run (a policy the
//!   paper ranks no better, or a deliberately wrong one) must not be below it.
//! - [`Findings::distinct`]: two policies the paper separates must not produce the same
//!   completion times; the reference run again, simulated anew, must produce exactly its times
//!   (runs are deterministic, so a difference is the policies', not noise).
//! - [`Findings::loaded`]: a run meant to load the cluster must keep it at least
//!   [`MIN_LOADED_UTILIZATION`] busy.

use crate::metrics::Summary;
use crate::sim::output::RunOutput;
use std::fmt::Write as _;

/// A paper number within this relative distance of ours counts as reproduced.
pub const TOLERANCE: f64 = 0.25;

/// A run meant to load the cluster that stays below this busy fraction (in its busiest
/// resource) measures an idle cluster and fails.
pub const MIN_LOADED_UTILIZATION: f64 = 0.5;

/// One of the paper's numbers beside ours.
#[derive(Clone, Debug)]
pub struct PaperRow {
    pub metric: String,
    pub paper: f64,
    pub ours: f64,
}

impl PaperRow {
    pub fn ratio(&self) -> f64 {
        self.ours / self.paper
    }

    pub fn within(&self) -> bool {
        (self.ratio() - 1.0).abs() <= TOLERANCE
    }
}

/// One side of a check: who was measured, whether the assertion held, and the numbers.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub who: String,
    pub holds: bool,
    pub detail: String,
}

#[derive(Clone, Debug)]
pub struct Check {
    pub name: String,
    pub subject: Verdict,
    /// The run the assertion must fail on; `None` only for utilisation checks.
    pub baseline: Option<Verdict>,
    /// Whether a failure fails the experiment. Checks of effects whose fidelity work is still
    /// open are reported with the reason instead.
    pub enforced: Result<(), &'static str>,
}

impl Check {
    pub fn passed(&self) -> bool {
        self.subject.holds && self.baseline.as_ref().is_none_or(|b| !b.holds)
    }

    pub fn fails_experiment(&self) -> bool {
        self.enforced.is_ok() && !self.passed()
    }
}

/// An experiment's report text, paper rows and checks.
#[derive(Debug, Default)]
pub struct Findings {
    pub text: String,
    pub rows: Vec<PaperRow>,
    pub checks: Vec<Check>,
}

impl std::fmt::Write for Findings {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.text.push_str(s);
        Ok(())
    }
}

/// Fraction of the cluster busy in its busiest resource over a run.
pub fn utilization(s: &Summary) -> f64 {
    s.utilization.values().copied().fold(0.0, f64::max)
}

impl Findings {
    /// Records a paper number beside ours and prints the line.
    pub fn paper(&mut self, metric: impl Into<String>, paper: f64, ours: f64) {
        let row = PaperRow { metric: metric.into(), paper, ours };
        let _ = writeln!(
            self.text,
            "   paper vs ours: {:<52} paper {:>8.2}  ours {:>8.2}  ratio {:>5.2}  {}",
            row.metric,
            row.paper,
            row.ours,
            row.ratio(),
            if row.within() { "within ±25%" } else { "OUTSIDE ±25%" }
        );
        self.rows.push(row);
    }

    /// A trend asserted on `subject` and, as a must-fail, on `baseline`.
    pub fn trend(&mut self, name: impl Into<String>, subject: Verdict, baseline: Verdict) {
        self.push(Check { name: name.into(), subject, baseline: Some(baseline), enforced: Ok(()) });
    }

    /// Like [`Findings::trend`], reported but not failing the experiment, for an effect whose
    /// fidelity work is still open (`why` says where).
    pub fn reported_trend(
        &mut self,
        name: impl Into<String>,
        subject: Verdict,
        baseline: Option<Verdict>,
        why: &'static str,
    ) {
        self.push(Check { name: name.into(), subject, baseline, enforced: Err(why) });
    }

    /// `a` lower than `b` (a completion time, a slowdown), while `baseline`, another real run
    /// that the paper ranks no better than `b` (or a deliberately wrong one), is not.
    pub fn lower(
        &mut self,
        name: impl Into<String>,
        a: (&str, f64),
        b: (&str, f64),
        baseline: (&str, f64),
        enforced: Result<(), &'static str>,
    ) {
        let side = |x: (&str, f64)| Verdict {
            who: format!("{} vs {}", x.0, b.0),
            holds: x.1 < b.1,
            detail: format!("{:.2} vs {:.2}", x.1, b.1),
        };
        self.push(Check { name: name.into(), subject: side(a), baseline: Some(side(baseline)), enforced });
    }

    /// Two policies the paper separates must not give identical completion times; `b_again`
    /// is `b`'s spec simulated a second time, which must give exactly `b`'s.
    pub fn distinct(&mut self, a: (&str, &RunOutput), b: (&str, &RunOutput), b_again: &RunOutput) {
        let jcts = |r: &RunOutput| r.jobs.iter().map(|j| j.jct_ms()).collect::<Vec<_>>();
        let differ = |x: &RunOutput, y: &RunOutput| jcts(x) != jcts(y);
        let name = format!("{} and {} schedule differently", a.0, b.0);
        let subject = Verdict { who: format!("{} vs {}", a.0, b.0), holds: differ(a.1, b.1), detail: String::new() };
        let baseline =
            Verdict { who: format!("{} vs its run again", b.0), holds: differ(b.1, b_again), detail: String::new() };
        self.push(Check { name, subject, baseline: Some(baseline), enforced: Ok(()) });
    }

    /// A run meant to load the cluster must not run near idle.
    pub fn loaded(&mut self, who: &str, s: &Summary) {
        self.loaded_as(who, s, Ok(()));
    }

    pub fn loaded_as(&mut self, who: &str, s: &Summary, enforced: Result<(), &'static str>) {
        let u = utilization(s);
        let subject =
            Verdict { who: who.into(), holds: u >= MIN_LOADED_UTILIZATION, detail: format!("{:.0}% busy", 100.0 * u) };
        let name = format!("loaded run (>= {:.0}% busy)", 100.0 * MIN_LOADED_UTILIZATION);
        self.push(Check { name, subject, baseline: None, enforced });
    }

    pub fn push(&mut self, c: Check) {
        let _ = writeln!(self.text, "   {}", render(&c));
        self.checks.push(c);
    }

    pub fn failures(&self) -> Vec<&Check> {
        self.checks.iter().filter(|c| c.fails_experiment()).collect()
    }

    /// What does not reproduce the paper although it does not fail the experiment: paper rows
    /// outside ±[`TOLERANCE`] and reported checks that do not pass, one line each.
    pub fn misses(&self) -> Vec<String> {
        let rows = self
            .rows
            .iter()
            .filter(|r| !r.within())
            .map(|r| format!("{}: paper {:.2}, ours {:.2} (ratio {:.2})", r.metric, r.paper, r.ours, r.ratio()));
        let checks = self.checks.iter().filter(|c| c.enforced.is_err() && !c.passed()).map(render);
        rows.chain(checks).collect()
    }
}

/// One line per check: the verdict, the subject and the baseline that must fail.
pub fn render(c: &Check) -> String {
    let verdict = match (&c.enforced, c.passed()) {
        (_, true) => "PASS".to_string(),
        (Ok(()), false) => "FAIL".to_string(),
        (Err(why), false) => format!("NOT MET (not enforced: {why})"),
    };
    let side = |v: &Verdict, must: bool| {
        let ok = v.holds == must;
        let what = match (v.holds, ok) {
            (true, true) => "holds",
            (false, true) => "fails, as it must",
            (false, false) => "does NOT hold",
            (true, false) => "holds too: the check cannot tell them apart",
        };
        if v.detail.is_empty() {
            format!("{}: {what}", v.who)
        } else {
            format!("{}: {what} ({})", v.who, v.detail)
        }
    };
    let mut line = format!("check {verdict}: {}: {}", c.name, side(&c.subject, true));
    if let Some(b) = &c.baseline {
        let _ = write!(line, "; baseline {}", side(b, false));
    }
    line
}

/// `paper.csv` (metric, paper, ours, ratio, within) and `checks.csv` (check, verdict, subject,
/// baseline) of one experiment.
pub fn write_csvs(f: &Findings, dir: &std::path::Path) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_path(dir.join("paper.csv"))?;
    w.write_record(["metric", "paper", "ours", "ratio", "within_25pct"])?;
    for r in &f.rows {
        w.write_record([
            r.metric.clone(),
            r.paper.to_string(),
            format!("{:.4}", r.ours),
            format!("{:.4}", r.ratio()),
            r.within().to_string(),
        ])?;
    }
    w.flush()?;
    let mut w = csv::Writer::from_path(dir.join("checks.csv"))?;
    w.write_record([
        "check",
        "verdict",
        "enforced",
        "subject",
        "subject_holds",
        "subject_detail",
        "baseline",
        "baseline_holds",
        "baseline_detail",
    ])?;
    for c in &f.checks {
        let b = c.baseline.as_ref();
        w.write_record([
            c.name.clone(),
            if c.passed() { "pass" } else { "fail" }.into(),
            c.enforced.is_ok().to_string(),
            c.subject.who.clone(),
            c.subject.holds.to_string(),
            c.subject.detail.clone(),
            b.map_or(String::new(), |b| b.who.clone()),
            b.map_or(String::new(), |b| b.holds.to_string()),
            b.map_or(String::new(), |b| b.detail.clone()),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// `fidelity.md`: per experiment, the paper's numbers beside ours and the checks.
pub fn markdown(all: &[(&str, Findings)], full: bool) -> String {
    let mut md = String::from("# Fidelity: the papers' numbers beside Tidal's\n\n");
    let _ = writeln!(
        md,
        "Scale: {}. A row is within when ours is within ±{:.0}% of the paper's. A check passes when it holds on the policy \
         the paper credits and fails on the baseline that must fail it; a loaded run must keep the cluster at least {:.0}% busy.\n",
        if full { "full (the papers' sizes)" } else { "small (reduced sizes)" },
        100.0 * TOLERANCE,
        100.0 * MIN_LOADED_UTILIZATION
    );
    for (name, f) in all {
        let _ = writeln!(md, "## {name}\n");
        if !f.rows.is_empty() {
            md.push_str("| metric | paper | Tidal | ratio | verdict |\n|---|---:|---:|---:|---|\n");
            for r in &f.rows {
                let verdict = if r.within() { "within ±25%" } else { "outside" };
                let _ =
                    writeln!(md, "| {} | {:.2} | {:.2} | {:.2} | {verdict} |", r.metric, r.paper, r.ours, r.ratio());
            }
            md.push('\n');
        }
        let misses = f.misses();
        if !misses.is_empty() {
            let _ = writeln!(md, "Not reproduced ({}):\n", misses.len());
            for m in &misses {
                let _ = writeln!(md, "- {m}");
            }
            md.push('\n');
        }
        let (passed, total) = (f.checks.iter().filter(|c| c.passed()).count(), f.checks.len());
        let _ = writeln!(md, "Checks: {passed} of {total} pass; {} enforced failures.\n", f.failures().len());
        for c in f.checks.iter().filter(|c| !c.name.starts_with("loaded run") || !c.passed()) {
            let _ = writeln!(md, "- {}", render(c));
        }
        md.push('\n');
    }
    md
}

/// Progress over experiments on stderr, hidden when `show` is false.
pub fn progress_bar(len: usize, show: bool) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("experiments [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
            .expect("valid template"),
    );
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(holds: bool) -> Verdict {
        Verdict { who: "x".into(), holds, detail: String::new() }
    }

    #[test]
    fn a_check_passes_only_when_the_subject_holds_and_the_baseline_fails() {
        let mut f = Findings::default();
        f.trend("a", v(true), v(false));
        f.trend("b", v(true), v(true));
        f.trend("c", v(false), v(false));
        f.reported_trend("d", v(false), None, "open");
        let failed: Vec<&str> = f.failures().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(failed, ["b", "c"]);
        assert!(f.text.contains("holds too: the check cannot tell them apart"));
        assert!(f.text.contains("NOT MET (not enforced: open)"));
        f.paper("near", 4.0, 4.9);
        f.paper("far", 4.0, 5.1);
        let misses = f.misses();
        assert_eq!(misses.len(), 2, "{misses:?}");
        assert!(misses[0].starts_with("far: paper 4.00, ours 5.10"), "{misses:?}");
        assert!(misses[1].contains("NOT MET (not enforced: open)") && misses[1].contains(": d: "), "{misses:?}");
    }

    #[test]
    fn paper_rows_are_within_a_quarter() {
        assert!(PaperRow { metric: "m".into(), paper: 4.0, ours: 4.9 }.within());
        assert!(!PaperRow { metric: "m".into(), paper: 4.0, ours: 5.1 }.within());
        assert!(!PaperRow { metric: "m".into(), paper: 4.0, ours: 2.9 }.within());
    }
}
