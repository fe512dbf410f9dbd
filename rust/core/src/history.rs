//! What the scheduler did over time, for a live dashboard and the simulator's reports: per-queue
//! shares sampled at a fixed interval of the core's clock, latency-sensitive queues' bursts,
//! and admission decisions with the policy's reasons.
//!
//! The scheduler owns one [`History`] and feeds it at named points: [`History::due`] after
//! every heartbeat (one comparison; a sample is taken only when the clock has advanced by the
//! sample interval since the last one), and [`History::admitted`] wherever a queue is admitted.
//! Bursts are not reported by the policy as events: each sample compares the policy's
//! [`BurstView`] of every LQ with what the previous sample saw (burst count, deadlines met,
//! phase). So an end is timed to the sample that saw it (or to the start of the burst that
//! replaced it), and a burst that starts and ends between two samples is not seen. Admission
//! classes the policy changes by itself (BoPF re-admits when the capacity changes) are found the
//! same way, timed at [`crate::policy::Policy::readmitted_at_ms`].
//!
//! Memory is bounded by fixed caps, oldest dropped first: [`MAX_SAMPLES`] samples holding at
//! most [`MAX_SAMPLE_ENTRIES`] queue entries in all, [`MAX_BURSTS`] bursts and
//! [`MAX_ADMISSIONS`] admission decisions, plus one small record per queue slot. Queue names
//! are shared, not copied, between entries, so a sample allocates nothing once the rings are
//! full.
//!
//! A snapshot carries the recent end of the history across restarts ([`History::tail`],
//! [`History::restore`]): the newest [`TAIL_BURSTS`] bursts and [`TAIL_ADMISSIONS`] admission
//! decisions, and whole samples, newest first, up to [`TAIL_SAMPLE_ENTRIES`] queue entries, all
//! within [`TAIL_BYTES`] of JSON however long queue names and reasons are. The saved state goes
//! into one ZooKeeper znode (1 MB at most by default) with everything else Tidal keeps, and is
//! written every 10 s by default, so the tail stays below 300 KB: about 17 minutes of samples
//! of one queue at the default interval, 100 s of ten, the last sample of a thousand. The record
//! types are those of the history document: a field added to them needs a serde default for
//! older snapshots.

use crate::ids::QueueIdx;
use crate::policy::{Admission, BurstView, Policy};
use crate::state::{ClusterState, FairShares, Queue};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;

/// Samples kept: an hour at the default interval of one second.
pub const MAX_SAMPLES: usize = 3_600;
/// Queue entries kept over all samples (about 90 bytes each): with many queues fewer samples
/// are kept. A sample of more queues than this keeps the first this many.
pub const MAX_SAMPLE_ENTRIES: usize = 32_768;
/// Bursts kept.
pub const MAX_BURSTS: usize = 1_024;
/// Admission decisions kept.
pub const MAX_ADMISSIONS: usize = 1_024;

/// JSON bytes a snapshot's history takes at most, besides its four field names. Bursts and
/// admission decisions take at most 40 and 64 KiB and their open bursts 22 KiB (256 records
/// of 86 bytes), so samples have at least 162 KiB.
pub const TAIL_BYTES: usize = 288 * 1024;
/// Queue entries a snapshot keeps over all its samples: 160 to 190 KB with short names.
pub const TAIL_SAMPLE_ENTRIES: usize = 1_000;
/// Bursts a snapshot keeps: 32 KB with short names.
pub const TAIL_BURSTS: usize = 256;
const TAIL_BURST_BYTES: usize = 40 * 1024;
/// Admission decisions a snapshot keeps: 60 KB with BoPF's reasons and short names.
pub const TAIL_ADMISSIONS: usize = 256;
const TAIL_ADMISSION_BYTES: usize = 64 * 1024;

/// One queue at one sample.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSample {
    pub name: Arc<str>,
    /// Dominant share of the cluster in use.
    pub share: f64,
    /// Weighted DRF fair share (as status reports it).
    pub fair_share: f64,
    /// Average dominant share since the queue was created.
    pub long_term_share: f64,
    /// The guaranteed rate's dominant share of the cluster; none without a guarantee.
    pub guaranteed_share: Option<f64>,
    /// The burst phase; none when the policy keeps no burst state for the queue.
    #[serde(deserialize_with = "burst_phase")]
    pub burst_phase: Option<Label>,
    pub running_containers: u64,
    pub pending_containers: u64,
}

/// A sample's own fields; its queue entries follow each other in the entry ring.
#[derive(Clone, Copy, Debug)]
struct SampleHead {
    t_ms: i64,
    cluster_share: f64,
    entries: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BurstRecord {
    pub queue: Arc<str>,
    pub started_ms: i64,
    pub deadline_at_ms: Option<i64>,
    /// None while on.
    pub ended_ms: Option<i64>,
    pub guaranteed_share: Option<f64>,
    /// None while on, or when the policy's records were reset (a reconfiguration).
    pub met_deadline: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdmissionRecord {
    pub t_ms: i64,
    pub queue: Arc<str>,
    #[serde(deserialize_with = "class")]
    pub class: Label,
    pub admitted: bool,
    pub reason: String,
}

/// A policy's label. Named so that serde's derive, which reads a `&'static str` field as borrowed
/// from a `'static` input, leaves it to [`label`].
type Label = &'static str;

/// One of `known`, the labels a field takes: they are `&'static str`, the policies' own.
fn label<E: serde::de::Error>(field: &str, known: &[&'static str], text: &str) -> Result<&'static str, E> {
    known
        .iter()
        .find(|k| **k == text)
        .copied()
        .ok_or_else(|| E::custom(format!("history field '{field}' is '{text}', not one of {}", known.join(", "))))
}

fn class<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    label("class", &Admission::CLASSES, &String::deserialize(d)?)
}

fn burst_phase<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'static str>, D::Error> {
    Option::<String>::deserialize(d)?.map(|p| label("burst_phase", &BurstView::PHASES, &p)).transpose()
}

/// The recent end of the history, as a snapshot carries it (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryTail {
    /// Oldest first.
    pub samples: Vec<SampleTail>,
    pub bursts: Vec<BurstRecord>,
    pub admissions: Vec<AdmissionRecord>,
    /// The bursts still on, with what the history had seen of their queues.
    pub open_bursts: Vec<OpenBurst>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleTail {
    pub t_ms: i64,
    pub cluster_share: f64,
    pub queues: Vec<QueueSample>,
}

/// A burst still on, and the policy's counts the history last saw for its queue: restored, the
/// next sample neither records the burst again nor misses its end or a burst that replaced it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenBurst {
    /// Index in [`HistoryTail::bursts`].
    pub burst: usize,
    pub bursts_started: u64,
    pub bursts_met: u64,
}

/// Room left in one part of a [`HistoryTail`].
struct Room {
    records: usize,
    bytes: usize,
}

impl Room {
    /// Whether `item` (`records` of this part's records) fits, taking its room if so: its JSON
    /// and the comma after it.
    fn take(&mut self, records: usize, item: &impl Serialize) -> bool {
        let len = json_len(item) + 1;
        if records > self.records || len > self.bytes {
            return false;
        }
        self.records -= records;
        self.bytes -= len;
        true
    }
}

fn json_len(value: &impl Serialize) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut len = Count(0);
    serde_json::to_writer(&mut len, value).expect("history records serialise");
    len.0
}

/// The newest of `items` that fit in `room`, oldest first.
fn newest<T: Clone + Serialize>(items: &VecDeque<T>, mut room: Room) -> Vec<T> {
    let n = items.iter().rev().take_while(|x| room.take(1, x)).count();
    items.range(items.len() - n..).cloned().collect()
}

/// What the history last saw of the queue in one slot.
#[derive(Clone, Debug)]
struct Slot {
    name: Arc<str>,
    class: &'static str,
    admitted: bool,
    bursts_started: u64,
    bursts_met: u64,
    /// Sequence number of the queue's burst record still on.
    open_burst: Option<u64>,
}

/// A ring that drops its oldest element when full, numbering elements as they are pushed.
#[derive(Debug)]
struct Ring<T> {
    items: VecDeque<T>,
    cap: usize,
    pushed: u64,
}

impl<T> Ring<T> {
    fn new(cap: usize) -> Ring<T> {
        Ring { items: VecDeque::new(), cap, pushed: 0 }
    }

    /// Pushes `item` and returns its sequence number.
    fn push(&mut self, item: T) -> u64 {
        if self.items.len() == self.cap {
            self.items.pop_front();
        }
        self.items.push_back(item);
        self.pushed += 1;
        self.pushed - 1
    }

    /// The element numbered `seq`, unless it was dropped.
    fn get_mut(&mut self, seq: u64) -> Option<&mut T> {
        let first = self.pushed - self.items.len() as u64;
        seq.checked_sub(first).and_then(|i| self.items.get_mut(i as usize))
    }
}

#[derive(Debug)]
pub struct History {
    interval_ms: i64,
    next_sample_ms: i64,
    heads: VecDeque<SampleHead>,
    entries: VecDeque<QueueSample>,
    bursts: Ring<BurstRecord>,
    admissions: Ring<AdmissionRecord>,
    /// By queue index: as long as the queue table, which reuses removed queues' slots.
    slots: Vec<Option<Slot>>,
    /// The policy's last re-admission round recorded: each round is a decision for every queue,
    /// recorded with its reason even where the class stayed the same.
    readmission_seen: Option<i64>,
}

/// The history document (see the module docs); borrowed from [`History`] to serialise.
#[derive(Serialize)]
struct HistoryDoc<'a> {
    now_ms: i64,
    sample_interval_ms: i64,
    samples: Vec<SampleDoc<'a>>,
    bursts: &'a VecDeque<BurstRecord>,
    admissions: &'a VecDeque<AdmissionRecord>,
}

#[derive(Serialize)]
struct SampleDoc<'a> {
    t_ms: i64,
    cluster_share: f64,
    queues: Vec<&'a QueueSample>,
}

impl History {
    pub fn new(interval_ms: i64) -> History {
        History {
            interval_ms,
            next_sample_ms: i64::MIN,
            heads: VecDeque::new(),
            entries: VecDeque::new(),
            bursts: Ring::new(MAX_BURSTS),
            admissions: Ring::new(MAX_ADMISSIONS),
            slots: Vec::new(),
            readmission_seen: None,
        }
    }

    pub fn interval_ms(&self) -> i64 {
        self.interval_ms
    }

    /// Takes a new interval; the next sample is due that long after the last one.
    pub fn set_interval(&mut self, interval_ms: i64) {
        if let Some(last) = self.heads.back() {
            self.next_sample_ms = last.t_ms.saturating_add(interval_ms);
        }
        self.interval_ms = interval_ms;
    }

    /// Whether a sample is due at `now_ms`: the hot path's one comparison.
    #[inline]
    pub fn due(&self, now_ms: i64) -> bool {
        now_ms >= self.next_sample_ms
    }

    fn slot(&mut self, qi: QueueIdx, q: &Queue) -> &mut Slot {
        if self.slots.len() <= qi {
            self.slots.resize(qi + 1, None);
        }
        let slot = &mut self.slots[qi];
        match slot {
            Some(s) if *s.name == *q.name() => {}
            _ => {
                // A new queue, or another queue in a reused slot: nothing seen of it yet.
                *slot = Some(Slot {
                    name: q.name().into(),
                    class: "",
                    admitted: false,
                    bursts_started: 0,
                    bursts_met: 0,
                    open_burst: None,
                });
            }
        }
        slot.as_mut().expect("set above")
    }

    /// Records the admission decision for queue `qi` at `t_ms`.
    pub fn admitted(&mut self, t_ms: i64, qi: QueueIdx, q: &Queue, admission: &Admission) {
        let slot = self.slot(qi, q);
        slot.class = admission.class;
        slot.admitted = admission.admitted;
        let record = AdmissionRecord {
            t_ms,
            queue: slot.name.clone(),
            class: admission.class,
            admitted: admission.admitted,
            reason: admission.reason.clone(),
        };
        self.admissions.push(record);
    }

    /// Records the admissions of live queues that the policy decided by itself since they were
    /// last recorded: every queue's after a re-admission round, else those whose class changed.
    pub fn revise_admissions(&mut self, state: &ClusterState, policy: &dyn Policy) {
        let new_round = self.new_readmission_round(policy);
        for (qi, q) in state.queues.iter().enumerate().filter(|(_, q)| !q.retired) {
            self.revise(state, policy, new_round, qi, q, &policy.queue_view(qi).admission);
        }
    }

    fn new_readmission_round(&mut self, policy: &dyn Policy) -> bool {
        let round = policy.readmitted_at_ms();
        let new_round = round != self.readmission_seen;
        self.readmission_seen = round;
        new_round
    }

    fn revise(
        &mut self,
        state: &ClusterState,
        policy: &dyn Policy,
        new_round: bool,
        qi: QueueIdx,
        q: &Queue,
        admission: &Admission,
    ) {
        let slot = self.slot(qi, q);
        if new_round || slot.class != admission.class || slot.admitted != admission.admitted {
            let t = policy.readmitted_at_ms().unwrap_or(state.now_ms);
            self.admitted(t, qi, q, admission);
        }
    }

    /// Samples every visible queue at the state's clock, and records the bursts and admission
    /// changes seen since the previous sample.
    pub fn sample(&mut self, state: &ClusterState, policy: &dyn Policy) {
        let now = state.now_ms;
        self.next_sample_ms = now.saturating_add(self.interval_ms);
        let capacity = &state.capacity;
        let fair = FairShares::of(state);
        let mut used = crate::Resources::ZERO;
        let mut taken = 0;
        if self.heads.len() == MAX_SAMPLES {
            self.drop_oldest_sample();
        }
        let new_round = self.new_readmission_round(policy);
        for (qi, q) in state.queues.iter().enumerate().filter(|(_, q)| q.visible()) {
            used += q.usage;
            let view = policy.queue_view(qi);
            if !q.retired {
                self.revise(state, policy, new_round, qi, q, &view.admission);
            }
            let guaranteed_share = view.guaranteed_rate.map(|r| r.dominant_share(capacity));
            if let Some(b) = &view.burst {
                self.track_burst(now, qi, q, b, guaranteed_share);
            }
            if taken == MAX_SAMPLE_ENTRIES {
                continue;
            }
            taken += 1;
            if self.entries.len() == MAX_SAMPLE_ENTRIES {
                self.drop_oldest_sample();
            }
            let name = self.slot(qi, q).name.clone();
            self.entries.push_back(QueueSample {
                name,
                share: q.usage.dominant_share(capacity),
                fair_share: fair.of_queue(q),
                long_term_share: q.long_term_dominant_share(capacity, now),
                guaranteed_share,
                burst_phase: view.burst.as_ref().map(|b| b.phase),
                running_containers: q.running_containers,
                pending_containers: q.pending_containers,
            });
        }
        self.heads.push_back(SampleHead { t_ms: now, cluster_share: used.dominant_share(capacity), entries: taken });
    }

    /// Drops the oldest complete sample with its entries.
    fn drop_oldest_sample(&mut self) {
        let head = self.heads.pop_front().expect("the sample being taken has fewer entries than the cap");
        self.entries.drain(..head.entries);
    }

    fn track_burst(&mut self, now: i64, qi: QueueIdx, q: &Queue, b: &BurstView, guaranteed_share: Option<f64>) {
        let slot = self.slot(qi, q);
        let (started_before, met_before) = (slot.bursts_started, slot.bursts_met);
        let restarted = b.bursts_started != started_before;
        let close = match slot.open_burst {
            Some(seq) if restarted || b.phase == "idle" => {
                // Counts that went down were reset with the policy: the outcome is unknown.
                let met = if b.bursts_met_deadline > met_before {
                    Some(true)
                } else if b.bursts_met_deadline == met_before && b.bursts_started >= started_before {
                    Some(false)
                } else {
                    None
                };
                // Replaced by a new burst: the old one ended when that one started, at the latest.
                let ended = if restarted { b.started_ms.unwrap_or(now) } else { now };
                slot.open_burst = None;
                Some((seq, ended, met))
            }
            _ => None,
        };
        slot.bursts_started = b.bursts_started;
        slot.bursts_met = b.bursts_met_deadline;
        let name = slot.name.clone();
        if let Some((seq, ended, met)) = close {
            if let Some(r) = self.bursts.get_mut(seq) {
                r.ended_ms = Some(ended);
                r.met_deadline = met;
            }
        }
        if let (true, Some(started_ms)) = (restarted, b.started_ms) {
            let record = BurstRecord {
                queue: name,
                started_ms,
                deadline_at_ms: b.deadline_at_ms,
                ended_ms: None,
                guaranteed_share,
                met_deadline: None,
            };
            let seq = self.bursts.push(record);
            self.slots[qi].as_mut().expect("tracked above").open_burst = Some(seq);
        }
    }

    /// The recent end of the history, for a snapshot: the newest bursts and admission
    /// decisions that fit, then whole samples, newest first, in the room left (the newest at
    /// least, cut to the entries that fit, as a sample of too many queues is).
    pub fn tail(&self) -> HistoryTail {
        let bursts = newest(&self.bursts.items, Room { records: TAIL_BURSTS, bytes: TAIL_BURST_BYTES });
        let first_kept = self.bursts.pushed - bursts.len() as u64;
        let open_bursts: Vec<OpenBurst> = self
            .slots
            .iter()
            .flatten()
            .filter_map(|s| {
                let burst = s.open_burst?.checked_sub(first_kept)? as usize;
                Some(OpenBurst { burst, bursts_started: s.bursts_started, bursts_met: s.bursts_met })
            })
            .collect();
        let admissions = newest(&self.admissions.items, Room { records: TAIL_ADMISSIONS, bytes: TAIL_ADMISSION_BYTES });
        let taken = json_len(&(&bursts, &admissions, &open_bursts));
        let mut room = Room { records: TAIL_SAMPLE_ENTRIES, bytes: TAIL_BYTES - taken };
        let mut samples = Vec::new();
        let mut end = self.entries.len();
        for h in self.heads.iter().rev() {
            let start = end - h.entries;
            let mut sample = SampleTail { t_ms: h.t_ms, cluster_share: h.cluster_share, queues: Vec::new() };
            if !room.take(0, &sample) {
                break;
            }
            sample.queues.extend(self.entries.range(start..end).take_while(|e| room.take(1, e)).cloned());
            let whole = sample.queues.len() == h.entries;
            if whole || samples.is_empty() {
                samples.push(sample);
            }
            if !whole {
                break;
            }
            end = start;
        }
        samples.reverse();
        HistoryTail { samples, bursts, admissions, open_bursts }
    }

    /// Puts a snapshot's tail back into a history that has taken no sample yet (a scheduler
    /// being restored), before the admission decisions it recorded already. The bursts still on
    /// are tracked again for the queues of `state` that have their names.
    pub fn restore(&mut self, tail: &HistoryTail, state: &ClusterState) {
        let made = std::mem::take(&mut self.admissions.items);
        for a in tail.admissions.iter().cloned().chain(made) {
            self.admissions.push(a);
        }
        for s in &tail.samples {
            self.heads.push_back(SampleHead { t_ms: s.t_ms, cluster_share: s.cluster_share, entries: s.queues.len() });
            self.entries.extend(s.queues.iter().cloned());
        }
        if let Some(last) = self.heads.back() {
            self.next_sample_ms = last.t_ms.saturating_add(self.interval_ms);
        }
        let first = self.bursts.pushed;
        for b in &tail.bursts {
            self.bursts.push(b.clone());
        }
        for o in &tail.open_bursts {
            let Some(&qi) = state.queue_index.get(&*tail.bursts[o.burst].queue) else { continue };
            let slot = self.slot(qi, &state.queues[qi]);
            slot.bursts_started = o.bursts_started;
            slot.bursts_met = o.bursts_met;
            slot.open_burst = Some(first + o.burst as u64);
        }
    }

    /// The history as JSON: samples taken after `since_ms` (oldest first), every burst and
    /// admission decision kept. `now_ms` is the core's clock.
    pub fn to_json(&self, now_ms: i64, since_ms: i64) -> String {
        let skip = self.heads.iter().take_while(|h| h.t_ms <= since_ms).count();
        let mut offset: usize = self.heads.iter().take(skip).map(|h| h.entries).sum();
        let samples = self
            .heads
            .iter()
            .skip(skip)
            .map(|h| {
                let queues = self.entries.range(offset..offset + h.entries).collect();
                offset += h.entries;
                SampleDoc { t_ms: h.t_ms, cluster_share: h.cluster_share, queues }
            })
            .collect();
        let doc = HistoryDoc {
            now_ms,
            sample_interval_ms: self.interval_ms,
            samples,
            bursts: &self.bursts.items,
            admissions: &self.admissions.items,
        };
        serde_json::to_string(&doc).expect("history serialises")
    }
}
