//! Identifiers and scalar keys every layer shares: who a node, app, queue, allocation or
//! location is, and the bound on allocation ids.

/// Caller-chosen node id; any value: nothing is indexed by it.
pub type NodeId = u32;
/// Caller-chosen application key (one per application attempt in YARN).
pub type AppKey = u64;
/// Index of a queue in the cluster state's queue vector; stable for the queue's lifetime.
pub type QueueIdx = usize;
/// Index of an application in the app slab; stable while the app lives.
pub type AppIdx = usize;
/// Core-assigned allocation id, unique per scheduler instance and below [`MAX_ALLOCATION_ID`].
pub type AllocationId = u64;
/// YARN request priority: a lower number is served first.
pub type Priority = i32;
/// An interned host or rack name. The caller interns; the core only compares ids.
pub type LocationId = u32;

/// The id of YARN's `*` resource name.
pub const ANY: LocationId = 0;

/// Allocation ids must stay below this, so that every id is exact as a JSON number (a double)
/// in status and hints replies.
pub const MAX_ALLOCATION_ID: AllocationId = 1 << 40;
