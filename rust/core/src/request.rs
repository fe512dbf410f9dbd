//! An application's outstanding asks with YARN 2.7 semantics.
//!
//! YARN keeps, per application and priority, a table from resource name (a host, a rack, or
//! `*` for anywhere) to an outstanding container count. Each ask *replaces* the previous count
//! for its (priority, name). `relaxLocality = false` on an entry forbids allocating at that
//! level: on the rack entry it forbids rack-local placement, on `*` it forbids off-switch.
//! An allocation decrements the entries it satisfies (node, its rack and `*` for node-local;
//! rack and `*` for rack-local; `*` for off-switch), as the RM's `AppSchedulingInfo` does, so the
//! shim's copy of the table stays in step.

use crate::config::Settings;
use crate::error::{CoreError, Result};
use crate::ids::{LocationId, Priority, ANY};
use crate::resource::Resources;

/// How close to its data a container was placed.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Locality {
    NodeLocal = 0,
    RackLocal = 1,
    OffSwitch = 2,
}

/// Where and what one container of an app could start as on a node.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Placement {
    pub priority: Priority,
    pub locality: Locality,
    pub resources: Resources,
}

/// One ask record as the RM sends it.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Ask {
    pub priority: Priority,
    pub location: LocationId,
    pub num_containers: i64,
    pub relax_locality: bool,
    pub capability: Resources,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Outstanding {
    count: u32,
    relax: bool,
}

/// All asks at one priority.
#[derive(Clone, Debug)]
pub struct PriorityAsks {
    pub priority: Priority,
    /// Normalised capability of the `*` entry; YARN requires one capability per priority.
    pub capability: Resources,
    any: Outstanding,
    /// Host and rack entries, sorted by location id for binary search.
    locations: Vec<(LocationId, Outstanding)>,
}

impl PriorityAsks {
    pub fn pending(&self) -> u32 {
        self.any.count
    }

    fn location(&self, id: LocationId) -> Option<Outstanding> {
        self.locations.binary_search_by_key(&id, |e| e.0).ok().map(|i| self.locations[i].1)
    }

    fn set_location(&mut self, id: LocationId, entry: Outstanding) {
        match self.locations.binary_search_by_key(&id, |e| e.0) {
            Ok(i) if entry.count == 0 => {
                self.locations.remove(i);
            }
            Ok(i) => self.locations[i].1 = entry,
            Err(_) if entry.count == 0 => {}
            Err(i) => self.locations.insert(i, (id, entry)),
        }
    }

    fn decrement(&mut self, id: LocationId) {
        if let Ok(i) = self.locations.binary_search_by_key(&id, |e| e.0) {
            let e = &mut self.locations[i].1;
            e.count = e.count.saturating_sub(1);
            if e.count == 0 {
                self.locations.remove(i);
            }
        }
    }

    /// Where a container of this priority may go on a node, if anywhere.
    ///
    /// Node-local takes an outstanding entry for the node's rack too, as FairScheduler's
    /// assignment does: the RM's bookkeeping decrements that rack entry, and an AM whose rack
    /// names differ from the RM's topology (Hadoop's SLS names racks as its trace does) has
    /// none. Such a node request then counts off-switch, where `*` allows it.
    fn placement(&self, host: LocationId, rack: LocationId) -> Option<Locality> {
        if self.any.count == 0 {
            return None;
        }
        let rack_entry = self.location(rack).filter(|e| e.count > 0);
        if rack_entry.is_some() && self.location(host).is_some_and(|e| e.count > 0) {
            return Some(Locality::NodeLocal);
        }
        if rack_entry.is_some_and(|e| e.relax) {
            return Some(Locality::RackLocal);
        }
        self.any.relax.then_some(Locality::OffSwitch)
    }
}

/// The ask table of one application.
#[derive(Clone, Debug, Default)]
pub struct AskTable {
    /// Sorted by priority, highest first (lowest number).
    by_priority: Vec<PriorityAsks>,
    blacklist: Vec<LocationId>,
    pending_containers: u64,
    pending_resources: Resources,
    /// Component-wise minimum capability over priorities with pending containers: a node whose
    /// free space does not cover it cannot take anything from this app.
    min_capability: Option<Resources>,
}

/// Rounds a request up to a multiple of the minimum allocation, as YARN's normaliser does, and
/// rejects negative or over-maximum requests.
pub fn normalize(app: u64, capability: Resources, settings: &Settings) -> Result<Resources> {
    if capability.any_negative() {
        return Err(CoreError::InvalidRequest { app, reason: format!("negative capability {capability}") });
    }
    if !capability.fits_in(&settings.max_allocation) {
        return Err(CoreError::InvalidRequest {
            app,
            reason: format!("capability {capability} exceeds the maximum allocation {}", settings.max_allocation),
        });
    }
    let mut out = capability;
    for (v, step) in out.0.iter_mut().zip(settings.min_allocation.0.iter()) {
        if *step > 0 {
            *v = ((*v).max(*step) + step - 1) / step * step;
        }
    }
    Ok(out.min(&settings.max_allocation))
}

impl AskTable {
    pub fn pending_containers(&self) -> u64 {
        self.pending_containers
    }

    pub fn pending_resources(&self) -> Resources {
        self.pending_resources
    }

    pub fn min_capability(&self) -> Option<Resources> {
        self.min_capability
    }

    pub fn priorities(&self) -> &[PriorityAsks] {
        &self.by_priority
    }

    /// Applies a batch of asks atomically: either every record is valid and applied, or the
    /// table is left exactly as it was.
    pub fn update(&mut self, app: u64, asks: &[Ask], settings: &Settings) -> Result<()> {
        let mut normalized = Vec::with_capacity(asks.len());
        for ask in asks {
            if ask.num_containers < 0 || ask.num_containers > u32::MAX as i64 {
                return Err(CoreError::InvalidRequest {
                    app,
                    reason: format!(
                        "priority {} location {}: container count {} out of range",
                        ask.priority, ask.location, ask.num_containers
                    ),
                });
            }
            normalized.push(normalize(app, ask.capability, settings)?);
        }
        for (ask, capability) in asks.iter().zip(normalized) {
            let idx = match self.by_priority.binary_search_by_key(&ask.priority, |p| p.priority) {
                Ok(i) => i,
                Err(i) => {
                    self.by_priority.insert(
                        i,
                        PriorityAsks {
                            priority: ask.priority,
                            capability,
                            any: Outstanding { count: 0, relax: true },
                            locations: Vec::new(),
                        },
                    );
                    i
                }
            };
            let entry = Outstanding { count: ask.num_containers as u32, relax: ask.relax_locality };
            let p = &mut self.by_priority[idx];
            if ask.location == ANY {
                p.any = entry;
                p.capability = capability;
            } else {
                p.set_location(ask.location, entry);
            }
        }
        self.by_priority.retain(|p| p.any.count > 0 || !p.locations.is_empty());
        self.recompute_totals();
        Ok(())
    }

    /// Every location id the table refers to: its host and rack entries and its blacklist.
    pub fn locations(&self) -> impl Iterator<Item = LocationId> + '_ {
        self.by_priority.iter().flat_map(|p| p.locations.iter().map(|e| e.0)).chain(self.blacklist.iter().copied())
    }

    pub fn update_blacklist(&mut self, additions: &[LocationId], removals: &[LocationId]) {
        for loc in additions {
            if let Err(i) = self.blacklist.binary_search(loc) {
                self.blacklist.insert(i, *loc);
            }
        }
        for loc in removals {
            if let Ok(i) = self.blacklist.binary_search(loc) {
                self.blacklist.remove(i);
            }
        }
    }

    fn recompute_totals(&mut self) {
        self.pending_containers = 0;
        self.pending_resources = Resources::ZERO;
        self.min_capability = None;
        for p in self.by_priority.iter().filter(|p| p.any.count > 0) {
            self.pending_containers += p.any.count as u64;
            self.pending_resources += p.capability.times(p.any.count as i64);
            self.min_capability = Some(self.min_capability.map_or(p.capability, |m| m.min(&p.capability)));
        }
    }

    /// Every priority (highest first) with a container that fits `free` on the node at
    /// (`host`, `rack`), honouring locality constraints and the blacklist.
    #[inline]
    pub fn placements<'a>(
        &'a self,
        host: LocationId,
        rack: LocationId,
        free: &'a Resources,
    ) -> impl Iterator<Item = Placement> + 'a {
        let possible = self.pending_containers > 0
            && self.min_capability.is_some_and(|m| m.fits_in(free))
            && (self.blacklist.is_empty()
                || (self.blacklist.binary_search(&host).is_err() && self.blacklist.binary_search(&rack).is_err()));
        let candidates = if possible { &self.by_priority[..] } else { &[] };
        candidates.iter().filter_map(move |p| {
            if !p.capability.fits_in(free) {
                return None;
            }
            p.placement(host, rack).map(|locality| Placement {
                priority: p.priority,
                locality,
                resources: p.capability,
            })
        })
    }

    /// The first of [`AskTable::placements`]: YARN's highest-priority-first order.
    #[inline]
    pub fn find(&self, host: LocationId, rack: LocationId, free: &Resources) -> Option<Placement> {
        self.placements(host, rack, free).next()
    }

    /// Records that one container of `priority` was placed with `locality` on (`host`, `rack`).
    pub fn allocate(&mut self, priority: Priority, locality: Locality, host: LocationId, rack: LocationId) {
        let Ok(idx) = self.by_priority.binary_search_by_key(&priority, |p| p.priority) else {
            return;
        };
        let p = &mut self.by_priority[idx];
        if p.any.count == 0 {
            return;
        }
        p.any.count -= 1;
        match locality {
            Locality::NodeLocal => {
                p.decrement(host);
                p.decrement(rack);
            }
            Locality::RackLocal => p.decrement(rack),
            Locality::OffSwitch => {}
        }
        self.pending_containers -= 1;
        self.pending_resources -= p.capability;
        if p.any.count == 0 {
            if p.locations.is_empty() {
                self.by_priority.remove(idx);
            }
            self.recompute_totals();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST1: LocationId = 11;
    const HOST2: LocationId = 12;
    const RACK1: LocationId = 21;
    const RACK2: LocationId = 22;

    fn ask(priority: Priority, location: LocationId, n: i64, relax: bool, mem: i64) -> Ask {
        Ask { priority, location, num_containers: n, relax_locality: relax, capability: Resources::new(mem, 1) }
    }

    fn table(asks: &[Ask]) -> AskTable {
        let mut t = AskTable::default();
        t.update(1, asks, &Settings::default()).unwrap();
        t
    }

    const BIG: Resources = Resources::new(1 << 20, 1 << 10);

    #[test]
    fn normalizes_up_to_multiples_of_the_minimum() {
        let s = Settings::default();
        assert_eq!(normalize(1, Resources::new(1500, 1), &s).unwrap(), Resources::new(2048, 1));
        assert_eq!(normalize(1, Resources::new(0, 0), &s).unwrap(), Resources::new(1024, 1));
        assert!(normalize(1, Resources::new(9000, 1), &s).is_err());
        assert!(normalize(1, Resources::new(-1, 1), &s).is_err());
    }

    #[test]
    fn lower_priority_number_is_served_first() {
        let t = table(&[ask(20, ANY, 3, true, 1024), ask(5, ANY, 1, true, 2048)]);
        assert_eq!(t.find(HOST1, RACK1, &BIG).unwrap().priority, 5);
        assert_eq!(t.pending_containers(), 4);
        assert_eq!(t.pending_resources(), Resources::new(3 * 1024 + 2048, 4));
    }

    #[test]
    fn node_local_is_preferred_and_decrements_all_levels() {
        let mut t = table(&[ask(1, HOST1, 1, true, 1024), ask(1, RACK1, 1, true, 1024), ask(1, ANY, 2, true, 1024)]);
        assert_eq!(t.find(HOST1, RACK1, &BIG).unwrap().locality, Locality::NodeLocal);
        assert_eq!(t.find(HOST2, RACK1, &BIG).unwrap().locality, Locality::RackLocal);
        assert_eq!(t.find(HOST2, RACK2, &BIG).unwrap().locality, Locality::OffSwitch);
        t.allocate(1, Locality::NodeLocal, HOST1, RACK1);
        assert_eq!(t.pending_containers(), 1);
        // The node and rack entries are used up: what is left is off-switch anywhere.
        assert_eq!(t.find(HOST1, RACK1, &BIG).unwrap().locality, Locality::OffSwitch);
    }

    #[test]
    fn a_node_entry_without_its_rack_entry_is_off_switch() {
        // The AM named the node's rack differently from the RM (RACK2 holds the count).
        let mut t = table(&[ask(1, HOST1, 2, true, 1024), ask(1, RACK2, 2, true, 1024), ask(1, ANY, 2, true, 1024)]);
        assert_eq!(t.find(HOST1, RACK1, &BIG).unwrap().locality, Locality::OffSwitch);
        t.allocate(1, Locality::OffSwitch, HOST1, RACK1);
        assert_eq!(t.pending_containers(), 1);
        // Without `*` relaxable there is nowhere such a request may go.
        let strict = table(&[ask(1, HOST1, 1, true, 1024), ask(1, RACK2, 1, true, 1024), ask(1, ANY, 1, false, 1024)]);
        assert!(strict.find(HOST1, RACK1, &BIG).is_none());
    }

    #[test]
    fn relax_locality_false_pins_containers() {
        // Strict node request: node entry, rack and * not relaxable.
        let t = table(&[ask(1, HOST1, 1, true, 1024), ask(1, RACK1, 1, false, 1024), ask(1, ANY, 1, false, 1024)]);
        assert!(t.find(HOST1, RACK1, &BIG).is_some());
        assert!(t.find(HOST2, RACK1, &BIG).is_none());
        assert!(t.find(HOST2, RACK2, &BIG).is_none());
    }

    #[test]
    fn blacklist_and_fit_are_respected() {
        let mut t = table(&[ask(1, ANY, 1, true, 2048)]);
        assert!(t.find(HOST1, RACK1, &Resources::new(1024, 8)).is_none());
        t.update_blacklist(&[RACK1], &[]);
        assert!(t.find(HOST1, RACK1, &BIG).is_none());
        assert!(t.find(HOST2, RACK2, &BIG).is_some());
        t.update_blacklist(&[], &[RACK1]);
        assert!(t.find(HOST1, RACK1, &BIG).is_some());
    }

    #[test]
    fn invalid_batch_changes_nothing() {
        let mut t = table(&[ask(1, ANY, 2, true, 1024)]);
        let err = t
            .update(1, &[ask(2, ANY, 1, true, 1024), ask(3, ANY, 1, true, 1 << 30)], &Settings::default())
            .unwrap_err();
        assert!(err.to_string().contains("exceeds the maximum"), "{err}");
        assert_eq!(t.pending_containers(), 2);
        assert!(t.update(1, &[ask(2, ANY, -1, true, 1024)], &Settings::default()).is_err());
        assert_eq!(t.priorities().len(), 1);
    }

    #[test]
    fn replacing_a_count_with_zero_cancels() {
        let mut t = table(&[ask(1, ANY, 5, true, 1024)]);
        t.update(1, &[ask(1, ANY, 0, true, 1024)], &Settings::default()).unwrap();
        assert_eq!(t.pending_containers(), 0);
        assert!(t.priorities().is_empty());
        assert!(t.find(HOST1, RACK1, &BIG).is_none());
    }
}
