//! Files a run leaves behind: jobs and shares as CSV, shares and JCT CDFs as SVG, a summary JSON,
//! and the core's status and history documents (which `tidal-sim report` turns into a page).

use crate::dashboard;
use crate::metrics::{summarize, Summary};
use crate::sim::output::RunOutput;
use anyhow::{Context, Result};
use plotters::prelude::*;
use std::path::Path;

pub fn write_jobs_csv(run: &RunOutput, path: &Path) -> Result<()> {
    let mut w = csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    w.write_record([
        "job",
        "queue",
        "class",
        "arrival_s",
        "start_s",
        "finish_s",
        "jct_s",
        "deadline_s",
        "met_deadline",
        "tasks",
    ])?;
    for j in &run.jobs {
        let s = |ms: i64| format!("{:.3}", ms as f64 / 1000.0);
        w.write_record([
            j.name.clone(),
            j.queue.clone(),
            j.class.clone(),
            s(j.arrival_ms),
            s(j.start_ms),
            s(j.finish_ms),
            s(j.jct_ms()),
            j.deadline_ms.map(s).unwrap_or_default(),
            j.deadline_ms.map(|d| (j.finish_ms <= d).to_string()).unwrap_or_default(),
            j.tasks.to_string(),
        ])?;
    }
    w.flush()?;
    Ok(())
}

pub fn write_shares_csv(run: &RunOutput, path: &Path) -> Result<()> {
    let mut w = csv::Writer::from_path(path).with_context(|| format!("cannot write {}", path.display()))?;
    let mut header = vec!["time_s".to_string()];
    header.extend(run.queues.iter().cloned());
    w.write_record(&header)?;
    for (i, t) in run.samples.times_ms.iter().enumerate() {
        let mut rec = vec![format!("{:.3}", *t as f64 / 1000.0)];
        rec.extend(run.samples.share.iter().map(|q| format!("{:.5}", q[i])));
        w.write_record(&rec)?;
    }
    w.flush()?;
    Ok(())
}

fn plot_err<E: std::fmt::Debug>(path: &Path) -> impl FnOnce(E) -> anyhow::Error + '_ {
    move |e| anyhow::anyhow!("cannot draw {}: {e:?}", path.display())
}

/// Dominant share of each queue over time, like the BoPF paper's Figures 6 and 10, with LQ
/// bursts' ON periods shaded. With many queues only the 12 with the largest long-term share are
/// drawn.
pub fn plot_shares(run: &RunOutput, path: &Path) -> Result<()> {
    let s = &run.samples;
    let t_end = s.times_ms.last().copied().unwrap_or(1).max(1) as f64 / 1000.0;
    let t0 = s.times_ms.first().copied().unwrap_or(0) as f64 / 1000.0;
    let mut order: Vec<usize> = (0..run.queues.len()).collect();
    let mean = |q: usize| s.share[q].iter().map(|&x| x as f64).sum::<f64>();
    order.sort_by(|&a, &b| mean(b).total_cmp(&mean(a)));
    order.truncate(12);
    order.sort_unstable();
    // Thin the series to at most ~2000 points per queue.
    let step = (s.times_ms.len() / 2000).max(1);
    let root = SVGBackend::new(path, (1000, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err(path))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{}: dominant share per queue ({})", run.label, run.policy), ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(t0..t_end, 0.0..1.0)
        .map_err(plot_err(path))?;
    chart.configure_mesh().x_desc("time (s)").y_desc("dominant share").draw().map_err(plot_err(path))?;
    // LQ bursts: from each deadline job's arrival to its deadline (its ON period), shaded.
    let on = run
        .jobs
        .iter()
        .filter_map(|j| j.deadline_ms.map(|d| (j.arrival_ms as f64 / 1000.0, (d as f64 / 1000.0).min(t_end))));
    chart
        .draw_series(
            on.filter(|(a, _)| *a < t_end)
                .map(|(a, d)| Rectangle::new([(a, 0.0), (d, 1.0)], RGBColor(120, 120, 120).mix(0.15).filled())),
        )
        .map_err(plot_err(path))?;
    for (k, &q) in order.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        let pts = s.times_ms.iter().zip(&s.share[q]).step_by(step).map(|(t, v)| (*t as f64 / 1000.0, *v as f64));
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(plot_err(path))?
            .label(run.queues[q].clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(plot_err(path))?;
    root.present().map_err(plot_err(path))?;
    Ok(())
}

/// CDFs of job completion times, one line per run; only jobs of `class` when given.
pub fn plot_jct_cdf(runs: &[(&str, &RunOutput)], class: Option<&str>, path: &Path) -> Result<()> {
    let series: Vec<(String, Vec<f64>)> = runs
        .iter()
        .map(|(label, r)| {
            let mut v: Vec<f64> = r
                .jobs
                .iter()
                .filter(|j| class.is_none_or(|c| j.class == c))
                .map(|j| j.jct_ms() as f64 / 1000.0)
                .collect();
            v.sort_by(f64::total_cmp);
            (label.to_string(), v)
        })
        .collect();
    let max = series.iter().filter_map(|(_, v)| v.last().copied()).fold(1.0, f64::max);
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err(path))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("CDF of {} completion times", class.map_or("job".into(), |c| format!("{c} job"))),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..max * 1.02, 0.0..1.0)
        .map_err(plot_err(path))?;
    chart
        .configure_mesh()
        .x_desc("job completion time (s)")
        .y_desc("fraction of jobs")
        .draw()
        .map_err(plot_err(path))?;
    for (k, (label, v)) in series.iter().enumerate() {
        let color = Palette99::pick(k).to_rgba();
        let n = v.len().max(1) as f64;
        let pts = v.iter().enumerate().map(|(i, x)| (*x, (i + 1) as f64 / n));
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(plot_err(path))?
            .label(label.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(plot_err(path))?;
    root.present().map_err(plot_err(path))?;
    Ok(())
}

/// Writes every output of one run into `dir` and returns its summary.
pub fn write_all(run: &RunOutput, window_ms: i64, dir: &Path) -> Result<Summary> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let summary = summarize(run, window_ms);
    write_jobs_csv(run, &dir.join("jobs.csv"))?;
    write_shares_csv(run, &dir.join("shares.csv"))?;
    std::fs::write(dir.join("summary.json"), serde_json::to_string_pretty(&summary)?)?;
    for (name, json) in [(dashboard::STATUS_FILE, &run.status_json), (dashboard::HISTORY_FILE, &run.history_json)] {
        let path = dir.join(name);
        std::fs::write(&path, json).with_context(|| format!("cannot write {}", path.display()))?;
    }
    plot_shares(run, &dir.join("shares.svg"))?;
    plot_jct_cdf(&[(run.policy.as_str(), run)], None, &dir.join("jct_cdf.svg"))?;
    Ok(summary)
}
