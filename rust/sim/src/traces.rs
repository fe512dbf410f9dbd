//! Trace readers: each turns a trace file into job templates.
//!
//! Where a trace lacks a field, the documented model of its options ([`crate::spec`]) fills it
//! in. Errors name the file and the line or field.

use crate::model::{JobTemplate, Stage};
use crate::spec::{SlsOptions, SwimOptions, TpchOptions};
use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use tidal_core::{ResourceKind, Resources};

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read trace file {}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// TPC-H measured on Spark (dag-trace-v1).

#[derive(Deserialize)]
struct DagTrace {
    format: String,
    #[serde(default)]
    scale: Option<Value>,
    queries: Vec<DagQuery>,
}

#[derive(Deserialize)]
struct DagQuery {
    query: String,
    stages: Vec<DagStage>,
    #[serde(default)]
    edges: Vec<(i64, i64)>,
}

#[derive(Deserialize)]
struct DagStage {
    id: i64,
    num_tasks: usize,
    durations_ms_by_executors: BTreeMap<String, Waves>,
}

#[derive(Deserialize)]
struct Waves {
    first_wave: Vec<u32>,
    rest_wave: Vec<u32>,
    #[serde(default)]
    #[allow(dead_code)]
    fresh: Vec<u32>,
}

fn scale_gb(scale: &Option<Value>) -> f64 {
    match scale {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(Value::String(s)) => s.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

pub fn load_tpch_spark(path: &Path, opts: &TpchOptions) -> Result<Vec<JobTemplate>> {
    parse_tpch_spark(&read(path)?, opts).with_context(|| format!("in TPC-H trace {}", path.display()))
}

pub fn parse_tpch_spark(text: &str, opts: &TpchOptions) -> Result<Vec<JobTemplate>> {
    let trace: DagTrace = serde_json::from_str(text).map_err(|e| anyhow!("malformed dag-trace-v1 JSON: {e}"))?;
    if trace.format != "dag-trace-v1" {
        bail!("field format: expected \"dag-trace-v1\", found \"{}\"", trace.format);
    }
    let gb = scale_gb(&trace.scale);
    let demand = match &opts.task_demand {
        Some(spec) => Some(spec.to_resources("task_demand")?),
        None => None,
    };
    let mut jobs = Vec::with_capacity(trace.queries.len());
    let mut mismatches = Vec::new();
    for q in &trace.queries {
        let ctx = |what: String| anyhow!("query {}: {what}", q.query);
        let index: BTreeMap<i64, usize> = q.stages.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
        if index.len() != q.stages.len() {
            return Err(ctx("two stages share an id".into()));
        }
        let mut parents = vec![Vec::new(); q.stages.len()];
        for (k, &(p, c)) in q.edges.iter().enumerate() {
            let (Some(&pi), Some(&ci)) = (index.get(&p), index.get(&c)) else {
                return Err(ctx(format!("edges[{k}] = [{p}, {c}] refers to an unknown stage")));
            };
            parents[ci].push(pi as u32);
        }
        let mut stages = Vec::with_capacity(q.stages.len());
        for (i, s) in q.stages.iter().enumerate() {
            let key = nearest_key(&s.durations_ms_by_executors, opts.executors)
                .ok_or_else(|| ctx(format!("stage {}: durations_ms_by_executors is empty", s.id)))?;
            let w = &s.durations_ms_by_executors[&key];
            let listed: Vec<u32> = w.first_wave.iter().chain(&w.rest_wave).copied().collect();
            if listed.is_empty() || s.num_tasks == 0 {
                return Err(ctx(format!("stage {}: executors \"{key}\" lists no task duration", s.id)));
            }
            // The measured files occasionally list fewer durations than num_tasks (a task
            // whose record was lost): num_tasks wins, the listed durations are repeated.
            if listed.len() != s.num_tasks {
                mismatches.push(format!("{} stage {} ({} of {} durations)", q.query, s.id, listed.len(), s.num_tasks));
            }
            let durations_ms: Vec<u32> = (0..s.num_tasks).map(|i| listed[i % listed.len()]).collect();
            let d = demand.unwrap_or_else(|| {
                let mut r = Resources::new(if gb > 5.0 { 4096 } else { 2048 }, 1);
                if parents[i].is_empty() {
                    r.set(ResourceKind::DiskReadMbps, 100);
                } else {
                    r.set(ResourceKind::NetInMbps, 100);
                }
                r.set(ResourceKind::DiskWriteMbps, 50);
                r.set(ResourceKind::NetOutMbps, 50);
                r
            });
            stages.push(Stage {
                name: format!("stage{}", s.id),
                parents: std::mem::take(&mut parents[i]),
                demand: d,
                durations_ms,
            });
        }
        let job = JobTemplate { name: format!("tpch-{}", q.query), stages, arrival_ms: None, queue: None };
        job.validate().map_err(ctx)?;
        jobs.push(job);
    }
    if jobs.is_empty() {
        bail!("field queries: the trace has no query");
    }
    static NOTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !mismatches.is_empty() && !NOTED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "note: TPC-H trace lists fewer durations than num_tasks for {}; their durations are repeated",
            mismatches.join(", ")
        );
    }
    Ok(jobs)
}

fn nearest_key(map: &BTreeMap<String, Waves>, want: u32) -> Option<String> {
    map.keys()
        .filter_map(|k| k.parse::<i64>().ok().map(|n| ((n - want as i64).abs(), n, k)))
        .min()
        .map(|(_, _, k)| k.clone())
}

// ---------------------------------------------------------------------------------------------
// SWIM (Facebook 2009/2010 samples).

pub fn load_swim(path: &Path, opts: &SwimOptions) -> Result<Vec<JobTemplate>> {
    parse_swim(&read(path)?, opts).with_context(|| format!("in SWIM trace {}", path.display()))
}

pub fn parse_swim(text: &str, opts: &SwimOptions) -> Result<Vec<JobTemplate>> {
    let map_d = opts.map_demand.to_resources("map_demand")?;
    let red_d = opts.reduce_demand.to_resources("reduce_demand")?;
    let positive = |v: f64| v > 0.0 && v.is_finite();
    if ![opts.bytes_per_map, opts.bytes_per_reduce, opts.task_bytes_per_sec, opts.data_scale].into_iter().all(positive)
    {
        bail!("bytes_per_map, bytes_per_reduce, task_bytes_per_sec and data_scale must be positive numbers");
    }
    let mut jobs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let ln = i + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 6 {
            bail!("line {ln}: expected 6 tab-separated fields (id, submit s, gap s, input, shuffle, output bytes), found {}", f.len());
        }
        let num =
            |k: usize, what: &str| -> Result<f64> {
                f[k].trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| {
                    anyhow!("line {ln}: field {} ({what}): '{}' is not a non-negative number", k + 1, f[k])
                })
            };
        let submit = num(1, "submit time")?;
        let k = opts.data_scale;
        let (input, shuffle, output) =
            (k * num(3, "map input bytes")?, k * num(4, "shuffle bytes")?, k * num(5, "reduce output bytes")?);
        let duration =
            |bytes: f64| (opts.task_base_ms as f64 + 1000.0 * bytes / opts.task_bytes_per_sec).min(3_600_000.0) as u32;
        let maps = ((input / opts.bytes_per_map).ceil() as usize).clamp(1, opts.max_tasks_per_stage);
        let mut stages = vec![Stage {
            name: "map".into(),
            parents: vec![],
            demand: map_d,
            durations_ms: vec![duration(input / maps as f64); maps],
        }];
        if shuffle > 0.0 {
            let reduces = ((shuffle / opts.bytes_per_reduce).ceil() as usize).clamp(1, opts.max_tasks_per_stage);
            stages.push(Stage {
                name: "reduce".into(),
                parents: vec![0],
                demand: red_d,
                durations_ms: vec![duration((shuffle + output) / reduces as f64); reduces],
            });
        }
        jobs.push(JobTemplate {
            name: f[0].trim().to_string(),
            stages,
            arrival_ms: Some((submit * 1000.0) as i64),
            queue: None,
        });
    }
    if jobs.is_empty() {
        bail!("the trace has no job line");
    }
    Ok(jobs)
}

// ---------------------------------------------------------------------------------------------
// Hadoop SLS JSON (a stream of job objects).

pub fn load_sls(path: &Path, opts: &SlsOptions) -> Result<Vec<JobTemplate>> {
    parse_sls(&read(path)?, opts).with_context(|| format!("in SLS trace {}", path.display()))
}

fn line_at(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|&b| b == b'\n').count() + 1
}

pub fn parse_sls(text: &str, _opts: &SlsOptions) -> Result<Vec<JobTemplate>> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut jobs = Vec::new();
    let mut auto_id = 0usize;
    loop {
        let start = stream.byte_offset();
        let Some(item) = stream.next() else { break };
        let obj = item.map_err(|e| anyhow!("malformed JSON: {e}"))?;
        let skip_ws = text[start..].len() - text[start..].trim_start().len();
        let ln = line_at(text, start + skip_ws);
        let Value::Object(map) = obj else { bail!("line {ln}: expected a JSON object") };
        if map.contains_key("num.nodes") && !map.contains_key("job.tasks") {
            continue; // topology header: the spec describes the cluster
        }
        let job_ctx = |what: String| anyhow!("line {ln}: job object: {what}");
        let am_type = map.get("am.type").and_then(Value::as_str).unwrap_or("mapreduce");
        if am_type != "mapreduce" {
            return Err(job_ctx(format!("field am.type: '{am_type}' is not supported (only mapreduce)")));
        }
        let int = |v: &Value, field: &str| -> Result<i64> {
            match v {
                Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
                Value::String(s) => s.trim().parse().ok(),
                _ => None,
            }
            .ok_or_else(|| job_ctx(format!("field {field}: {v} is not an integer")))
        };
        let start_ms = map.get("job.start.ms").map(|v| int(v, "job.start.ms")).transpose()?.unwrap_or(0);
        let queue = map.get("job.queue.name").map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
        let count = map.get("job.count").map(|v| int(v, "job.count")).transpose()?.unwrap_or(1).max(1);
        let id = map.get("job.id").and_then(Value::as_str).map(str::to_string);
        let tasks = map
            .get("job.tasks")
            .and_then(Value::as_array)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| job_ctx("field job.tasks: missing or empty".into()))?;
        // (is_reduce, priority, memory, vcores) -> durations
        let mut groups: BTreeMap<(bool, i64, i64, i64), Vec<u32>> = BTreeMap::new();
        for (k, t) in tasks.iter().enumerate() {
            let Value::Object(t) = t else { return Err(job_ctx(format!("job.tasks[{k}] is not an object"))) };
            let f = |name: &str| -> Result<Option<i64>> {
                t.get(name).map(|v| int(v, &format!("job.tasks[{k}].{name}"))).transpose()
            };
            let n = f("count")?.unwrap_or(1);
            if n < 1 {
                return Err(job_ctx(format!("field job.tasks[{k}].count: {n} is not positive")));
            }
            let dur = match (f("container.duration.ms")?, f("duration.ms")?, f("container.start.ms")?, f("container.end.ms")?) {
                (Some(d), _, _, _) | (None, Some(d), _, _) => d,
                (None, None, Some(s), Some(e)) => e - s,
                _ => {
                    return Err(job_ctx(format!(
                        "job.tasks[{k}]: no duration (give container.duration.ms, duration.ms, or container.start.ms and container.end.ms)"
                    )))
                }
            };
            if dur < 0 || dur > u32::MAX as i64 {
                return Err(job_ctx(format!("job.tasks[{k}]: duration {dur} ms is out of range")));
            }
            let ty = t.get("container.type").and_then(Value::as_str).unwrap_or("map");
            let is_reduce = match ty {
                "map" => false,
                "reduce" => true,
                other => {
                    return Err(job_ctx(format!(
                        "field job.tasks[{k}].container.type: '{other}' (expected map or reduce)"
                    )))
                }
            };
            let prio = f("container.priority")?.unwrap_or(20);
            let mem = match f("container.memory-mb")? {
                Some(m) => m,
                None => f("container.memory")?.unwrap_or(1024),
            };
            let vcores = f("container.vcores")?.unwrap_or(1);
            for _ in 0..n {
                groups.entry((is_reduce, prio, mem, vcores)).or_default().push(dur as u32);
            }
        }
        let map_stages: Vec<u32> = groups.keys().enumerate().filter(|(_, k)| !k.0).map(|(i, _)| i as u32).collect();
        let stages: Vec<Stage> = groups
            .into_iter()
            .map(|((is_reduce, prio, mem, vcores), durations_ms)| Stage {
                name: format!("{}-p{prio}-{mem}mb-{vcores}c", if is_reduce { "reduce" } else { "map" }),
                parents: if is_reduce { map_stages.clone() } else { vec![] },
                demand: Resources::new(mem, vcores),
                durations_ms,
            })
            .collect();
        for _ in 0..count {
            let name = match (&id, count) {
                (Some(id), 1) => id.clone(),
                _ => {
                    auto_id += 1;
                    format!("job_{}", auto_id - 1)
                }
            };
            let job = JobTemplate { name, stages: stages.clone(), arrival_ms: Some(start_ms), queue: queue.clone() };
            job.validate().map_err(job_ctx)?;
            jobs.push(job);
        }
    }
    if jobs.is_empty() {
        bail!("the trace has no job object");
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::ResourceSpec;

    const TPCH: &str = r#"{"format":"dag-trace-v1","workload":"TPC-H","scale":"10g","queries":[
      {"query":"q1","stages":[
        {"id":0,"num_tasks":3,"durations_ms_by_executors":{"2":{"first_wave":[10,11],"rest_wave":[12],"fresh":[20,21]},
                                                          "20":{"first_wave":[5,6,7],"rest_wave":[],"fresh":[9]}}},
        {"id":1,"num_tasks":1,"durations_ms_by_executors":{"2":{"first_wave":[30],"rest_wave":[],"fresh":[]}}}],
       "edges":[[0,1]]}]}"#;

    #[test]
    fn tpch_reads_stages_edges_and_models_demand() {
        let jobs = parse_tpch_spark(TPCH, &TpchOptions::default()).unwrap();
        assert_eq!(jobs.len(), 1);
        let j = &jobs[0];
        assert_eq!(j.stages[0].durations_ms, vec![5, 6, 7]);
        assert_eq!(j.stages[1].durations_ms, vec![30]); // nearest key
        assert_eq!(j.stages[1].parents, vec![0]);
        assert_eq!(j.stages[0].demand.memory_mb(), 4096);
        let two = parse_tpch_spark(TPCH, &TpchOptions { executors: 2, task_demand: None }).unwrap();
        assert_eq!(two[0].stages[0].durations_ms, vec![10, 11, 12]);
    }

    #[test]
    fn tpch_bad_inputs_are_named() {
        let e = format!(
            "{:#}",
            parse_tpch_spark(&TPCH.replace("[[0,1]]", "[[0,9]]"), &TpchOptions::default()).unwrap_err()
        );
        assert!(e.contains("q1") && e.contains("edges[0]") && e.contains("unknown stage"), "{e}");
        let e = format!(
            "{:#}",
            parse_tpch_spark(&TPCH.replace("[[0,1]]", "[[0,1],[1,0]]"), &TpchOptions::default()).unwrap_err()
        );
        assert!(e.contains("cycle"), "{e}");
        let j = parse_tpch_spark(&TPCH.replace("\"num_tasks\":3", "\"num_tasks\":4"), &TpchOptions::default()).unwrap();
        assert_eq!(j[0].stages[0].durations_ms, vec![5, 6, 7, 5], "num_tasks wins, durations repeat");
        let e =
            format!("{:#}", parse_tpch_spark("{\"format\":\n\"dag-trace-v1\",", &TpchOptions::default()).unwrap_err());
        assert!(e.contains("line 2"), "{e}");
        let o = TpchOptions { executors: 2, task_demand: Some(ResourceSpec([("tpus".to_string(), 1)].into())) };
        assert!(format!("{:#}", parse_tpch_spark(TPCH, &o).unwrap_err()).contains("unknown resource 'tpus'"));
    }

    #[test]
    fn swim_bytes_become_tasks() {
        let t = "job0\t10\t10\t268435456\t0\t0\njob1\t12\t2\t1\t2147483648\t1073741824\n";
        let jobs = parse_swim(t, &SwimOptions::default()).unwrap();
        assert_eq!(jobs[0].stages.len(), 1, "no shuffle: map-only");
        assert_eq!(jobs[0].stages[0].tasks(), 2);
        assert_eq!(jobs[0].stages[0].durations_ms[0], 2000 + 12800);
        assert_eq!(jobs[0].arrival_ms, Some(10_000));
        assert_eq!(jobs[1].stages[1].tasks(), 2);
        assert_eq!(jobs[1].stages[1].parents, vec![0]);
        let e = format!("{:#}", parse_swim("job0\t10\t10\tlots\t0\t0\n", &SwimOptions::default()).unwrap_err());
        assert!(e.contains("line 1") && e.contains("field 4"), "{e}");
        assert!(format!("{:#}", parse_swim("a\tb\n", &SwimOptions::default()).unwrap_err()).contains("6 tab-separated"));
    }

    #[test]
    fn sls_stream_of_jobs() {
        let t = r#"{"num.nodes": 3, "num.racks": 1}
{"am.type":"mapreduce","job.start.ms":5,"job.queue.name":"q1","job.id":"job_1","job.tasks":[
  {"count":2,"container.host":"/r/n1","container.start.ms":10,"container.end.ms":110,"container.priority":20,"container.type":"map"},
  {"duration.ms":50,"container.type":"reduce","container.memory-mb":2048,"container.vcores":2}]}
{"job.start.ms":7,"job.tasks":[{"container.duration.ms":9}]}"#;
        let jobs = parse_sls(t, &SlsOptions::default()).unwrap();
        assert_eq!(jobs.len(), 2);
        let j = &jobs[0];
        assert_eq!((j.name.as_str(), j.arrival_ms, j.queue.as_deref()), ("job_1", Some(5), Some("q1")));
        assert_eq!(j.stages[0].durations_ms, vec![100, 100]);
        assert_eq!(j.stages[1].parents, vec![0]);
        assert_eq!(j.stages[1].demand, Resources::new(2048, 2));
        assert_eq!(jobs[1].stages[0].durations_ms, vec![9]);
        let e = format!("{:#}", parse_sls("{\"job.tasks\":[{\"count\":1}]}", &SlsOptions::default()).unwrap_err());
        assert!(e.contains("line 1") && e.contains("no duration"), "{e}");
        let e = format!(
            "{:#}",
            parse_sls(
                "\n\n{\"job.tasks\":[{\"duration.ms\":1,\"container.type\":\"shuffle\"}]}",
                &SlsOptions::default()
            )
            .unwrap_err()
        );
        assert!(e.contains("line 3") && e.contains("container.type"), "{e}");
        assert!(parse_sls("{\"job.tasks\": [", &SlsOptions::default()).is_err());
    }
}
