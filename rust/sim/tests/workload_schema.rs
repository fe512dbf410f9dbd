//! `tidal-sim workload` output against the shared workload schema (`schema/workload.schema.json`),
//! which the replayer (java/replay) validates its input against too: an exported document
//! must pass, and documents with a field the replayer relies on broken must not.

use serde_json::Value;
use std::path::Path;
use tidal_sim::export::workload_doc;
use tidal_sim::runner::prepare;
use tidal_sim::spec::Spec;

fn schema_check(doc: &Value) -> Result<(), String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/workload.schema.json");
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let id = compiler.compile(path.to_str().expect("UTF-8 path"), &mut schemas).expect("the schema compiles");
    schemas.validate(doc, id).map_err(|e| format!("{e:#}"))
}

fn exported(spec: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments").join(spec);
    let spec = Spec::load(&path).expect("spec loads");
    let prepared = prepare(&spec, false).expect("spec prepares");
    let doc = workload_doc(&spec, &prepared).expect("exports");
    serde_json::to_value(doc).expect("serialises")
}

#[test]
fn an_exported_workload_matches_the_schema_and_its_spec() {
    let doc = exported("sim-vs-real.toml");
    schema_check(&doc).unwrap();
    assert_eq!(doc["policy"], "bopf");
    assert!(doc["allocations_xml"].as_str().unwrap().contains("<type>lq</type>"));
    let jobs = doc["jobs"].as_array().unwrap();
    let lq: Vec<&Value> = jobs.iter().filter(|j| j["class"] == "LQ").collect();
    assert_eq!(lq.len(), 3);
    // One burst a period from the first arrival, each with its deadline after it.
    let arrivals: Vec<i64> = lq.iter().map(|j| j["arrival_ms"].as_i64().unwrap()).collect();
    assert_eq!(arrivals, [30_000, 90_000, 150_000]);
    assert!(lq.iter().all(|j| j["queue"] == "lq0" && j["deadline_ms"].as_i64() > j["arrival_ms"].as_i64()));
    // sim.task_demand replaced every container, and only memory and vcores are asked for.
    for s in jobs.iter().flat_map(|j| j["stages"].as_array().unwrap()) {
        assert_eq!(s["resources"], serde_json::json!({"memory_mb": 512, "vcores": 1}));
    }
}

/// What one test case does to a valid document.
type Breakage = fn(&mut Value);

#[test]
fn the_schema_refuses_what_the_replayer_cannot_run() {
    let doc = exported("sim-vs-real.toml");
    let broken: [(&str, Breakage); 5] = [
        ("version 2", |d| d["version"] = 2.into()),
        ("a stage without tasks", |d| d["jobs"][0]["stages"][0]["task_durations_ms"] = serde_json::json!([])),
        ("a negative duration", |d| d["jobs"][0]["stages"][0]["task_durations_ms"][0] = (-1).into()),
        ("no vcores", |d| {
            d["jobs"][0]["stages"][0]["resources"].as_object_mut().unwrap().remove("vcores");
        }),
        ("an unknown field", |d| d["jobs"][0]["priority"] = 1.into()),
    ];
    for (what, f) in broken {
        let mut d = doc.clone();
        f(&mut d);
        assert!(schema_check(&d).is_err(), "the schema accepts {what}");
    }
}
