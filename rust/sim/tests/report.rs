//! `tidal-sim report`: a BoPF run with an LQ burst leaves status.json and history.json, and the
//! page made from them is standalone with the run's data embedded.

use serde_json::Value;
use std::path::{Path, PathBuf};
use tidal_sim::dashboard::{self, HISTORY_FILE, STATUS_FILE};
use tidal_sim::spec::Spec;
use tidal_sim::{report, runner};

/// One 32-core machine, one TQ of two jobs and an LQ `fg` with three jobs, under BoPF.
const SPEC: &str = "[cluster]\nmachines = 1\n\
    machine = { memory_mb = 65536, vcores = 32, disk_read_mbps = 4000, disk_write_mbps = 2000, net_in_mbps = 10000, net_out_mbps = 10000 }\n\
    [scheduler]\npolicy = \"bopf\"\n\
    [workload]\ntype = \"bopf\"\ntq = { queues = 1, jobs = 2, source = { type = \"generator\", family = \"tpch\" } }\n\
    [[workload.lq]]\nname = \"fg\"\nmax_critical_path_s = 1000.0\nperiod_s = 100.0\njobs = 3\n\
    source = { type = \"generator\", family = \"tpch\" }\n";

fn dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The `window.TIDAL_DATA` object embedded in a page.
fn embedded(page: &str) -> Value {
    let start = page.find("window.TIDAL_DATA = ").expect("data script") + "window.TIDAL_DATA = ".len();
    let end = start + page[start..].find(";</script>").expect("end of the data script");
    serde_json::from_str(&page[start..end]).unwrap()
}

#[test]
fn a_bopf_run_makes_a_standalone_page_with_its_history() {
    let run_dir = dir("report-bopf");
    let spec_path = run_dir.join("spec.toml");
    std::fs::write(&spec_path, SPEC).unwrap();
    let spec = Spec::load(&spec_path).unwrap();
    let run = runner::run_spec(&spec, false).unwrap();
    report::write_all(&run, spec.sim.fairness_window_ms, &run_dir).unwrap();

    let history: Value = serde_json::from_str(&std::fs::read_to_string(run_dir.join(HISTORY_FILE)).unwrap()).unwrap();
    let status: Value = serde_json::from_str(&std::fs::read_to_string(run_dir.join(STATUS_FILE)).unwrap()).unwrap();
    assert_eq!(status["policy"], "bopf");
    assert!(history["samples"].as_array().unwrap().len() > 10, "a sample per simulated second");
    let bursts = history["bursts"].as_array().unwrap();
    assert!(!bursts.is_empty() && bursts.iter().all(|b| b["queue"] == "root.fg"), "{bursts:?}");
    assert!(bursts.iter().any(|b| b["ended_ms"].is_i64() && b["met_deadline"].is_boolean()), "{bursts:?}");

    let out = run_dir.join("page.html");
    dashboard::write_report(&run_dir, &out).unwrap();
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(!page.contains("<!-- tidal-data -->"), "the marker is replaced");
    assert!(!page.contains("<link") && !page.contains("<script src"), "nothing to fetch");
    assert!(!page.contains("href=\"static/") && !page.contains("src=\"static/"));
    let data = embedded(&page);
    assert_eq!(data["history"], history);
    assert_eq!(data["status"], status);
    assert_eq!(data["title"], "Tidal simulation: report-bopf (bopf)");
}

#[test]
fn a_missing_or_invalid_run_dir_names_the_file() {
    let d = dir("report-bad");
    let err = |d: &Path| format!("{:#}", dashboard::write_report(d, &d.join("r.html")).unwrap_err());
    let e = err(&d);
    assert!(e.contains(&d.join(STATUS_FILE).display().to_string()) && e.contains("cannot read"), "{e}");
    std::fs::write(d.join(STATUS_FILE), "{\"queues\": []}").unwrap();
    std::fs::write(d.join(HISTORY_FILE), "{\"samples\": [").unwrap();
    let e = err(&d);
    assert!(e.contains(&d.join(HISTORY_FILE).display().to_string()) && e.contains("not valid JSON"), "{e}");
    std::fs::write(d.join(HISTORY_FILE), "{\"samples\": [], \"bursts\": []}").unwrap();
    let e = err(&d);
    assert!(e.contains("history.json: no 'admissions' array"), "{e}");
    assert!(!d.join("r.html").exists());
}
