//! BoPF admission control through its public API only, the way the allocation policy uses it:
//! configuration from JSON, demands from the α-strategy, admission, removal, re-evaluation.

use tidal_core::bopf::admission::{AdmissionClass, AdmissionConfig, AdmissionController, Condition};
use tidal_core::bopf::alpha::{AlphaSpec, BurstDistribution, Correlation, ResourceDistribution};
use tidal_core::bopf::profile::MAX_POINTS;
use tidal_core::bopf::spec::{AdmissionError, BurstSpec, LqSpec, QueueSpec, MAX_CYCLES, MAX_HORIZON_MS, MAX_PERIOD_MS};
use tidal_core::{ResourceKind, Resources};

fn controller() -> AdmissionController {
    let cfg: AdmissionConfig =
        serde_json::from_str(r#"{"capacity": [102400, 100, 0, 0, 0, 0], "n_min": 3}"#).expect("config parses");
    AdmissionController::new(cfg).expect("valid config")
}

fn stream(name: &str, start_s: u64, demand: Resources) -> LqSpec {
    LqSpec {
        name: name.into(),
        weight: 1.0,
        burst: BurstSpec { period_ms: 300_000, deadline_ms: 120_000, demand },
        start_ms: start_s * 1000,
        cycles: 500,
    }
}

#[test]
fn alpha_demand_feeds_admission() {
    let mut c = controller();
    c.admit(serde_json::from_str(r#"{"type": "tq", "name": "batch"}"#).unwrap()).unwrap();

    // Past bursts of a streaming queue: memory-seconds and vcore-seconds, 40% spread.
    let alpha = AlphaSpec {
        alpha: 0.95,
        correlation: Correlation::Independent,
        resources: vec![
            ResourceDistribution {
                resource: ResourceKind::MemoryMb,
                distribution: BurstDistribution::Normal { mean: 3.0e6, std: 1.2e6 },
            },
            ResourceDistribution {
                resource: ResourceKind::Vcores,
                distribution: BurstDistribution::Normal { mean: 1500.0, std: 600.0 },
            },
        ],
    };
    let independent = alpha.demand().unwrap();
    let correlated = AlphaSpec { correlation: Correlation::PerfectlyCorrelated, ..alpha }.demand().unwrap();
    assert!(correlated.memory_mb() < independent.memory_mb());

    // Fair share with N_min = 3: 102400 MB x 300 s / 3 = 10.24e6 MB·s, comfortably above both.
    let d = c.admit_lq(stream("s1", 0, independent)).unwrap();
    assert_eq!(d.class, AdmissionClass::Hard, "{}", d.reason);
    let rate = c.guaranteed_rate("s1").unwrap();
    assert_eq!(rate.memory_mb(), (independent.memory_mb() + 119) / 120);

    // A second stream overlapping s1 does not fit next to it while ON: soft.
    let big = Resources::new(8_000_000, 1000);
    let d = c.admit_lq(stream("s2", 10, big)).unwrap();
    assert_eq!((d.class, d.failed), (AdmissionClass::Soft, Some(Condition::Resource)), "{}", d.reason);

    // Removing s1 frees its windows; re-evaluation promotes s2.
    assert_eq!(c.remove("s1"), Ok(AdmissionClass::Hard));
    let changes = c.reevaluate();
    assert_eq!(changes.len(), 1);
    assert_eq!((changes[0].queue.as_str(), changes[0].to), ("s2", AdmissionClass::Hard));
    c.audit().unwrap();

    let json =
        serde_json::to_string(&c.queues().iter().map(|q| (q.spec.clone(), q.class)).collect::<Vec<_>>()).unwrap();
    let back: Vec<(QueueSpec, AdmissionClass)> = serde_json::from_str(&json).unwrap();
    assert_eq!(back.len(), 2);
    assert_eq!(back[1].1, AdmissionClass::Hard);
}

#[test]
fn bursts_beyond_the_profile_horizon_are_refused() {
    let mut c = controller();
    let mut far = stream("far", 0, Resources::new(1000, 1));
    far.start_ms = MAX_HORIZON_MS;
    match c.admit_lq(far) {
        Err(AdmissionError::InvalidSpec { queue, field, .. }) => {
            assert_eq!((queue.as_str(), field.as_str()), ("far", "cycles"))
        }
        other => panic!("expected a horizon error, got {other:?}"),
    }
    assert!(c.is_empty());
}

fn field_of(r: Result<tidal_core::bopf::admission::Decision, AdmissionError>) -> (String, String) {
    match r {
        Err(AdmissionError::InvalidSpec { field, problem, .. }) => (field, problem),
        other => panic!("expected a spec error, got {other:?}"),
    }
}

/// The inputs that once built a 2^25-slot profile or held the core for seconds are refused
/// before any work, naming the field and the limit, from a queue file and from the API alike.
#[test]
fn inputs_beyond_the_work_limits_are_refused() {
    let file = |period: &str, deadline: &str, cycles: &str| {
        tidal_core::config::parse_queue_file(&format!(
            "<tidal><policy>bopf</policy>\n<queue name=\"x\"><type>lq</type><period-sec>{period}</period-sec>\
             <deadline-sec>{deadline}</deadline-sec><cycles>{cycles}</cycles>\
             <burst-demand><memory-mb>10</memory-mb></burst-demand></queue></tidal>"
        ))
        .expect_err("refused")
        .to_string()
    };
    let e = file("1000000", "1", "33");
    assert!(e.contains("line 2") && e.contains("burst.period_ms") && e.contains(&MAX_PERIOD_MS.to_string()), "{e}");
    let e = file("0.001", "0.001", "4294967295");
    assert!(e.contains("line 2") && e.contains("cycles") && e.contains(&MAX_CYCLES.to_string()), "{e}");
    let e = file("86400", "1", "8");
    assert!(e.contains("cycles") && e.contains(&MAX_HORIZON_MS.to_string()), "{e}");

    let mut c = controller();
    let mut lq = stream("big", 0, Resources::new(1000, 1));
    lq.burst = BurstSpec { period_ms: 1_000_000_000, deadline_ms: 1000, demand: lq.burst.demand };
    lq.cycles = 33;
    assert_eq!(field_of(c.admit_lq(lq.clone())).0, "burst.period_ms");
    lq.burst.period_ms = MAX_PERIOD_MS;
    lq.burst.deadline_ms = MAX_PERIOD_MS + 1;
    assert_eq!(field_of(c.admit_lq(lq.clone())).0, "burst.deadline_ms");
    lq.burst = BurstSpec { period_ms: 1, deadline_ms: 1, demand: lq.burst.demand };
    lq.cycles = u32::MAX;
    assert_eq!(field_of(c.admit_lq(lq)).0, "cycles");
    assert!(c.is_empty());

    // Every resource stored in 100 ms slots: the same horizon needs more points than the profile
    // may hold.
    let all = Resources([1 << 20, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10]);
    let mut wide =
        AdmissionController::new(AdmissionConfig { resolution_ms: 100, ..AdmissionConfig::new(all) }).unwrap();
    let mut lq = stream("wide", 0, Resources([1000, 1, 1, 1, 1, 1, 1, 1]));
    lq.burst = BurstSpec { period_ms: MAX_PERIOD_MS, deadline_ms: 1000, demand: lq.burst.demand };
    lq.cycles = 4;
    let (field, problem) = field_of(wide.admit_lq(lq));
    assert!(field == "cycles" && problem.contains(&MAX_POINTS.to_string()), "{problem}");
}

/// The most demanding input the limits accept (every cycle, the whole horizon, one window per
/// period) is admitted with a profile of a few MB.
#[test]
fn the_largest_accepted_input_stays_small() {
    let mut c = controller();
    let lq = largest_accepted_lq("largest");
    assert_eq!(c.admit_lq(lq).unwrap().class, AdmissionClass::Hard);
    assert!(c.profile().memory_bytes() <= 10 << 20, "{} bytes", c.profile().memory_bytes());
    c.remove("largest").unwrap();
    c.audit().unwrap();
}

fn largest_accepted_lq(name: &str) -> LqSpec {
    let period_ms = MAX_HORIZON_MS / u64::from(MAX_CYCLES);
    LqSpec {
        name: name.into(),
        weight: 1.0,
        burst: BurstSpec { period_ms, deadline_ms: period_ms - 1000, demand: Resources::new(1000, 1) },
        start_ms: 0,
        cycles: MAX_CYCLES,
    }
}

/// The paper's simulations check 500 bursts of a 1000 s period on a cluster scheduling all six
/// resources: the limits must admit that, not reject it as too large.
#[test]
fn the_papers_simulation_horizon_is_within_the_limits() {
    let all = Resources([1 << 20, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10, 1 << 10]);
    let mut c = AdmissionController::new(AdmissionConfig::new(all)).unwrap();
    let mut lq = stream("paper", 0, Resources([1000, 1, 1, 1, 1, 1, 1, 1]));
    lq.burst = BurstSpec { period_ms: 1_000_000, deadline_ms: 60_000, demand: lq.burst.demand };
    lq.cycles = 500;
    assert_eq!(c.admit_lq(lq).unwrap().class, AdmissionClass::Hard);
}
