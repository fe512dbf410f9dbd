//! A tiny sweep over a mixed LQ/TQ spec: one CSV row per combination, and strict priority
//! gives the LQ faster completions than DRF at every seed and size.

use std::collections::HashMap;
use std::path::Path;
use tidal_sim::sweep;

const SPEC: &str = r#"
name = "mixed"
seed = 7
[cluster]
machines = 8
machine = { memory_mb = 65536, vcores = 32, disk_read_mbps = 4000, disk_write_mbps = 2000, net_in_mbps = 10000, net_out_mbps = 10000 }
[sim]
am_container = {}
[workload]
type = "bopf"
[[workload.lq]]
name = "lq0"
period_s = 300
jobs = 3
first_arrival_s = 30
source = { type = "generator", family = "bigbench" }
[workload.tq]
queues = 2
jobs = 60
backlog_s = 1200
task_duration_scale = 0.1
source = { type = "generator", family = "bigbench" }
"#;

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn one_row_per_combination_and_policies_differ() {
    let dir = std::env::temp_dir().join(format!("tidal-sweep-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    write(&dir, "mixed.toml", SPEC);
    let file = write(
        &dir,
        "sweep.toml",
        "specs = [\"mixed.toml\"]\npolicies = [\"drf\", \"strict-priority\"]\nseeds = [1, 2]\nmachines = [6, 8]\n",
    );
    let out = dir.join("out");
    let runs = sweep::load(&file).unwrap();
    assert_eq!(runs.len(), 8);
    sweep::run(runs, 2, &out).unwrap();

    let mut r = csv::Reader::from_path(out.join("sweep.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let col = |name: &str| h.iter().position(|x| x == name).unwrap_or_else(|| panic!("no column {name} in {h:?}"));
    let (policy, seed, machines, lq) = (col("policy"), col("seed"), col("machines"), col("LQ_avg_jct_s"));
    let (dir_col, unfinished) = (col("dir"), col("unfinished"));
    let mut lq_jct: HashMap<(String, String, String), f64> = HashMap::new();
    for rec in r.records() {
        let rec = rec.unwrap();
        assert_eq!(&rec[unfinished], "0");
        assert!(out.join(&rec[dir_col]).join("summary.json").is_file(), "no outputs for {}", &rec[dir_col]);
        let key = (rec[policy].to_string(), rec[seed].to_string(), rec[machines].to_string());
        assert!(lq_jct.insert(key, rec[lq].parse().unwrap()).is_none(), "a combination twice");
    }
    assert_eq!(lq_jct.len(), 8);
    for seed in ["1", "2"] {
        for m in ["6", "8"] {
            let get = |p: &str| lq_jct[&(p.to_string(), seed.to_string(), m.to_string())];
            let (drf, sp) = (get("drf"), get("strict-priority"));
            assert!(sp < drf, "seed {seed}, {m} machines: LQ avg JCT {sp} s under strict priority, {drf} s under DRF");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_sweep_files_name_the_field() {
    let cases = [
        ("specs = []", "`specs` is empty"),
        ("specs = [\"a.toml\"]\npolices = [\"drf\"]", "polices"),
        ("specs = [\"a.toml\"]\npolicies = [\"drf\", \"fastest\"]", "policies[1]"),
        ("specs = [\"a.toml\"]\nseeds = [1, 1]", "seeds[1]"),
        ("specs = [\"a.toml\"]\nmachines = [0]", "machines[0]"),
        ("specs = [\"a.toml\"]\nseeds = [\"one\"]", "seeds"),
    ];
    for (text, field) in cases {
        let e = format!("{:#}", sweep::SweepFile::parse(text).unwrap_err());
        assert!(e.contains(field), "{text:?}: error does not name {field}: {e}");
    }
    let dir = std::env::temp_dir().join(format!("tidal-sweep-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = write(&dir, "sweep.toml", "specs = [\"missing.toml\"]\n");
    let e = format!("{:#}", sweep::load(&file).err().unwrap());
    assert!(e.contains("specs[0]") && e.contains("missing.toml"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}
