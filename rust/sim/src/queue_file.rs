//! The allocation file the simulator hands the core, written as XML here and nowhere else.
//!
//! It holds the workload's queues with the spec's weights, the app policy and its knobs, slot
//! reservation for the queues that ask for it, and each LQ's declaration, as the elements
//! `tidal_core::config` parses.

use crate::policies::{check_app_policy, check_queue_policy, AppKnob};
use crate::spec::{SchedulerSpec, SlotReservationSpec};
use crate::workload::LqDecl;
use anyhow::{bail, Result};
use quick_xml::events::BytesText;
use quick_xml::Writer;
use std::fmt::Display;
use std::io::{self, Write as _};
use tidal_core::ResourceKind;

type Xml = Writer<Vec<u8>>;

/// The allocation file for `policy` over the workload's `queues`. LQ declarations are written
/// only for policies other than DRF, which has no use for them.
pub fn write(policy: &str, queues: &[String], scheduler: &SchedulerSpec, lqs: &[LqDecl]) -> Result<String> {
    check_queue_policy(policy)?;
    check_app_policy_knobs(scheduler)?;
    let reservation = scheduler.slot_reservation.as_ref();
    if let Some(unknown) = reservation.and_then(|r| r.queues.iter().find(|q| !queues.contains(q))) {
        bail!(
            "scheduler.slot_reservation.queues names '{unknown}', which is not a queue of the workload ({})",
            queues.join(", ")
        );
    }
    let mut xml = Writer::new_with_indent(Vec::new(), b' ', 2);
    xml.create_element("tidal").write_inner_content(|xml| {
        element(xml, "policy", policy)?;
        app_policy(xml, scheduler)?;
        for name in queues {
            let lq = lqs.iter().find(|l| &l.name == name).filter(|_| policy != "drf");
            let reserve = reservation.filter(|r| r.queues.contains(name));
            queue(xml, name, scheduler.weights.get(name).copied().unwrap_or(1.0), reserve, lq)?;
        }
        Ok(())
    })?;
    Ok(String::from_utf8(xml.into_inner())?)
}

/// The app policy exists and every knob the spec sets belongs to it.
fn check_app_policy_knobs(s: &SchedulerSpec) -> Result<()> {
    if let Some(p) = &s.app_policy {
        check_app_policy(p)?;
    }
    let knob = |field: &str, wanted: &[&str]| -> Result<()> {
        match s.app_policy.as_deref() {
            Some(p) if wanted.contains(&p) => Ok(()),
            other => bail!(
                "scheduler.{field} applies to app_policy {}, not {}",
                wanted.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(" or "),
                other.map_or("the default fifo".into(), |p| format!("\"{p}\""))
            ),
        }
    };
    if s.altruism_probability.is_some() {
        knob("altruism_probability", &AppKnob::Altruism.policies())?;
    }
    if s.fairness_knob.is_some() {
        knob("fairness_knob", &AppKnob::Fairness.policies())?;
    }
    Ok(())
}

fn element(xml: &mut Xml, name: &str, text: impl Display) -> io::Result<()> {
    xml.create_element(name).write_text_content(BytesText::new(&text.to_string()))?;
    Ok(())
}

/// `<app-policy>`, its knobs, and the spec's extra elements verbatim.
fn app_policy(xml: &mut Xml, s: &SchedulerSpec) -> io::Result<()> {
    if let Some(p) = &s.app_policy {
        element(xml, "app-policy", p)?;
    }
    if let Some(p) = s.altruism_probability {
        element(xml, "altruism-probability", p)?;
    }
    if let Some(f) = s.fairness_knob {
        element(xml, "fairness-knob", f)?;
    }
    for (user, weight) in &s.uwfq_user_weights {
        xml.create_element("uwfq-user-weight")
            .with_attribute(("user", user.as_str()))
            .write_text_content(BytesText::new(&weight.to_string()))?;
    }
    if let Some(g) = s.uwfq_grace_period_s {
        element(xml, "uwfq-grace-period-sec", g)?;
    }
    if let Some(t) = s.uwfq_default_task_s {
        element(xml, "uwfq-default-task-sec", t)?;
    }
    let extra = s.extra_xml.trim();
    if !extra.is_empty() {
        xml.write_indent()?;
        xml.get_mut().write_all(extra.as_bytes())?;
    }
    Ok(())
}

fn queue(
    xml: &mut Xml,
    name: &str,
    weight: f64,
    reservation: Option<&SlotReservationSpec>,
    lq: Option<&LqDecl>,
) -> io::Result<()> {
    xml.create_element("queue").with_attribute(("name", name)).write_inner_content(|xml| {
        element(xml, "weight", weight)?;
        if let Some(r) = reservation {
            slot_reservation(xml, r)?;
        }
        if let Some(l) = lq {
            element(xml, "type", "lq")?;
            element(xml, "period-sec", l.period_s)?;
            element(xml, "deadline-sec", l.deadline_s)?;
            element(xml, "first-burst-sec", l.first_burst_s)?;
            xml.create_element("burst-demand").write_inner_content(|xml| {
                for k in ResourceKind::ALL {
                    let v = l.burst[k as usize].ceil() as i64;
                    if v > 0 {
                        element(xml, k.name(), v)?;
                    }
                }
                Ok(())
            })?;
        }
        Ok(())
    })?;
    Ok(())
}

/// `<slot-reservation .../>` with the attributes the spec sets; the core has defaults for the rest.
fn slot_reservation(xml: &mut Xml, r: &SlotReservationSpec) -> io::Result<()> {
    let attributes = [
        ("isolation-probability", r.isolation_probability.map(|p| p.to_string())),
        ("threshold", r.threshold.map(|t| t.to_string())),
        ("prior-shape", r.prior_shape.map(|a| a.to_string())),
        ("min-samples", r.min_samples.map(|m| m.to_string())),
    ];
    let set = attributes.iter().filter_map(|(k, v)| v.as_deref().map(|v| (*k, v)));
    xml.create_element("slot-reservation").with_attributes(set).write_empty()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use tidal_core::config::{parse_queue_file, QueueFile};

    fn scheduler() -> SchedulerSpec {
        SchedulerSpec {
            app_policy: Some("uwfq".into()),
            weights: BTreeMap::from([("lq0".into(), 2.0), ("tq1".into(), 0.5)]),
            uwfq_user_weights: BTreeMap::from([("a&b".into(), 2.5), ("c\"d<".into(), 1.0)]),
            uwfq_grace_period_s: Some(3.5),
            uwfq_default_task_s: Some(12.0),
            slot_reservation: Some(SlotReservationSpec {
                queues: vec!["lq0".into(), "tq0".into()],
                isolation_probability: Some(0.4),
                threshold: None,
                prior_shape: Some(1.6),
                min_samples: Some(2),
            }),
            extra_xml: " <n-min>3</n-min> ".into(),
            ..Default::default()
        }
    }

    fn lq() -> LqDecl {
        LqDecl {
            name: "lq0".into(),
            period_s: 300.0,
            deadline_s: 24.266,
            first_burst_s: 50.0,
            burst: [2305505.2, 1408.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        }
    }

    fn parsed(policy: &str, s: &SchedulerSpec) -> QueueFile {
        let queues = ["lq0", "tq0", "tq1"].map(String::from);
        let xml = write(policy, &queues, s, &[lq()]).unwrap();
        parse_queue_file(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"))
    }

    /// The configuration of `scheduler()` and `lq()`, written out by hand.
    const EXPECTED: &str = r#"<tidal>
  <policy>strict-priority</policy>
  <app-policy>uwfq</app-policy>
  <uwfq-user-weight user="a&amp;b">2.5</uwfq-user-weight>
  <uwfq-user-weight user="c&quot;d&lt;">1</uwfq-user-weight>
  <uwfq-grace-period-sec>3.5</uwfq-grace-period-sec>
  <uwfq-default-task-sec>12</uwfq-default-task-sec>
  <n-min>3</n-min>
  <queue name="lq0"><weight>2</weight><slot-reservation isolation-probability="0.4" prior-shape="1.6" min-samples="2"/><type>lq</type><period-sec>300</period-sec><deadline-sec>24.266</deadline-sec><first-burst-sec>50</first-burst-sec><burst-demand><memory-mb>2305506</memory-mb><vcores>1409</vcores></burst-demand></queue>
  <queue name="tq0"><weight>1</weight><slot-reservation isolation-probability="0.4" prior-shape="1.6" min-samples="2"/></queue>
  <queue name="tq1"><weight>0.5</weight></queue>
</tidal>
"#;

    #[test]
    fn the_file_parses_to_the_configuration_the_spec_describes() {
        let s = scheduler();
        assert_eq!(parsed("strict-priority", &s), parse_queue_file(EXPECTED).unwrap());
        // DRF has no use for LQ declarations.
        let drf = parsed("drf", &s);
        assert!(drf.queues.iter().all(|q| !q.is_latency_sensitive()));
        let tetris =
            SchedulerSpec { app_policy: Some("tetris".into()), fairness_knob: Some(0.25), ..SchedulerSpec::default() };
        let expected = "<tidal><policy>bopf</policy><app-policy>tetris</app-policy><fairness-knob>0.25</fairness-knob>\
                        <queue name=\"lq0\"><weight>1</weight><type>lq</type><period-sec>300</period-sec>\
                        <deadline-sec>24.266</deadline-sec><first-burst-sec>50</first-burst-sec><burst-demand>\
                        <memory-mb>2305506</memory-mb><vcores>1409</vcores></burst-demand></queue>\
                        <queue name=\"tq0\"/><queue name=\"tq1\"/></tidal>";
        assert_eq!(parsed("bopf", &tetris), parse_queue_file(expected).unwrap());
    }

    #[test]
    fn knobs_of_another_app_policy_and_unknown_queues_are_refused() {
        let queues = ["q".to_string()];
        let carbyne_knob = SchedulerSpec { altruism_probability: Some(0.5), ..Default::default() };
        let e = write("drf", &queues, &carbyne_knob, &[]).unwrap_err().to_string();
        assert!(e.contains("altruism_probability") && e.contains("the default fifo"), "{e}");
        let unknown = SchedulerSpec {
            slot_reservation: Some(SlotReservationSpec { queues: vec!["p".into()], ..Default::default() }),
            ..Default::default()
        };
        let e = write("drf", &queues, &unknown, &[]).unwrap_err().to_string();
        assert!(e.contains("'p'") && e.contains("not a queue of the workload"), "{e}");
        assert!(write("lottery", &queues, &SchedulerSpec::default(), &[]).is_err());
    }
}
