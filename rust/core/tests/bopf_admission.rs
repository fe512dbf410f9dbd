//! BoPF admission control through its public API only, the way the allocation policy uses it:
//! configuration from JSON, demands from the α-strategy, admission, removal, re-evaluation.

use tidal_core::bopf::admission::{AdmissionClass, AdmissionConfig, AdmissionController, Condition, MAX_HORIZON_SLOTS};
use tidal_core::bopf::alpha::{AlphaSpec, BurstDistribution, Correlation, ResourceDistribution};
use tidal_core::bopf::spec::{AdmissionError, BurstSpec, LqSpec, QueueSpec};
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
    far.start_ms = MAX_HORIZON_SLOTS * c.config().resolution_ms;
    match c.admit_lq(far) {
        Err(AdmissionError::InvalidSpec { queue, field, .. }) => {
            assert_eq!((queue.as_str(), field.as_str()), ("far", "cycles"))
        }
        other => panic!("expected a horizon error, got {other:?}"),
    }
    assert!(c.is_empty());
}
