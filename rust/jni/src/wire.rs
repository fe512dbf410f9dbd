//! Encoding and decoding of the primitive-array records shared with `TidalNative.java`, whose
//! layout [`crate::layout`] declares: strides, field offsets and range checks. Pure functions,
//! testable without a JVM.

use crate::layout::*;
use tidal_core::config::Settings;
use tidal_core::ids::LocationId;
use tidal_core::ids::MAX_ALLOCATION_ID;
use tidal_core::ids::{AllocationId, AppKey, NodeId};
use tidal_core::request::Ask;
use tidal_core::{Decision, ResourceKind, Resources};

/// A malformed array or out-of-range value from the Java side.
#[derive(Debug, PartialEq)]
pub struct WireError(pub String);

type WireResult<T> = Result<T, WireError>;

/// A YARN container's or node's amounts: memory, vcores, and the GPUs and FPGAs of Hadoop 3's
/// resource types (always 0 on Hadoop 2).
pub fn yarn_resources(memory_mb: i64, vcores: i64, gpus: i64, fpgas: i64) -> Resources {
    let mut r = Resources::with_gpus(memory_mb, vcores, gpus);
    r.set(ResourceKind::Fpgas, fpgas);
    r
}

pub fn node_id(v: i32) -> WireResult<NodeId> {
    u32::try_from(v).map_err(|_| WireError(format!("node id {v} is negative")))
}

pub fn location(v: i32, what: &str) -> WireResult<LocationId> {
    u32::try_from(v).map_err(|_| WireError(format!("{what} id {v} is negative")))
}

pub fn locations(values: &[i32], what: &str) -> WireResult<Vec<LocationId>> {
    values.iter().map(|&v| location(v, what)).collect()
}

/// Location ids as Java ints; every id the core holds came from Java as one.
pub fn location_ints(ids: &[LocationId]) -> WireResult<Vec<i32>> {
    ids.iter()
        .map(|&id| i32::try_from(id).map_err(|_| WireError(format!("location id {id} does not fit a Java int"))))
        .collect()
}

pub fn app_key(v: i64) -> WireResult<AppKey> {
    u64::try_from(v).map_err(|_| WireError(format!("application key {v} is negative")))
}

pub fn allocation_id(v: i64) -> WireResult<AllocationId> {
    match u64::try_from(v) {
        Ok(id) if id < MAX_ALLOCATION_ID => Ok(id),
        _ => Err(WireError(format!("allocation id {v} is outside [0, 2^40)"))),
    }
}

/// Allocation ids into `out` (cleared first), every one checked before the caller acts on any;
/// an error names the position and the value (`what 3: allocation id -1 is outside ...`).
pub fn allocation_ids(values: &[i64], what: &str, out: &mut Vec<AllocationId>) -> WireResult<()> {
    out.clear();
    for (i, &v) in values.iter().enumerate() {
        out.push(allocation_id(v).map_err(|e| WireError(format!("{what} {i}: {}", e.0)))?);
    }
    Ok(())
}

fn settings_len(raw: &[i64]) -> WireResult<()> {
    if raw.len() != SETTINGS_LEN {
        return Err(WireError(format!("settings array has {} values, expected {SETTINGS_LEN}", raw.len())));
    }
    Ok(())
}

/// The core settings of the settings array (its `SET_` fields); [`SET_FAULT_INJECTION`] is the
/// bridge's, read by [`fault_injection`].
pub fn settings(raw: &[i64]) -> WireResult<Settings> {
    settings_len(raw)?;
    let max_assign = u32::try_from(raw[SET_MAX_ASSIGN_PER_HEARTBEAT]).map_err(|_| {
        WireError(format!("max assignments per heartbeat {} is out of range", raw[SET_MAX_ASSIGN_PER_HEARTBEAT]))
    })?;
    let reserve_containers = match raw[SET_RESERVE_CONTAINERS] {
        0 => false,
        1 => true,
        v => return Err(WireError(format!("container reservation flag {v} is not 0 or 1"))),
    };
    let default_max_am_share = match raw[SET_DEFAULT_MAX_AM_SHARE_PPM] {
        -1 => None,
        ppm @ 0..=1_000_000 => Some(ppm as f64 / 1e6),
        v => return Err(WireError(format!("default AM share {v} ppm is not -1 or in [0, 1000000]"))),
    };
    Ok(Settings {
        min_allocation: Resources::new(raw[SET_MIN_MEMORY_MB], raw[SET_MIN_VCORES]),
        max_allocation: tidal_core::config::max_allocation(raw[SET_MAX_MEMORY_MB], raw[SET_MAX_VCORES]),
        max_assign_per_heartbeat: max_assign,
        reserve_containers,
        default_max_am_share,
        ..Settings::default()
    })
}

/// The fault-injection flag of the settings array: 1 on, 0 off.
pub fn fault_injection(raw: &[i64]) -> WireResult<bool> {
    settings_len(raw)?;
    match raw[SET_FAULT_INJECTION] {
        0 => Ok(false),
        1 => Ok(true),
        v => Err(WireError(format!("fault injection flag {v} is not 0 or 1"))),
    }
}

/// Decodes ask records of [`ASK_STRIDE`] longs (the `ASK_` fields).
pub fn decode_asks(raw: &[i64], out: &mut Vec<Ask>) -> WireResult<()> {
    out.clear();
    if !raw.len().is_multiple_of(ASK_STRIDE) {
        return Err(WireError(format!("ask array length {} is not a multiple of {ASK_STRIDE}", raw.len())));
    }
    for (i, rec) in raw.chunks_exact(ASK_STRIDE).enumerate() {
        let priority = rec[ASK_PRIORITY];
        let priority =
            i32::try_from(priority).map_err(|_| WireError(format!("ask {i}: priority {priority} out of range")))?;
        let location = rec[ASK_LOCATION];
        let location =
            u32::try_from(location).map_err(|_| WireError(format!("ask {i}: location id {location} out of range")))?;
        let relax_locality = match rec[ASK_RELAX_LOCALITY] {
            0 => false,
            1 => true,
            v => return Err(WireError(format!("ask {i}: relaxLocality flag {v} is not 0 or 1"))),
        };
        out.push(Ask {
            priority,
            location,
            num_containers: rec[ASK_NUM_CONTAINERS],
            relax_locality,
            capability: yarn_resources(rec[ASK_MEMORY_MB], rec[ASK_VCORES], rec[ASK_GPUS], rec[ASK_FPGAS]),
        });
    }
    Ok(())
}

/// The layout of one heartbeat's exchange buffer of `longs` longs: `completed` allocation ids
/// come in from its start and up to `max_decisions` decision records go out from its start, so
/// the buffer must hold either. Returns the two counts.
pub fn heartbeat_exchange(longs: usize, completed: i32, max_decisions: i32) -> WireResult<(usize, usize)> {
    let completed =
        usize::try_from(completed).map_err(|_| WireError(format!("completed count {completed} is negative")))?;
    let max =
        usize::try_from(max_decisions).map_err(|_| WireError(format!("decision count {max_decisions} is negative")))?;
    let needed = completed.max(max.saturating_mul(DECISION_STRIDE));
    if needed > longs {
        return Err(WireError(format!(
            "heartbeat buffer holds {longs} longs; {completed} completed ids and {max} decision records of \
             {DECISION_STRIDE} need {needed}"
        )));
    }
    Ok((completed, max))
}

/// Encodes decisions as records of [`DECISION_STRIDE`] longs (the `DEC_` fields).
pub fn encode_decisions(decisions: &[Decision], out: &mut Vec<i64>) {
    out.clear();
    for d in decisions {
        let mut rec = [0; DECISION_STRIDE];
        rec[DEC_ALLOCATION_ID] = d.allocation_id as i64;
        rec[DEC_APP_KEY] = d.app as i64;
        rec[DEC_PRIORITY] = i64::from(d.priority);
        rec[DEC_LOCALITY] = locality_value(d.locality);
        rec[DEC_MEMORY_MB] = d.resources.memory_mb();
        rec[DEC_VCORES] = d.resources.vcores();
        rec[DEC_GPUS] = d.resources.get(ResourceKind::Gpus);
        rec[DEC_FPGAS] = d.resources.get(ResourceKind::Fpgas);
        rec[DEC_KIND] = kind_value(d.kind);
        out.extend_from_slice(&rec);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tidal_core::Locality;

    #[test]
    fn settings_that_would_overflow_normalising_are_refused_by_the_scheduler() {
        let xml = "<tidal><queue name=\"a\"/></tidal>";
        let over = settings(&[i64::MAX, 1, i64::MAX, 32, 10, 0, 0, -1]).unwrap();
        let e = tidal_core::Scheduler::from_xml(xml, over).unwrap_err();
        assert_eq!(e.kind(), tidal_core::error::ErrorKind::Invalid, "{e}");
        let negative = settings(&[-1024, 1, 8192, 32, 10, 0, 0, -1]).unwrap();
        assert!(tidal_core::Scheduler::from_xml(xml, negative).is_err());
    }

    #[test]
    fn asks_round_trip_and_reject_bad_shapes() {
        let mut asks = Vec::new();
        decode_asks(&[3, 0, 2, 1, 1024, 1, 0, 0, 3, 7, 1, 0, 1024, 1, 2, 1], &mut asks).unwrap();
        assert_eq!(asks.len(), 2);
        assert_eq!(asks[1].capability, yarn_resources(1024, 1, 2, 1));
        assert_eq!(asks[1].location, 7);
        assert!(!asks[1].relax_locality);
        assert!(decode_asks(&[1, 2, 3], &mut asks).unwrap_err().0.contains("multiple of 8"));
        assert!(decode_asks(&[1, -1, 1, 1, 1, 1, 0, 0], &mut asks).unwrap_err().0.contains("location"));
        assert!(decode_asks(&[1, 0, 1, 2, 1, 1, 0, 0], &mut asks).unwrap_err().0.contains("relaxLocality"));
        assert!(decode_asks(&[1i64 << 40, 0, 1, 1, 1, 1, 0, 0], &mut asks).unwrap_err().0.contains("priority"));
    }

    #[test]
    fn decisions_encode_in_field_order() {
        let d = Decision {
            kind: tidal_core::DecisionKind::Reserve,
            allocation_id: 9,
            app: 4,
            priority: 20,
            locality: Locality::RackLocal,
            resources: Resources::with_gpus(2048, 2, 1),
        };
        let mut out = Vec::new();
        encode_decisions(&[d, d], &mut out);
        assert_eq!(&out[..9], &[9, 4, 20, 1, 2048, 2, 1, 1, 0]);
        assert_eq!(out.len(), 18);
    }

    #[test]
    fn the_heartbeat_exchange_must_hold_the_ids_in_and_the_records_out() {
        assert_eq!(heartbeat_exchange(90, 90, 10), Ok((90, 10)));
        assert_eq!(heartbeat_exchange(90, 0, 0), Ok((0, 0)));
        assert!(heartbeat_exchange(90, 91, 1).unwrap_err().0.contains("91 completed ids"));
        assert!(heartbeat_exchange(89, 0, 10).unwrap_err().0.contains("need 90"));
        assert!(heartbeat_exchange(60, -1, 1).unwrap_err().0.contains("negative"));
        assert!(heartbeat_exchange(60, 1, -1).unwrap_err().0.contains("negative"));
    }

    #[test]
    fn ids_and_settings_are_range_checked() {
        assert!(node_id(-1).is_err());
        assert!(app_key(-5).is_err());
        assert!(allocation_id(1 << 40).is_err());
        assert_eq!(allocation_id(7), Ok(7));
        assert!(settings(&[1024, 1, 8192]).unwrap_err().0.contains("expected 8"));
        assert!(settings(&[512, 1, 4096, 4, 3, 0]).unwrap_err().0.contains("expected 8"));
        assert!(settings(&[1024, 1, 8192, 8, -1, 0, 0, -1]).is_err());
        let s = settings(&[512, 1, 4096, 4, 3, 0, 1, 500_000]).unwrap();
        assert_eq!((s.max_assign_per_heartbeat, s.reserve_containers, s.default_max_am_share), (3, true, Some(0.5)));
        let s = settings(&[512, 1, 4096, 4, 3, 0, 0, -1]).unwrap();
        assert_eq!((s.reserve_containers, s.default_max_am_share), (false, None));
        assert!(settings(&[512, 1, 4096, 4, 3, 0, 2, -1]).unwrap_err().0.contains("reservation flag 2"));
        assert!(settings(&[512, 1, 4096, 4, 3, 0, 0, 1_000_001]).unwrap_err().0.contains("AM share"));
        assert!(settings(&[512, 1, 4096, 4, 3, 0, 0, -2]).unwrap_err().0.contains("AM share"));
    }

    #[test]
    fn a_list_of_allocation_ids_names_the_first_bad_one() {
        let mut ids = vec![99];
        allocation_ids(&[3, 4], "release", &mut ids).unwrap();
        assert_eq!(ids, [3, 4]);
        let e = allocation_ids(&[3, 1 << 40, -1], "release", &mut ids).unwrap_err();
        assert_eq!(e.0, "release 1: allocation id 1099511627776 is outside [0, 2^40)");
    }

    #[test]
    fn fault_injection_is_a_flag_of_its_own() {
        assert_eq!(fault_injection(&[512, 1, 4096, 4, 3, 0, 0, -1]), Ok(false));
        assert_eq!(fault_injection(&[512, 1, 4096, 4, 3, 1, 0, -1]), Ok(true));
        assert!(fault_injection(&[512, 1, 4096, 4, 3, 2, 0, -1]).unwrap_err().0.contains("not 0 or 1"));
        assert!(fault_injection(&[512, 1, 4096, 4, 3]).is_err());
        // The core settings do not depend on it.
        assert_eq!(settings(&[512, 1, 4096, 4, 3, 1, 0, -1]), settings(&[512, 1, 4096, 4, 3, 0, 0, -1]));
    }
}
